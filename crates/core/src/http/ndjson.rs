//! NDJSON framing that is safe across chunk boundaries: a byte-level line reader and a line
//! encoder that escapes every non-ASCII character.
//!
//! Transport layer, pure: it knows lines, not what they mean (the provider's `wire` module
//! parses each line). Lines are split on `b'\n'` over *bytes* and decoded only when complete,
//! so a multi-byte UTF-8 character split across two network reads is never corrupted (the bug
//! of the JS SDK's `jsonlines` parser).
//!
//! Source: vercel-sandbox-protocol.md §8 (NDJSON streaming details), §12 (Rust client notes).

use crate::error::{Error, ErrorCode, Result};
use std::fmt::Write as _;

/// Longest line the reader buffers, in bytes: a stream that never ends its line cannot grow the
/// reader's memory past it (the local Box host and Vercel send a line per output chunk).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Incremental NDJSON line reader over a byte stream.
///
/// Feed chunks with [`NdjsonReader::push`]; call [`NdjsonReader::finish`] at end of stream to get
/// a last line that had no trailing `\n`. Blank lines are skipped and a trailing `\r` is removed
/// (CRLF input works).
#[derive(Debug, Default)]
pub struct NdjsonReader {
    buffer: Vec<u8>,
}

impl NdjsonReader {
    /// Appends `chunk` and returns every line completed by it, in order, decoded as UTF-8.
    ///
    /// # Errors
    /// `TransportError` when a complete line is not valid UTF-8 (the reader should then be
    /// dropped: the stream is corrupt).
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<String>> {
        let mut lines = Vec::new();
        // Only the new bytes can contain new line ends.
        let mut search_from = self.buffer.len();
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(pos) = self.buffer[search_from..].iter().position(|&b| b == b'\n') {
            let end = search_from + pos;
            if let Some(line) = decode_line(&self.buffer[start..end])? {
                lines.push(line);
            }
            start = end + 1;
            search_from = start;
        }
        self.buffer.drain(..start);
        if self.buffer.len() > MAX_LINE_BYTES {
            self.buffer = Vec::new();
            return Err(Error::new(
                ErrorCode::TransportError,
                format!("a line of the stream is longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        Ok(lines)
    }

    /// Ends the stream and returns the last line if it was cut at EOF without a `\n`.
    ///
    /// Returns `Ok(None)` when nothing (or only blank space) is left over.
    ///
    /// # Errors
    /// `TransportError` when the left-over bytes are not valid UTF-8 (e.g. the stream ended in
    /// the middle of a character).
    pub fn finish(self) -> Result<Option<String>> {
        decode_line(&self.buffer)
    }
}

/// Decodes one line without its `\n`; strips a trailing `\r`; `None` for a blank line.
fn decode_line(bytes: &[u8]) -> Result<Option<String>> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(None);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Some(text.to_owned())),
        Err(err) => Err(Error::new(
            ErrorCode::TransportError,
            format!("the provider sent an NDJSON line that is not valid UTF-8 (at byte {})", err.valid_up_to()),
        )),
    }
}

/// Encodes `value` as one NDJSON line: compact JSON with every non-ASCII character escaped as
/// `\uXXXX` (UTF-16 surrogate pairs for characters above U+FFFF), followed by `\n`.
///
/// The output is pure ASCII, so a reader that decodes each network chunk on its own (the JS
/// SDK, §8) cannot corrupt it.
pub fn ndjson_line(value: &serde_json::Value) -> String {
    let json = value.to_string();
    let mut out = String::with_capacity(json.len() + 1);
    for ch in json.chars() {
        if ch.is_ascii() {
            out.push(ch);
        } else {
            let mut units = [0u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", unit);
            }
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const STREAM: &str = "{\"stream\":\"stdout\",\"data\":\"ascii\"}\n\
        {\"stream\":\"stdout\",\"data\":\"h\u{e9}llo\"}\n\
        {\"stream\":\"stderr\",\"data\":\"\u{20ac}uro\"}\n\
        {\"stream\":\"stdout\",\"data\":\"\u{1f600} smile\"}\n";

    fn expected() -> Vec<String> {
        STREAM.lines().map(str::to_owned).collect()
    }

    fn read_all(chunks: &[&[u8]]) -> Vec<String> {
        let mut reader = NdjsonReader::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            lines.extend(reader.push(chunk).unwrap());
        }
        lines.extend(reader.finish().unwrap());
        lines
    }

    #[test]
    fn split_at_every_byte_position() {
        let bytes = STREAM.as_bytes();
        for split in 0..=bytes.len() {
            let (a, b) = bytes.split_at(split);
            assert_eq!(read_all(&[a, b]), expected(), "split at {split}");
        }
    }

    #[test]
    fn byte_by_byte() {
        let chunks: Vec<&[u8]> = STREAM.as_bytes().chunks(1).collect();
        assert_eq!(read_all(&chunks), expected());
    }

    #[test]
    fn last_line_cut_at_eof_is_kept() {
        let mut reader = NdjsonReader::default();
        assert_eq!(reader.push(b"{\"a\":1}\n{\"b\":").unwrap(), vec!["{\"a\":1}"]);
        assert_eq!(reader.push(b"2}").unwrap(), Vec::<String>::new());
        assert_eq!(reader.finish().unwrap(), Some("{\"b\":2}".to_owned()));
        assert_eq!(NdjsonReader::default().finish().unwrap(), None);
    }

    #[test]
    fn blank_lines_and_crlf() {
        let lines = read_all(&[b"\n\r\n{\"a\":1}\r\n\n  \n{\"b\":2}\r\n\r\n"]);
        assert_eq!(lines, vec!["{\"a\":1}", "{\"b\":2}"]);
    }

    #[test]
    fn invalid_utf8_is_a_transport_error() {
        let mut reader = NdjsonReader::default();
        let err = reader.push(b"{\"a\":\"\xff\"}\n").unwrap_err();
        assert_eq!(err.code(), ErrorCode::TransportError);
        let mut reader = NdjsonReader::default();
        assert!(reader.push(b"{\"a\":\"\xe2\x82").unwrap().is_empty());
        assert_eq!(reader.finish().unwrap_err().code(), ErrorCode::TransportError);
    }

    #[test]
    fn an_endless_line_is_an_error_not_a_growing_buffer() {
        let mut reader = NdjsonReader::default();
        let chunk = vec![b'x'; 1024 * 1024];
        let mut failed = false;
        for _ in 0..=MAX_LINE_BYTES / chunk.len() {
            if reader.push(&chunk).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
        assert!(reader.buffer.capacity() <= MAX_LINE_BYTES + chunk.len());
    }

    #[test]
    fn encoder_escapes_non_ascii() {
        let value = json!({"data": "h\u{e9}llo \u{20ac} \u{1f600}", "n": 1});
        let line = ndjson_line(&value);
        assert_eq!(line, "{\"data\":\"h\\u00e9llo \\u20ac \\ud83d\\ude00\",\"n\":1}\n");
        assert!(line.is_ascii());
        let back: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(back, value);
    }
}
