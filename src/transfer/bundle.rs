//! The bundle: one gzip'd tar archive holding every file a Run writes into a Box, sent in one
//! write request and extracted at `/`.
//!
//! Transfer layer, pure. Entry paths are relative (no leading `/`) and validated here; the
//! archive holds regular-file entries only (the Box side creates parent directories). mtime is
//! 0 so equal inputs give byte-identical archives.
//!
//! Source: vercel-sandbox-protocol.md §7.4 (Write files), §12; docs/internals.md "Box layout".

use crate::error::{Error, ErrorCode, Result};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

/// One file of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry {
    /// Path relative to the extract root (`/` in a Box), `/`-separated, e.g.
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
            format!(
                "Invalid file path {}: {why}.",
                serde_json::Value::from(path)
            ),
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
    } else if path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        Some("it has a '.' or '..' segment")
    } else {
        None
    }
}

/// Writes `entries` as one gzip-compressed tar archive (ustar headers; paths over 100 bytes use
/// the ustar prefix field or a GNU long-name entry), in the given order.
///
/// Each entry is a regular file with uid/gid 0 and mtime 0; no directory entries are written.
///
/// # Errors
/// `InvalidArgument` when a path fails [`validate_relative_path`]; `RuntimeError` if the
/// in-memory encoder fails.
pub fn write_tar_gz(entries: &[BundleEntry]) -> Result<Vec<u8>> {
    for entry in entries {
        validate_relative_path(&entry.path)?;
    }
    let encoder = GzEncoder::new(Vec::new(), Compression::default());
    let mut builder = tar::Builder::new(encoder);
    for entry in entries {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(entry.bytes.len() as u64);
        header.set_mode(entry.mode & 0o7777);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        builder
            .append_data(&mut header, &entry.path, entry.bytes.as_slice())
            .map_err(|err| archive_error(&entry.path, err))?;
    }
    let encoder = builder.into_inner().map_err(|err| archive_error("", err))?;
    let mut bytes = encoder.finish().map_err(|err| archive_error("", err))?;
    bytes.flush().map_err(|err| archive_error("", err))?;
    Ok(bytes)
}

fn archive_error(path: &str, err: std::io::Error) -> Error {
    let message = if path.is_empty() {
        "Failed to write the file bundle.".to_owned()
    } else {
        format!(
            "Failed to add {} to the file bundle.",
            serde_json::Value::from(path)
        )
    };
    Error::new(ErrorCode::RuntimeError, message).with_source(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read_back(archive: &[u8]) -> Vec<(String, Vec<u8>, u32, u64)> {
        let decoder = flate2::read::GzDecoder::new(archive);
        let mut archive = tar::Archive::new(decoder);
        let mut out = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            assert_eq!(entry.header().entry_type(), tar::EntryType::Regular);
            let path = entry.path().unwrap().to_str().unwrap().to_owned();
            let mode = entry.header().mode().unwrap();
            let mtime = entry.header().mtime().unwrap();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            out.push((path, bytes, mode, mtime));
        }
        out
    }

    #[test]
    fn round_trip() {
        let entries = vec![
            BundleEntry {
                path: "vercel/sandbox/project/package.json".into(),
                bytes: b"{}".to_vec(),
                mode: 0o644,
            },
            BundleEntry {
                path: "vercel/sandbox/.vite-hub/run.sh".into(),
                bytes: b"#!/bin/sh\n".to_vec(),
                mode: 0o755,
            },
            BundleEntry {
                path: "empty".into(),
                bytes: Vec::new(),
                mode: 0o600,
            },
        ];
        let archive = write_tar_gz(&entries).unwrap();
        assert_eq!(&archive[..2], &[0x1f, 0x8b]);
        let back = read_back(&archive);
        assert_eq!(back.len(), 3);
        for (entry, (path, bytes, mode, mtime)) in entries.iter().zip(back) {
            assert_eq!(
                (&entry.path, &entry.bytes, entry.mode, 0),
                (&path, &bytes, mode, mtime)
            );
        }
        assert_eq!(write_tar_gz(&entries).unwrap(), archive, "reproducible");
    }

    #[test]
    fn long_paths() {
        let long_name = format!("vercel/sandbox/project/{}.txt", "n".repeat(150));
        let deep = format!("vercel/sandbox/{}/file.mjs", ["segment"; 50].join("/"));
        let entries = vec![
            BundleEntry {
                path: long_name.clone(),
                bytes: b"a".to_vec(),
                mode: 0o644,
            },
            BundleEntry {
                path: deep.clone(),
                bytes: b"b".to_vec(),
                mode: 0o644,
            },
        ];
        let back = read_back(&write_tar_gz(&entries).unwrap());
        assert_eq!(back[0].0, long_name);
        assert_eq!(back[1].0, deep);
        assert_eq!(back[1].1, b"b");
    }

    #[test]
    fn bad_paths_are_invalid_arguments() {
        let cases = [
            ("", "Invalid file path \"\": it is empty."),
            (
                "/etc/passwd",
                "Invalid file path \"/etc/passwd\": it must be relative (no leading '/').",
            ),
            (
                "a/../b",
                "Invalid file path \"a/../b\": it has a '.' or '..' segment.",
            ),
            (
                "..",
                "Invalid file path \"..\": it has a '.' or '..' segment.",
            ),
            (
                "./a",
                "Invalid file path \"./a\": it has a '.' or '..' segment.",
            ),
            (
                "a//b",
                "Invalid file path \"a//b\": it has an empty segment.",
            ),
            ("a/", "Invalid file path \"a/\": it has an empty segment."),
            (
                "a\0b",
                "Invalid file path \"a\\u0000b\": it contains a NUL byte.",
            ),
        ];
        for (path, message) in cases {
            let entry = BundleEntry {
                path: path.into(),
                bytes: Vec::new(),
                mode: 0o644,
            };
            let err = write_tar_gz(&[entry]).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
            assert_eq!(err.message(), message);
        }
        validate_relative_path("a/b.c/.hidden/x..y").unwrap();
    }
}
