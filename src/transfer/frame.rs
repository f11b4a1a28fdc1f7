//! The result frame: how the in-Box harness hands the result envelope back on stdout, framed
//! with a per-run nonce that user code cannot see, so nothing the entry prints can be mistaken
//! for its result.
//!
//! Transfer layer, pure. It finds and parses the frame; reviving values (sidecars, markers) is
//! the envelope codec's job.
//!
//! Source: docs/internals.md "Envelopes (version 1)".

use crate::error::{Error, ErrorCode, Result};
use serde::Deserialize;

/// The line prefix of a result frame: `<<vite-hub-sandbox:{nonce}>>`.
pub fn frame_prefix(nonce: &str) -> String {
    format!("<<vite-hub-sandbox:{nonce}>>")
}

/// A fresh nonce from 16 random bytes: 32 lowercase hex characters.
pub fn new_nonce(random: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(32);
    for byte in random {
        out.push(HEX[(byte >> 4) as usize] as char);
        out.push(HEX[(byte & 0x0f) as usize] as char);
    }
    out
}

/// Byte range of the last frame line: (start of the prefix, end of the line without `\n`).
fn last_frame_range(stdout: &str, prefix: &str) -> Option<(usize, usize)> {
    stdout
        .rmatch_indices(prefix)
        .map(|(index, _)| index)
        .find(|&index| index == 0 || stdout.as_bytes()[index - 1] == b'\n')
        .map(|start| {
            let end = stdout[start..]
                .find('\n')
                .map_or(stdout.len(), |i| start + i);
            (start, end)
        })
}

/// The JSON text of the result frame in `stdout`, if any.
///
/// Takes the *last* occurrence of [`frame_prefix`] that starts a line (at offset 0 or right after
/// a `\n`) and returns the text after it up to the next `\n` (a trailing `\r` removed) or the end.
/// A prefix in the middle of a line, or with another nonce, is ignored.
pub fn find_result_frame<'a>(stdout: &'a str, nonce: &str) -> Option<&'a str> {
    let prefix = frame_prefix(nonce);
    let (start, end) = last_frame_range(stdout, &prefix)?;
    let json = &stdout[start + prefix.len()..end];
    Some(json.strip_suffix('\r').unwrap_or(json))
}

/// `stdout` without the result frame line (and the blank line the harness writes before it),
/// for logs. Returns `stdout` unchanged when there is no frame.
pub fn strip_result_frame(stdout: &str, nonce: &str) -> String {
    let prefix = frame_prefix(nonce);
    let Some((start, end)) = last_frame_range(stdout, &prefix) else {
        return stdout.to_owned();
    };
    // The harness writes "\n<frame>\n": drop that leading "\n" too.
    let head_end = if start > 0 { start - 1 } else { 0 };
    let tail_start = if end < stdout.len() { end + 1 } else { end };
    let mut out = String::with_capacity(stdout.len());
    out.push_str(&stdout[..head_end]);
    out.push_str(&stdout[tail_start..]);
    out
}

/// The error part of a failed result envelope.
///
/// Shape: `{ name?: string, message?: string, code?: "SANDBOX_…", details?: object }`.
/// `code` is set only for transfer failures the harness detected.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EnvelopeError {
    /// The thrown error's `name`, e.g. `"TypeError"`.
    pub name: Option<String>,
    /// The thrown error's message (not yet bounded).
    pub message: Option<String>,
    /// `SANDBOX_SERIALIZATION_ERROR` or `SANDBOX_TRANSFER_LIMIT` when the harness failed to
    /// encode the result; absent when the entry threw.
    pub code: Option<String>,
    /// Details for `code` (e.g. `{limit, value, maximum}`), to be filtered by the allowlist.
    pub details: Option<serde_json::Value>,
}

/// The result envelope, version 1, as written by the harness.
///
/// Shape:
/// ```ts
/// { version: 1, ok: true, result?: Value } | { version: 1, ok: false, error: EnvelopeError }
/// ```
/// `result` is absent when the entry returned `undefined`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResultEnvelope {
    /// Envelope version; always 1.
    pub version: u32,
    /// Whether the entry returned (true) or threw / failed to encode (false).
    pub ok: bool,
    /// The encoded return value (markers unrevived); `None` when the key is absent
    /// (`undefined`), `Some(Value::Null)` for a returned `null`.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<serde_json::Value>,
    /// The failure when `ok` is false.
    pub error: Option<EnvelopeError>,
}

/// Deserializes a present key as `Some`, keeping a JSON `null` as `Some(Value::Null)`.
fn present<'de, D>(deserializer: D) -> std::result::Result<Option<serde_json::Value>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// Parses the JSON of a result frame (or of `.vite-hub/output.json`).
///
/// # Errors
/// `HandlerError` (output direction, status 500) with the message "the harness output is not a
/// valid result envelope" when the text is not JSON, `version` is not 1 or `ok` is not a bool.
pub fn parse_result_envelope(json: &str) -> Result<ResultEnvelope> {
    let invalid = || {
        Error::new(
            ErrorCode::HandlerError,
            "the harness output is not a valid result envelope",
        )
        .for_output()
    };
    let envelope: ResultEnvelope =
        serde_json::from_slice(json.as_bytes()).map_err(|err| invalid().with_source(err))?;
    if envelope.version != 1 {
        return Err(invalid());
    }
    Ok(envelope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Direction;

    const NONCE: &str = "0123456789abcdef0123456789abcdef";

    fn frame(nonce: &str, json: &str) -> String {
        format!("\n<<vite-hub-sandbox:{nonce}>>{json}\n")
    }

    #[test]
    fn nonce_is_hex() {
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8) * 17;
        }
        assert_eq!(new_nonce(&bytes), "00112233445566778899aabbccddeeff");
        assert_eq!(frame_prefix("ab"), "<<vite-hub-sandbox:ab>>");
    }

    #[test]
    fn finds_the_frame_after_user_output() {
        let stdout = format!(
            "hello\nworld{}",
            frame(NONCE, "{\"version\":1,\"ok\":true}")
        );
        assert_eq!(
            find_result_frame(&stdout, NONCE),
            Some("{\"version\":1,\"ok\":true}")
        );
        assert_eq!(strip_result_frame(&stdout, NONCE), "hello\nworld");
    }

    #[test]
    fn frame_with_another_nonce_is_ignored() {
        let forged = frame(
            "ffffffffffffffffffffffffffffffff",
            "{\"version\":1,\"ok\":true,\"result\":1}",
        );
        assert_eq!(find_result_frame(&forged, NONCE), None);
        let stdout = format!(
            "{}{}",
            frame(NONCE, "{\"version\":1,\"ok\":true,\"result\":2}"),
            forged
        );
        assert_eq!(
            find_result_frame(&stdout, NONCE),
            Some("{\"version\":1,\"ok\":true,\"result\":2}")
        );
    }

    #[test]
    fn frame_in_the_middle_of_a_line_is_ignored() {
        let stdout =
            format!("user says <<vite-hub-sandbox:{NONCE}>>{{\"version\":1,\"ok\":true}}\n");
        assert_eq!(find_result_frame(&stdout, NONCE), None);
        assert_eq!(strip_result_frame(&stdout, NONCE), stdout);
    }

    #[test]
    fn last_frame_wins_and_frame_at_start_or_eof() {
        let stdout =
            format!("<<vite-hub-sandbox:{NONCE}>>first\nmid\n<<vite-hub-sandbox:{NONCE}>>second");
        assert_eq!(find_result_frame(&stdout, NONCE), Some("second"));
        assert_eq!(
            strip_result_frame(&stdout, NONCE),
            format!("<<vite-hub-sandbox:{NONCE}>>first\nmid")
        );
        let crlf = format!("<<vite-hub-sandbox:{NONCE}>>{{}}\r\nafter");
        assert_eq!(find_result_frame(&crlf, NONCE), Some("{}"));
        assert_eq!(strip_result_frame(&crlf, NONCE), "after");
    }

    #[test]
    fn missing_frame_is_none() {
        assert_eq!(find_result_frame("", NONCE), None);
        assert_eq!(find_result_frame("no frame here\n", NONCE), None);
    }

    #[test]
    fn parses_envelopes() {
        let ok =
            parse_result_envelope("{\"version\":1,\"ok\":true,\"result\":{\"a\":[1]}}").unwrap();
        assert!(ok.ok);
        assert_eq!(ok.result, Some(serde_json::json!({"a": [1]})));
        let undefined = parse_result_envelope("{\"version\":1,\"ok\":true}").unwrap();
        assert_eq!(undefined.result, None);
        let null = parse_result_envelope("{\"version\":1,\"ok\":true,\"result\":null}").unwrap();
        assert_eq!(null.result, Some(serde_json::Value::Null));
        let failed = parse_result_envelope(
            "{\"version\":1,\"ok\":false,\"error\":{\"name\":\"TypeError\",\"message\":\"boom\",\"code\":\"SANDBOX_TRANSFER_LIMIT\",\"details\":{\"limit\":\"maxDepth\"}}}",
        )
        .unwrap();
        let error = failed.error.unwrap();
        assert_eq!(error.name.as_deref(), Some("TypeError"));
        assert_eq!(error.message.as_deref(), Some("boom"));
        assert_eq!(error.code.as_deref(), Some("SANDBOX_TRANSFER_LIMIT"));
    }

    #[test]
    fn rejects_invalid_envelopes() {
        for bad in [
            "",
            "not json",
            "{\"version\":2,\"ok\":true}",
            "{\"version\":1,\"ok\":\"yes\"}",
            "{\"version\":1}",
            "{\"ok\":true}",
            "[1]",
        ] {
            let err = parse_result_envelope(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::HandlerError, "{bad}");
            assert_eq!(
                err.message(),
                "the harness output is not a valid result envelope"
            );
            assert_eq!(err.direction(), Direction::Output);
            assert_eq!(err.http_status(), 500);
        }
    }
}
