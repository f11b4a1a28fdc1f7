//! The write format of both protocols: one tar archive holding every file a Run writes into a
//! Box, gzip'd (by the runtime's `transfer::gzip`), sent in one request (Vercel's `fs/write`,
//! Cloudflare's staged archive) and extracted in the Box.
//!
//! Transfer layer, pure; no provider vocabulary. Entry paths are relative (no leading `/`)
//! and checked with [`validate_relative_path`]; the archive holds regular-file entries only (the
//! Box side creates parent directories). mtime is 0 so equal inputs give byte-identical archives.
//!
//! Source: vercel-sandbox-protocol.md §7.4 (Write files), §12; docs/internals/transfer.md "Box layout".

use crate::error::{Error, ErrorCode, Result};
use crate::transfer::box_file::{validate_relative_path, BoxFile};

/// Writes `entries` as one tar archive (ustar headers; paths over 100 bytes use
/// the ustar prefix field or a GNU long-name entry), in the given order.
///
/// Each entry is a regular file with uid/gid 0 and mtime 0; no directory entries are written.
/// The bytes are those the `tar` crate's `Builder::append_data` writes for the same header (a
/// test compares them; the crate is a dev-dependency): a write-only ustar encoder is this file.
///
/// # Errors
/// `InvalidArgument` when a path fails [`validate_relative_path`]; `RuntimeError` when a path
/// cannot be stored (never for a valid path).
pub fn write_tar(entries: &[BoxFile]) -> Result<Vec<u8>> {
    for entry in entries {
        validate_relative_path(&entry.path)?;
    }
    let mut out = Vec::new();
    for entry in entries {
        let mut header = [0u8; BLOCK];
        header[MAGIC].copy_from_slice(b"ustar\0");
        header[VERSION].copy_from_slice(b"00");
        octal(&mut header[MODE], u64::from(entry.mode & 0o7777));
        octal(&mut header[UID], 0);
        octal(&mut header[GID], 0);
        octal(&mut header[SIZE], entry.bytes.len() as u64);
        octal(&mut header[MTIME], 0);
        header[TYPEFLAG] = b'0';
        if set_ustar_path(&mut header, &entry.path).is_none() {
            // Too long for name + prefix: a GNU long-name entry carries the whole path, and the
            // header keeps its first 100 bytes (cut on a char boundary).
            let path = entry.path.as_bytes();
            let mut cut = NAME.len().min(path.len());
            while !entry.path.is_char_boundary(cut) {
                cut -= 1;
            }
            if path.len() < NAME.len() || set_ustar_path(&mut header, &entry.path[..cut]).is_none() {
                return Err(archive_error(&entry.path));
            }
            let mut long = [0u8; BLOCK];
            long[..13].copy_from_slice(b"././@LongLink");
            octal(&mut long[MODE], 0o644);
            octal(&mut long[UID], 0);
            octal(&mut long[GID], 0);
            octal(&mut long[MTIME], 0);
            octal(&mut long[SIZE], path.len() as u64 + 1);
            long[TYPEFLAG] = b'L';
            long[MAGIC].copy_from_slice(b"ustar ");
            long[VERSION].copy_from_slice(b" \0");
            checksum(&mut long);
            out.extend_from_slice(&long);
            append_padded(&mut out, path, 1);
        }
        checksum(&mut header);
        out.extend_from_slice(&header);
        append_padded(&mut out, &entry.bytes, 0);
    }
    out.extend_from_slice(&[0; 2 * BLOCK]);
    Ok(out)
}

const BLOCK: usize = 512;
// Field offsets of a ustar header (POSIX.1-1988).
const NAME: std::ops::Range<usize> = 0..100;
const MODE: std::ops::Range<usize> = 100..108;
const UID: std::ops::Range<usize> = 108..116;
const GID: std::ops::Range<usize> = 116..124;
const SIZE: std::ops::Range<usize> = 124..136;
const MTIME: std::ops::Range<usize> = 136..148;
const CHKSUM: std::ops::Range<usize> = 148..156;
const TYPEFLAG: usize = 156;
const MAGIC: std::ops::Range<usize> = 257..263;
const VERSION: std::ops::Range<usize> = 263..265;
const PREFIX: std::ops::Range<usize> = 345..500;

/// `value` as zero-padded octal digits ending in NUL, filling `field`.
fn octal(field: &mut [u8], mut value: u64) {
    let Some((last, digits)) = field.split_last_mut() else { return };
    *last = 0;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (value & 7) as u8;
        value >>= 3;
    }
}

/// The header checksum: the byte sum with the checksum field read as spaces, in octal.
fn checksum(header: &mut [u8; BLOCK]) {
    header[CHKSUM].fill(b' ');
    let sum: u64 = header.iter().map(|b| u64::from(*b)).sum();
    octal(&mut header[CHKSUM], sum);
}

/// `bytes`, then `extra` NUL bytes, then zeros up to the next block boundary.
fn append_padded(out: &mut Vec<u8>, bytes: &[u8], extra: usize) {
    out.extend_from_slice(bytes);
    let len = bytes.len() + extra;
    out.resize(out.len() + extra + (BLOCK - len % BLOCK) % BLOCK, 0);
}

/// Stores `path` in the header's name field, or split at a `/` between prefix (at most 155
/// bytes) and name (at most 100), as the `tar` crate does; `None` when it does not fit. A
/// failed split may leave the prefix written, as the crate's does.
fn set_ustar_path(header: &mut [u8; BLOCK], path: &str) -> Option<()> {
    if path.len() <= NAME.len() {
        return copy_path(&mut header[NAME], path);
    }
    // The longest parent directory that fits the prefix field (the empty one fails below).
    let mut prefix = path;
    loop {
        prefix = prefix.rfind('/').map_or("", |slash| &prefix[..slash]);
        if prefix.len() <= PREFIX.len() {
            break;
        }
    }
    copy_path(&mut header[PREFIX], prefix)?;
    copy_path(&mut header[NAME], &path[prefix.len() + 1..])
}

/// Writes the `/`-joined segments of `path` into `field` (each followed by a NUL while there is
/// room), dropping empty and `.` segments; `None` for no segment, a `..` segment, or a path
/// longer than the field. A path of this module is validated, so only a path cut at 100 bytes
/// can end in an empty, `.` or `..` segment.
fn copy_path(field: &mut [u8], path: &str) -> Option<()> {
    let mut at = 0;
    let mut copy = |bytes: &[u8]| {
        let end = at + bytes.len();
        if end > field.len() {
            return None;
        }
        field[at..end].copy_from_slice(bytes);
        if let Some(nul) = field.get_mut(end) {
            *nul = 0;
        }
        at = end;
        Some(())
    };
    let mut emitted = false;
    for segment in path.split('/').filter(|s| !s.is_empty() && *s != ".") {
        if segment == ".." {
            return None;
        }
        if emitted {
            copy(b"/")?;
        }
        copy(segment.as_bytes())?;
        emitted = true;
    }
    if !emitted {
        return None;
    }
    if path.ends_with('/') {
        copy(b"/")?;
    }
    Some(())
}

fn archive_error(path: &str) -> Error {
    let message = format!("Failed to add {} to the file bundle.", crate::error::quoted(path));
    Error::new(ErrorCode::RuntimeError, message)
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
            BoxFile { path: "vercel/sandbox/project/package.json".into(), bytes: b"{}".to_vec(), mode: 0o644 },
            BoxFile { path: "vercel/sandbox/.vite-hub/run.sh".into(), bytes: b"#!/bin/sh\n".to_vec(), mode: 0o755 },
            BoxFile { path: "empty".into(), bytes: Vec::new(), mode: 0o600 },
        ];
        let archive = write_tar(&entries).unwrap();
        assert_eq!(&archive[257..262], b"ustar");
        let back = read_back(&archive);
        assert_eq!(back.len(), 3);
        for (entry, (path, bytes, mode, mtime)) in entries.iter().zip(back) {
            assert_eq!((&entry.path, &entry.bytes, entry.mode, 0), (&path, &bytes, mode, mtime));
        }
        assert_eq!(write_tar(&entries).unwrap(), archive, "reproducible");
    }

    #[test]
    fn long_paths() {
        let long_name = format!("vercel/sandbox/project/{}.txt", "n".repeat(150));
        let deep = format!("vercel/sandbox/{}/file.mjs", ["segment"; 50].join("/"));
        let entries = vec![
            BoxFile { path: long_name.clone(), bytes: b"a".to_vec(), mode: 0o644 },
            BoxFile { path: deep.clone(), bytes: b"b".to_vec(), mode: 0o644 },
        ];
        let back = read_back(&write_tar(&entries).unwrap());
        assert_eq!(back[0].0, long_name);
        assert_eq!(back[1].0, deep);
        assert_eq!(back[1].1, b"b");
    }

    /// What the `tar` crate's Builder writes for the same entries (the encoder this one replaced).
    fn tar_crate_archive(entries: &[BoxFile]) -> std::io::Result<Vec<u8>> {
        let mut builder = tar::Builder::new(Vec::new());
        for entry in entries {
            let mut header = tar::Header::new_ustar();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_size(entry.bytes.len() as u64);
            header.set_mode(entry.mode & 0o7777);
            header.set_uid(0);
            header.set_gid(0);
            header.set_mtime(0);
            builder.append_data(&mut header, &entry.path, entry.bytes.as_slice())?;
        }
        builder.into_inner()
    }

    #[test]
    fn bytes_equal_the_tar_crate_builder() {
        let file = |path: String, size: usize| BoxFile { path, bytes: vec![b'x'; size], mode: 0o100755 };
        let mut paths = vec![
            "a".to_owned(),
            "n".repeat(100),
            "n".repeat(101),
            format!("{}/{}", "p".repeat(155), "n".repeat(100)),
            format!("{}/{}", "p".repeat(156), "n".repeat(10)),
            format!("{}/{}", "p".repeat(10), "n".repeat(101)),
            format!("{}/{}", "p".repeat(10), "n".repeat(300)),
            format!("{}/{}/{}", "p".repeat(60), "q".repeat(60), "n".repeat(99)),
            format!("{}é/{}", "p".repeat(98), "n".repeat(20)),
            format!("{}/../x/{}", "p".repeat(97), "n".repeat(200)).replace("/../", "/..y/"),
            format!("{}/./{}", "p".repeat(98), "n".repeat(200)).replace("/./", "/.z/"),
            format!("{}/{}", "p".repeat(99), "n".repeat(200)),
            format!("{}/{}", ["segment"; 50].join("/"), "file.mjs"),
        ];
        paths.extend((95..105).map(|n| format!("{}/{}", "d".repeat(n), "f".repeat(120))));
        for (index, path) in paths.into_iter().enumerate() {
            let entries = [file(path.clone(), index * 97), file("b/c".into(), 512), file("e".into(), 0)];
            let ours = write_tar(&entries).map_err(|e| e.code());
            let theirs = tar_crate_archive(&entries).map_err(|_| ErrorCode::RuntimeError);
            assert!(ours == theirs, "archives differ for {path:?}");
        }
    }

    #[test]
    fn bad_paths_are_refused_before_encoding() {
        let entry = BoxFile { path: "a/../b".into(), bytes: Vec::new(), mode: 0o644 };
        assert_eq!(write_tar(&[entry]).unwrap_err().code(), ErrorCode::InvalidArgument);
    }
}
