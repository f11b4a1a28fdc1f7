//! The glob subset of `pnpm-workspace.yaml` `packages:` patterns, matched against directory
//! paths relative to the workspace root.
//!
//! Workspace patterns are short directory globs, so this matcher supports exactly what pnpm
//! workspaces use in practice (a general glob crate would bring a regex engine for it):
//!
//! * `*` — any run of characters inside one path segment (not `/`);
//! * `?` — one character other than `/`;
//! * `**` as a whole segment — zero or more segments;
//! * everything else literally. A leading `./` and trailing `/` are ignored.
//!
//! Brace sets `{a,b}`, classes `[...]` and extglobs `+(...)` are rejected with a message instead
//! of being matched wrongly. A leading `!` makes a negation (see [`WorkspaceGlobs`]).

/// A set of `packages:` patterns: a directory is a workspace package when it matches at least one
/// positive pattern and no `!` negation (pnpm/fast-glob semantics: negations apply whatever their
/// position in the list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceGlobs {
    include: Vec<Vec<String>>,
    exclude: Vec<Vec<String>>,
}

impl WorkspaceGlobs {
    /// Parses the patterns.
    ///
    /// # Errors
    /// The detail of an `InvalidArgument` message (naming the pattern) for an empty pattern, an
    /// absolute one, or one using unsupported glob syntax (`{`, `}`, `[`, `]`, `(`, `)`).
    pub fn parse(patterns: &[String]) -> Result<WorkspaceGlobs, String> {
        let mut globs = WorkspaceGlobs { include: Vec::new(), exclude: Vec::new() };
        for pattern in patterns {
            let (negated, body) = match pattern.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, pattern.as_str()),
            };
            let quoted = crate::error::quoted(pattern);
            let body = body.strip_prefix("./").unwrap_or(body).trim_end_matches('/');
            if body.is_empty() {
                return Err(format!("pattern {quoted} is empty; list directories such as \"packages/*\"."));
            }
            if body.starts_with('/') {
                return Err(format!("pattern {quoted} is absolute; patterns are relative to the workspace root."));
            }
            if body.contains(['{', '}', '[', ']', '(', ')']) {
                return Err(format!(
                    "pattern {quoted} uses glob syntax that is not supported here ({{a,b}}, [..] or extglobs); use *, ** and ? or list the directories."
                ));
            }
            let segments = body.split('/').map(str::to_owned).collect();
            if negated {
                globs.exclude.push(segments);
            } else {
                globs.include.push(segments);
            }
        }
        Ok(globs)
    }

    /// Whether the directory `path` (relative, `/`-separated, `""` = the root) is a workspace
    /// package according to the patterns.
    pub fn matches(&self, path: &str) -> bool {
        let segments: Vec<&str> = if path.is_empty() { Vec::new() } else { path.split('/').collect() };
        let hit = |patterns: &Vec<Vec<String>>| patterns.iter().any(|p| match_segments(p, &segments));
        hit(&self.include) && !hit(&self.exclude)
    }
}

fn match_segments(pattern: &[String], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, tail)) => match_segment(first.as_bytes(), segment.as_bytes()) && match_segments(rest, tail),
            None => false,
        },
    }
}

/// `*` and `?` inside one segment (bytes; `?` matches one byte, enough for ASCII package dirs).
fn match_segment(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| match_segment(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && match_segment(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && match_segment(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(patterns: &[&str]) -> WorkspaceGlobs {
        WorkspaceGlobs::parse(&patterns.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn star_matches_one_segment() {
        let g = globs(&["packages/*"]);
        assert!(g.matches("packages/a"));
        assert!(g.matches("packages/util-lib"));
        assert!(!g.matches("packages"));
        assert!(!g.matches("packages/a/b"));
        assert!(!g.matches("apps/a"));
        assert!(!g.matches(""));
    }

    #[test]
    fn double_star_matches_any_depth_and_literals_match_exactly() {
        let g = globs(&["apps/**", "./tools/cli/", "lib-?"]);
        assert!(g.matches("apps"));
        assert!(g.matches("apps/web"));
        assert!(g.matches("apps/web/inner"));
        assert!(g.matches("tools/cli"));
        assert!(!g.matches("tools/cli2"));
        assert!(g.matches("lib-a"));
        assert!(!g.matches("lib-ab"));
        let g = globs(&["**/pkg-*"]);
        assert!(g.matches("pkg-a"));
        assert!(g.matches("x/y/pkg-b"));
        assert!(!g.matches("x/y/other"));
    }

    #[test]
    fn negations_win_whatever_their_position() {
        let g = globs(&["!packages/private-*", "packages/*", "!**/test/**"]);
        assert!(g.matches("packages/a"));
        assert!(!g.matches("packages/private-x"));
        let g = globs(&["packages/**", "!**/test/**"]);
        assert!(!g.matches("packages/test"));
        assert!(!g.matches("packages/a/test/fixture"));
        assert!(g.matches("packages/a/testing"));
        assert!(!globs(&["!packages/*"]).matches("packages/a"), "negations alone include nothing");
    }

    #[test]
    fn unsupported_and_malformed_patterns_are_errors() {
        let parse = |p: &str| WorkspaceGlobs::parse(&[p.to_owned()]).unwrap_err();
        assert!(parse("packages/{a,b}").contains("\"packages/{a,b}\" uses glob syntax that is not supported"));
        assert!(parse("packages/[ab]").contains("not supported"));
        assert_eq!(parse("!"), "pattern \"!\" is empty; list directories such as \"packages/*\".");
        assert_eq!(parse("/abs/*"), "pattern \"/abs/*\" is absolute; patterns are relative to the workspace root.");
    }
}
