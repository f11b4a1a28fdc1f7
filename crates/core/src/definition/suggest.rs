//! Why `runSandbox(name)` found no Definition, as one message (code `SANDBOX_NOT_FOUND`).
//!
//! Pure: the runtime's `src/api/mod.rs` gathers the facts (is a registry installed, which names it and the
//! programmatic registry hold, which Definitions the dev registry refused and why) and this
//! module decides what to say: the fix when there is no registry at all, the reason when the name
//! is an invalid Definition, otherwise the closest names and a sample of the registered ones.

use std::collections::BTreeSet;

/// How many registered names a message lists at most.
pub const LISTED_NAMES: usize = 10;

/// How many closest names a message proposes at most.
pub const CLOSEST_NAMES: usize = 3;

/// What `runSandbox` knew when the name was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss<'a> {
    /// No Definition is registered and no registry loader is installed (no Vite plugin, or the
    /// runtime module was loaded around it).
    NoRegistry,
    /// The registry knows the name but refused its Definition (dev: the reason it failed).
    Invalid {
        /// The reason, as the generator reported it.
        reason: &'a str,
    },
    /// Neither has the name, in production: no names are listed nor suggested (a route that takes
    /// the name from its client would hand them out).
    Unlisted,
    /// Neither the registry nor `registerSandbox` has the name; `names` are every name they have.
    Unknown {
        /// The registered names (any order, duplicates allowed).
        names: &'a [String],
    },
}

/// The `SANDBOX_NOT_FOUND` message for `name`.
pub fn not_found_message(name: &str, miss: &Miss<'_>) -> String {
    let head = format!("Sandbox \"{name}\" was not found");
    match miss {
        Miss::NoRegistry => format!(
            "{head}: no Definition is registered and no registry is installed. With Vite, add hubSandbox() from \
             '@vite-hub/sandbox/vite' to the plugins of your Vite config. If it is there, this server code loaded \
             @vite-hub/sandbox around the plugin (a bundler or module runner that externalized it without Vite's \
             resolution): import it only from server code that Vite builds or serves. Without Vite, call \
             registerSandbox() or registerSandboxDirectory() before runSandbox()."
        ),
        Miss::Invalid { reason } => {
            format!("{head}: its Definition is invalid, so it is not in the registry: {reason}")
        }
        Miss::Unlisted => format!("{head}."),
        Miss::Unknown { names } => {
            let sorted: Vec<&str> =
                names.iter().map(|name| name.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
            if sorted.is_empty() {
                return format!("{head}: the registry has no Definitions yet (server/sandboxes/<name>/ or a <path>.sandbox.ts file).");
            }
            let closest = closest_names(name, &sorted);
            let mut message = format!("{head}.");
            if !closest.is_empty() {
                message.push_str(&format!(" Did you mean {}?", quote_list(&closest, " or ")));
            }
            let listed: Vec<&str> = sorted.iter().take(LISTED_NAMES).copied().collect();
            message.push_str(&format!(" Registered: {}", quote_list(&listed, ", ")));
            if sorted.len() > LISTED_NAMES {
                message.push_str(&format!(" and {} more", sorted.len() - LISTED_NAMES));
            }
            message.push('.');
            message
        }
    }
}

/// The names closest to `name` (at most [`CLOSEST_NAMES`]), best first: a case-insensitive
/// optimal-string-alignment distance (insertions, deletions, substitutions, adjacent
/// transpositions) of at most a third of the longer name (at least 1, at most 3), or a name that
/// contains `name` or is contained in it (at least 3 characters), or the same last `/` segment.
/// Ties keep `names`' order.
pub fn closest_names<'a>(name: &str, names: &[&'a str]) -> Vec<&'a str> {
    // Names are ASCII ([A-Za-z0-9._-] segments): ASCII case folding is exact.
    let wanted: Vec<char> = name.to_ascii_lowercase().chars().collect();
    let wanted_text: String = wanted.iter().collect();
    let wanted_last = wanted_text.rsplit('/').next().unwrap_or("");
    // The best CLOSEST_NAMES so far, by (score, index): kept by insertion, no slice sort.
    let mut scored: Vec<(usize, usize, &'a str)> = Vec::new();
    let mut keep = |entry: (usize, usize, &'a str)| {
        let at = scored.iter().position(|kept| (kept.0, kept.1) > (entry.0, entry.1)).unwrap_or(scored.len());
        if at < CLOSEST_NAMES {
            scored.insert(at, entry);
            scored.truncate(CLOSEST_NAMES);
        }
    };
    for (index, candidate) in names.iter().enumerate() {
        let lower = candidate.to_ascii_lowercase();
        if lower == wanted_text {
            keep((0, index, candidate));
            continue;
        }
        let chars: Vec<char> = lower.chars().collect();
        let distance = edit_distance(&wanted, &chars);
        let budget = (wanted.len().max(chars.len()) / 3).clamp(1, 3);
        let contains =
            wanted.len().min(chars.len()) >= 3 && (lower.contains(&wanted_text) || wanted_text.contains(&lower));
        let same_last = !wanted_last.is_empty() && lower.rsplit('/').next() == Some(wanted_last);
        if distance <= budget {
            keep((distance, index, candidate));
        } else if contains || same_last {
            keep((budget + 1, index, candidate));
        }
    }
    scored.into_iter().map(|(_, _, candidate)| candidate).collect()
}

/// Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let (n, m) = (a.len(), b.len());
    let mut rows = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=m).collect();
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[n][m]
}

fn quote_list(names: &[&str], separator: &str) -> String {
    names.iter().map(|name| format!("\"{name}\"")).collect::<Vec<_>>().join(separator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn unlisted_names_nothing() {
        assert_eq!(not_found_message("helo", &Miss::Unlisted), "Sandbox \"helo\" was not found.");
    }

    #[test]
    fn a_typo_proposes_the_close_names_best_first() {
        let names = ["release-notes", "slugify-title", "order-summary", "word-count"];
        assert_eq!(closest_names("release-note", &names), vec!["release-notes"]);
        assert_eq!(closest_names("relaese-notes", &names), vec!["release-notes"]);
        assert_eq!(closest_names("Word-Count", &names), vec!["word-count"]);
        assert_eq!(closest_names("slugify", &names), vec!["slugify-title"]);
        assert_eq!(closest_names("shout", &names), Vec::<&str>::new());
        assert_eq!(closest_names("ab", &["ac", "abc", "xyz"]), vec!["ac", "abc"]);
    }

    #[test]
    fn a_nested_name_matches_by_its_last_segment() {
        assert_eq!(closest_names("reports/weekly", &["billing/weekly", "weekly-digest"]), vec!["billing/weekly"]);
        assert_eq!(closest_names("weekly", &["reports/weekly"]), vec!["reports/weekly"]);
    }

    #[test]
    fn at_most_three_closest_names() {
        let names = ["a1", "a2", "a3", "a4"];
        assert_eq!(closest_names("a", &names), vec!["a1", "a2", "a3"]);
    }

    #[test]
    fn the_edit_distance_counts_one_for_a_swap() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edit_distance(&chars("abcd"), &chars("abdc")), 1);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
    }

    #[test]
    fn an_unknown_name_lists_suggestions_then_up_to_ten_names() {
        let names = owned(&["b", "a", "release-notes", "a"]);
        assert_eq!(
            not_found_message("release-note", &Miss::Unknown { names: &names }),
            "Sandbox \"release-note\" was not found. Did you mean \"release-notes\"? Registered: \"a\", \"b\", \"release-notes\"."
        );
        let many: Vec<String> = (0..12).map(|i| format!("job-{i:02}")).collect();
        let message = not_found_message("zzz", &Miss::Unknown { names: &many });
        assert_eq!(
            message,
            "Sandbox \"zzz\" was not found. Registered: \"job-00\", \"job-01\", \"job-02\", \"job-03\", \"job-04\", \"job-05\", \"job-06\", \"job-07\", \"job-08\", \"job-09\" and 2 more."
        );
        assert!(not_found_message("x", &Miss::Unknown { names: &[] }).contains("the registry has no Definitions yet"));
    }

    #[test]
    fn no_registry_names_the_fix_and_an_invalid_definition_its_reason() {
        let message = not_found_message("x", &Miss::NoRegistry);
        assert!(message.contains("add hubSandbox() from '@vite-hub/sandbox/vite'"), "{message}");
        assert!(message.contains("around the plugin"), "{message}");
        assert!(message.contains("registerSandbox()"), "{message}");
        assert_eq!(
            not_found_message("x", &Miss::Invalid { reason: "SANDBOX_INVALID_ARGUMENT: index.mjs:1:12 uses require()" }),
            "Sandbox \"x\" was not found: its Definition is invalid, so it is not in the registry: SANDBOX_INVALID_ARGUMENT: index.mjs:1:12 uses require()"
        );
    }
}
