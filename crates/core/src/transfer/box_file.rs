//! A file written into a Box, and the one rule for the relative paths that name such files (and
//! every file of a Definition).
//!
//! Transfer layer, pure. Providers decide how files travel (Vercel: one tar.gz; see
//! `transfer::tar`); the paths they get are always checked here first.

use crate::error::{Error, ErrorCode, Result};

/// One file written into a Box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxFile {
    /// Path relative to the Box root `/`, `/`-separated, e.g.
    /// `vercel/sandbox/project/index.mjs`. Validated by [`validate_relative_path`].
    pub path: String,
    /// The file content.
    pub bytes: Vec<u8>,
    /// Unix permission bits, e.g. `0o644` or `0o755` (only `0o7777` is kept).
    pub mode: u32,
}

/// Checks that `path` is a safe relative file path.
///
/// Allowed: non-empty, `/`-separated segments, no leading `/`, no empty (`a//b`, trailing `/`),
/// `.` or `..` segment, no NUL byte.
///
/// # Errors
/// `InvalidArgument` naming the path and the rule.
pub fn validate_relative_path(path: &str) -> Result<()> {
    match path_problem(path) {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("Invalid file path {}: {why}.", crate::error::quoted(path)),
        )),
    }
}

/// Why `path` is not a safe relative file path (see [`validate_relative_path`]), or `None`.
pub(crate) fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        Some("it is empty")
    } else if path.contains('\0') {
        Some("it contains a NUL byte")
    } else if path.contains('\\') {
        Some("it contains a backslash (use '/' separators)")
    } else if path.starts_with('/') {
        Some("it must be relative (no leading '/')")
    } else if path.split('/').any(|segment| segment.is_empty()) {
        Some("it has an empty segment")
    } else if path.split('/').any(|segment| segment == "." || segment == "..") {
        Some("it has a '.' or '..' segment")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_paths_are_invalid_arguments() {
        let cases = [
            ("", "Invalid file path \"\": it is empty."),
            ("/etc/passwd", "Invalid file path \"/etc/passwd\": it must be relative (no leading '/')."),
            ("a/../b", "Invalid file path \"a/../b\": it has a '.' or '..' segment."),
            ("..", "Invalid file path \"..\": it has a '.' or '..' segment."),
            ("./a", "Invalid file path \"./a\": it has a '.' or '..' segment."),
            ("a//b", "Invalid file path \"a//b\": it has an empty segment."),
            ("a/", "Invalid file path \"a/\": it has an empty segment."),
            ("a\0b", "Invalid file path \"a\\u0000b\": it contains a NUL byte."),
        ];
        for (path, message) in cases {
            let err = validate_relative_path(path).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
            assert_eq!(err.message(), message);
        }
        validate_relative_path("a/b.c/.hidden/x..y").unwrap();
    }
}
