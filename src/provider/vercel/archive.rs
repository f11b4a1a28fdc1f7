//! The Vercel write format: one tar archive holding every file a Run writes into a Box, gzip'd
//! (by the platform, [`crate::transfer::gzip`]), sent in one `fs/write` request and extracted at `/`.
//!
//! Provider layer (Vercel and the local Box host), pure. Entry paths are relative (no leading `/`)
//! and checked with [`validate_relative_path`]; the archive holds regular-file entries only (the
//! Box side creates parent directories). mtime is 0 so equal inputs give byte-identical archives.
//!
//! Source: vercel-sandbox-protocol.md §7.4 (Write files), §12; docs/internals.md "Box layout".

use crate::error::{Error, ErrorCode, Result};
use crate::transfer::box_file::{validate_relative_path, BoxFile};

/// Writes `entries` as one tar archive (ustar headers; paths over 100 bytes use
/// the ustar prefix field or a GNU long-name entry), in the given order.
///
/// Each entry is a regular file with uid/gid 0 and mtime 0; no directory entries are written.
///
/// # Errors
/// `InvalidArgument` when a path fails [`validate_relative_path`]; `RuntimeError` if the
/// in-memory encoder fails.
pub fn write_tar(entries: &[BoxFile]) -> Result<Vec<u8>> {
    for entry in entries {
        validate_relative_path(&entry.path)?;
    }
    let mut builder = tar::Builder::new(Vec::new());
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
    builder.into_inner().map_err(|err| archive_error("", err))
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
        let mut archive = tar::Archive::new(archive);
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
            BoxFile {
                path: "vercel/sandbox/project/package.json".into(),
                bytes: b"{}".to_vec(),
                mode: 0o644,
            },
            BoxFile {
                path: "vercel/sandbox/.vite-hub/run.sh".into(),
                bytes: b"#!/bin/sh\n".to_vec(),
                mode: 0o755,
            },
            BoxFile {
                path: "empty".into(),
                bytes: Vec::new(),
                mode: 0o600,
            },
        ];
        let archive = write_tar(&entries).unwrap();
        assert_eq!(&archive[257..262], b"ustar");
        let back = read_back(&archive);
        assert_eq!(back.len(), 3);
        for (entry, (path, bytes, mode, mtime)) in entries.iter().zip(back) {
            assert_eq!(
                (&entry.path, &entry.bytes, entry.mode, 0),
                (&path, &bytes, mode, mtime)
            );
        }
        assert_eq!(write_tar(&entries).unwrap(), archive, "reproducible");
    }

    #[test]
    fn long_paths() {
        let long_name = format!("vercel/sandbox/project/{}.txt", "n".repeat(150));
        let deep = format!("vercel/sandbox/{}/file.mjs", ["segment"; 50].join("/"));
        let entries = vec![
            BoxFile {
                path: long_name.clone(),
                bytes: b"a".to_vec(),
                mode: 0o644,
            },
            BoxFile {
                path: deep.clone(),
                bytes: b"b".to_vec(),
                mode: 0o644,
            },
        ];
        let back = read_back(&write_tar(&entries).unwrap());
        assert_eq!(back[0].0, long_name);
        assert_eq!(back[1].0, deep);
        assert_eq!(back[1].1, b"b");
    }

    #[test]
    fn bad_paths_are_refused_before_encoding() {
        let entry = BoxFile { path: "a/../b".into(), bytes: Vec::new(), mode: 0o644 };
        assert_eq!(write_tar(&[entry]).unwrap_err().code(), ErrorCode::InvalidArgument);
    }
}
