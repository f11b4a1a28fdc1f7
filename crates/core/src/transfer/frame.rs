//! The result frames: how the in-Box harness hands the result back on stdout, as it is produced
//! (a result envelope, or a returned Response's head, body chunks and end), each framed with a
//! per-run nonce that user code cannot see, so nothing the entry prints can be mistaken for its
//! result.
//!
//! Transfer layer, pure. It finds and parses the frame; reviving values (sidecars, markers) is
//! the envelope codec's job.
//!
//! Source: docs/internals/transfer.md "Envelopes (version 1)".

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

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

/// One piece of a harness's stdout, in order: what the entry printed, or one frame (its JSON
/// text, after the prefix, without the ending `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdoutPiece {
    /// Text the entry wrote (never part of a frame).
    Output(String),
    /// The JSON text of one frame.
    Frame(String),
}

/// Splits a harness's stdout, as it streams in, into the entry's own output and frames.
///
/// A frame is [`frame_prefix`] (which holds the run's nonce, unknown to the entry) followed by
/// one JSON text and `\n` (JSON escapes every newline). The prefix may follow a partial line of
/// the entry's output: the harness writes each frame with one `write` call, so a frame is never
/// cut by other output of the same process. A tail of the text that could be the start of a
/// prefix is held back until the next piece shows what it is. A frame longer than
/// `max_frame_bytes` is an error (the harness bounds frames by `maxOutputBytes`).
#[derive(Debug)]
pub struct FrameScanner {
    prefix: String,
    buffer: String,
    in_frame: bool,
    max_frame_bytes: usize,
}

impl FrameScanner {
    /// A scanner for the frames of `nonce`, each at most `max_frame_bytes` bytes.
    pub fn new(nonce: &str, max_frame_bytes: usize) -> FrameScanner {
        FrameScanner { prefix: frame_prefix(nonce), buffer: String::new(), in_frame: false, max_frame_bytes }
    }

    /// Adds `text` and appends what it completes to `out`.
    ///
    /// # Errors
    /// `SANDBOX_TRANSFER_LIMIT` (output) when a frame grows past `max_frame_bytes`.
    pub fn push(&mut self, text: &str, out: &mut Vec<StdoutPiece>) -> Result<()> {
        self.buffer.push_str(text);
        loop {
            if self.in_frame {
                let Some(end) = self.buffer.find('\n') else {
                    if self.buffer.len() > self.max_frame_bytes {
                        return Err(Error::new(
                            ErrorCode::TransferLimit,
                            "Sandbox result frame exceeds maxOutputBytes.",
                        )
                        .with_limit("maxOutputBytes", self.buffer.len() as u64, self.max_frame_bytes as u64)
                        .for_output());
                    }
                    return Ok(());
                };
                let line = &self.buffer[..end];
                out.push(StdoutPiece::Frame(line.strip_suffix('\r').unwrap_or(line).to_owned()));
                self.buffer.drain(..=end);
                self.in_frame = false;
                continue;
            }
            if let Some(start) = self.buffer.find(&self.prefix) {
                if start > 0 {
                    out.push(StdoutPiece::Output(self.buffer[..start].to_owned()));
                }
                self.buffer.drain(..start + self.prefix.len());
                self.in_frame = true;
                continue;
            }
            let held = held_prefix_len(&self.buffer, &self.prefix);
            let emit = self.buffer.len() - held;
            if emit > 0 {
                out.push(StdoutPiece::Output(self.buffer[..emit].to_owned()));
                self.buffer.drain(..emit);
            }
            return Ok(());
        }
    }

    /// The end of stdout: what was held back (a frame cut at the end counts as a frame; the
    /// JSON parse then decides).
    pub fn finish(&mut self, out: &mut Vec<StdoutPiece>) {
        let rest = std::mem::take(&mut self.buffer);
        if self.in_frame {
            out.push(StdoutPiece::Frame(rest));
        } else if !rest.is_empty() {
            out.push(StdoutPiece::Output(rest));
        }
        self.in_frame = false;
    }
}

/// Length of the longest tail of `text` that is a proper start of `prefix` (ASCII).
fn held_prefix_len(text: &str, prefix: &str) -> usize {
    let bytes = text.as_bytes();
    (1..prefix.len().min(bytes.len() + 1))
        .rev()
        .find(|&n| bytes[bytes.len() - n..] == prefix.as_bytes()[..n])
        .unwrap_or(0)
}

/// One frame of the harness protocol (docs/internals/transfer.md, "Envelopes").
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// The final result envelope (`{version:1, ok, result | error}`, no `frame` key).
    Result(Box<ResultEnvelope>),
    /// The entry returned a `Response`: its status line and headers; body frames follow.
    Head {
        /// HTTP status.
        status: u16,
        /// Status text (may be empty).
        status_text: String,
        /// Header pairs in order.
        headers: Vec<(String, String)>,
    },
    /// A chunk of the returned Response's body (decoded bytes).
    Body(Vec<u8>),
    /// The returned Response's body ended.
    End,
}

/// Parses the JSON text of one frame.
///
/// Shapes: `{version:1, frame:"head", status, statusText, headers:[[k,v]]}`,
/// `{version:1, frame:"body", data:"<base64>"}`, `{version:1, frame:"end"}`, or a result envelope.
///
/// # Errors
/// `SANDBOX_HANDLER_ERROR` (output) for a frame that is not one of these.
pub fn parse_frame(json: &str) -> Result<Frame> {
    use base64::Engine;
    let invalid =
        || Error::new(ErrorCode::HandlerError, "the harness output is not a valid result envelope").for_output();
    let value: Value = serde_json::from_slice(json.as_bytes()).map_err(|_| invalid())?;
    let kind = value.get("frame").and_then(Value::as_str).map(str::to_owned);
    let Some(kind) = kind else {
        return ResultEnvelope::from_value(value)
            .map(|envelope| Frame::Result(Box::new(envelope.with_plain_json(json))));
    };
    if value.get("version").and_then(Value::as_u64) != Some(1) {
        return Err(invalid());
    }
    match kind.as_str() {
        "head" => {
            let status =
                value.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok()).ok_or_else(invalid)?;
            let status_text = value.get("statusText").and_then(Value::as_str).unwrap_or_default().to_owned();
            let mut headers = Vec::new();
            for pair in value.get("headers").and_then(Value::as_array).into_iter().flatten() {
                let (Some(name), Some(text)) =
                    (pair.get(0).and_then(Value::as_str), pair.get(1).and_then(Value::as_str))
                else {
                    return Err(invalid());
                };
                headers.push((name.to_owned(), text.to_owned()));
            }
            Ok(Frame::Head { status, status_text, headers })
        }
        "body" => {
            let data = value.get("data").and_then(Value::as_str).ok_or_else(invalid)?;
            base64::engine::general_purpose::STANDARD.decode(data).map(Frame::Body).map_err(|_| invalid())
        }
        "end" => Ok(Frame::End),
        _ => Err(invalid()),
    }
}

/// The error part of a failed result envelope.
///
/// Shape: `{ name?: string, message?: string, stack?: string, code?: "SANDBOX_…", details?: object }`.
/// `code` is set only for transfer failures the harness detected. Each field is optional (absent
/// or `null`); a present one of another type makes the envelope invalid.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EnvelopeError {
    /// The thrown error's `name`, e.g. `"TypeError"`.
    #[serde(default)]
    pub name: Option<String>,
    /// The thrown error's message (not yet bounded).
    #[serde(default)]
    pub message: Option<String>,
    /// The thrown error's stack (bounded by the harness), when it had one.
    #[serde(default)]
    pub stack: Option<String>,
    /// `SANDBOX_SERIALIZATION_ERROR` or `SANDBOX_TRANSFER_LIMIT` when the harness failed to
    /// encode the result; absent when the entry threw.
    #[serde(default)]
    pub code: Option<String>,
    /// Details for `code` (e.g. `{limit, value, maximum}`), to be filtered by the allowlist.
    #[serde(default)]
    pub details: Option<Value>,
}

/// The result envelope, version 1, as written by the harness.
///
/// Shape:
/// ```ts
/// { version: 1, ok: true, result?: Value } | { version: 1, ok: false, error: EnvelopeError }
/// ```
/// `result` is absent when the entry returned `undefined`. Unknown keys are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResultEnvelope {
    /// Envelope version; always 1.
    pub version: u32,
    /// Whether the entry returned (true) or threw / failed to encode (false).
    pub ok: bool,
    /// The encoded return value (markers unrevived); `None` when the key is absent
    /// (`undefined`), `Some(Value::Null)` for a returned `null`.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Value>,
    /// The failure when `ok` is false.
    #[serde(default)]
    pub error: Option<EnvelopeError>,
    /// `result`'s JSON text exactly as the harness wrote it, when the entry returned plain JSON
    /// (`ok`, a `result` holding no value marker at any depth): what a Response body can carry
    /// as is, without a decode to JS values and an encode again. Set by [`parse_frame`] and
    /// [`parse_result_envelope`]; `None` otherwise.
    #[serde(skip)]
    pub plain_json: Option<String>,
}

/// The `result` of an envelope's JSON text, borrowed as written.
#[derive(Deserialize)]
struct RawResult<'a> {
    #[serde(borrow, default)]
    result: Option<&'a serde_json::value::RawValue>,
}

/// Whether `value` holds an object with the value marker key, at any depth.
fn holds_marker(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(holds_marker),
        Value::Object(map) => map.contains_key(super::VALUE_MARKER) || map.values().any(holds_marker),
        _ => false,
    }
}

/// A present key's value, `null` included (`Some(Value::Null)`); an absent key is `None` (`default`).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl ResultEnvelope {
    /// Reads a parsed envelope: `version` 1, `ok` a bool, the rest as [`ResultEnvelope`] says.
    fn from_value(value: Value) -> Result<ResultEnvelope> {
        // Why the shape is wrong stays out of the message.
        let invalid =
            || Error::new(ErrorCode::HandlerError, "the harness output is not a valid result envelope").for_output();
        if !value.is_object() {
            return Err(invalid());
        }
        let envelope = ResultEnvelope::deserialize(&value).map_err(|_| invalid())?;
        if envelope.version != 1 {
            return Err(invalid());
        }
        Ok(envelope)
    }

    /// `self` with [`ResultEnvelope::plain_json`] taken from `json`, the text it was parsed from
    /// (a text with `result` twice keeps none: the parsed value is the last one).
    fn with_plain_json(mut self, json: &str) -> ResultEnvelope {
        if self.ok && self.result.as_ref().is_some_and(|result| !holds_marker(result)) {
            self.plain_json = serde_json::from_str::<RawResult<'_>>(json)
                .ok()
                .and_then(|raw| raw.result)
                .map(|raw| raw.get().to_owned());
        }
        self
    }
}

/// Parses the JSON of a result frame (or of `.vite-hub/output.json`).
///
/// # Errors
/// `HandlerError` (output direction, status 500) with the message "the harness output is not a
/// valid result envelope" when the text is not JSON, `version` is not 1 or `ok` is not a bool.
pub fn parse_result_envelope(json: &str) -> Result<ResultEnvelope> {
    let invalid =
        || Error::new(ErrorCode::HandlerError, "the harness output is not a valid result envelope").for_output();
    let value: Value = serde_json::from_slice(json.as_bytes()).map_err(|_| invalid())?;
    ResultEnvelope::from_value(value).map(|envelope| envelope.with_plain_json(json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Direction;

    const NONCE: &str = "0123456789abcdef0123456789abcdef";

    fn frame(nonce: &str, json: &str) -> String {
        format!("<<vite-hub-sandbox:{nonce}>>{json}\n")
    }

    /// Feeds `text` cut at every byte offset (at char boundaries) and checks the pieces join up
    /// to the same output and frames.
    fn scan_split(text: &str, nonce: &str) -> (String, Vec<String>) {
        let mut results = Vec::new();
        for cut in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let mut scanner = FrameScanner::new(nonce, 1 << 20);
            let mut out = Vec::new();
            scanner.push(&text[..cut], &mut out).unwrap();
            scanner.push(&text[cut..], &mut out).unwrap();
            scanner.finish(&mut out);
            let mut output = String::new();
            let mut frames = Vec::new();
            for piece in out {
                match piece {
                    StdoutPiece::Output(t) => output.push_str(&t),
                    StdoutPiece::Frame(f) => frames.push(f),
                }
            }
            results.push((output, frames));
        }
        let first = results[0].clone();
        assert!(results.iter().all(|r| r == &first), "every split gives the same pieces");
        first
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
    fn frames_are_split_from_user_output_at_every_cut() {
        let text = format!("hé\npartial{}after <<vite-hub-sandbox:{}", frame(NONCE, "{\"a\":1}"), "x");
        let (output, frames) = scan_split(&text, NONCE);
        assert_eq!(output, "hé\npartialafter <<vite-hub-sandbox:x");
        assert_eq!(frames, vec!["{\"a\":1}".to_owned()]);
    }

    #[test]
    fn a_frame_with_another_nonce_is_user_output() {
        let forged = frame("ffffffffffffffffffffffffffffffff", "{\"version\":1,\"ok\":true,\"result\":1}");
        let text = format!("{forged}{}", frame(NONCE, "{}\r"));
        let (output, frames) = scan_split(&text, NONCE);
        assert_eq!(output, forged);
        assert_eq!(frames, vec!["{}".to_owned()]);
    }

    #[test]
    fn a_frame_cut_at_the_end_is_still_a_frame_and_long_frames_fail() {
        let (output, frames) = scan_split(&format!("x<<vite-hub-sandbox:{NONCE}>>{{\"ver"), NONCE);
        assert_eq!((output.as_str(), frames), ("x", vec!["{\"ver".to_owned()]));
        let mut scanner = FrameScanner::new(NONCE, 8);
        let mut out = Vec::new();
        let error = scanner.push(&format!("<<vite-hub-sandbox:{NONCE}>>0123456789"), &mut out).unwrap_err();
        assert_eq!(error.code(), ErrorCode::TransferLimit);
    }

    #[test]
    fn parses_frames() {
        assert_eq!(
            parse_frame("{\"version\":1,\"frame\":\"head\",\"status\":201,\"statusText\":\"Created\",\"headers\":[[\"x-a\",\"1\"]]}").unwrap(),
            Frame::Head { status: 201, status_text: "Created".into(), headers: vec![("x-a".into(), "1".into())] }
        );
        assert_eq!(
            parse_frame("{\"version\":1,\"frame\":\"body\",\"data\":\"aGk=\"}").unwrap(),
            Frame::Body(b"hi".to_vec())
        );
        assert_eq!(parse_frame("{\"version\":1,\"frame\":\"end\"}").unwrap(), Frame::End);
        assert!(matches!(parse_frame("{\"version\":1,\"ok\":true}").unwrap(), Frame::Result(_)));
        for bad in [
            "{\"version\":1,\"frame\":\"body\",\"data\":\"*\"}",
            "{\"version\":2,\"frame\":\"end\"}",
            "{\"version\":1,\"frame\":\"x\"}",
            "nope",
        ] {
            assert_eq!(parse_frame(bad).unwrap_err().code(), ErrorCode::HandlerError, "{bad}");
        }
    }

    #[test]
    fn keeps_a_plain_result_as_written() {
        let text = "{\"version\":1,\"ok\":true,\"result\":{\"n\":1e+21,\"f\":0.30000000000000004,\"s\":\"\\u001f\"}}";
        let envelope = parse_result_envelope(text).unwrap();
        assert_eq!(envelope.plain_json.as_deref(), Some("{\"n\":1e+21,\"f\":0.30000000000000004,\"s\":\"\\u001f\"}"));
        let Frame::Result(framed) = parse_frame(text).unwrap() else { panic!("a result frame") };
        assert_eq!(framed.plain_json, envelope.plain_json);
        // A marker at any depth, a failure, `undefined` or a repeated key: no plain text.
        for text in [
            "{\"version\":1,\"ok\":true,\"result\":[{\"vitehub:sandbox:value\":{\"tag\":\"binary\",\"id\":0,\"kind\":\"blob\"}}]}",
            "{\"version\":1,\"ok\":false,\"result\":1,\"error\":{}}",
            "{\"version\":1,\"ok\":true}",
            "{\"version\":1,\"ok\":true,\"result\":1,\"result\":2}",
        ] {
            assert_eq!(parse_result_envelope(text).unwrap().plain_json, None, "{text}");
        }
    }

    #[test]
    fn parses_envelopes() {
        let ok = parse_result_envelope("{\"version\":1,\"ok\":true,\"result\":{\"a\":[1]}}").unwrap();
        assert!(ok.ok);
        assert_eq!(ok.result, Some(serde_json::json!({"a": [1]})));
        let undefined = parse_result_envelope("{\"version\":1,\"ok\":true}").unwrap();
        assert_eq!(undefined.result, None);
        let null = parse_result_envelope("{\"version\":1,\"ok\":true,\"result\":null}").unwrap();
        assert_eq!(null.result, Some(Value::Null));
        let failed = parse_result_envelope(
            "{\"version\":1,\"ok\":false,\"error\":{\"name\":\"TypeError\",\"message\":\"boom\",\"stack\":\"TypeError: boom\\n    at f\",\"code\":\"SANDBOX_TRANSFER_LIMIT\",\"details\":{\"limit\":\"maxDepth\"}}}",
        )
        .unwrap();
        let error = failed.error.unwrap();
        assert_eq!(error.name.as_deref(), Some("TypeError"));
        assert_eq!(error.message.as_deref(), Some("boom"));
        assert_eq!(error.stack.as_deref(), Some("TypeError: boom\n    at f"));
        assert_eq!(error.code.as_deref(), Some("SANDBOX_TRANSFER_LIMIT"));
        assert_eq!(error.details, Some(serde_json::json!({"limit": "maxDepth"})));
        let bare = parse_result_envelope(
            "{\"version\":1,\"ok\":false,\"error\":{\"message\":null,\"details\":null},\"extra\":1}",
        )
        .unwrap();
        assert_eq!(
            bare.error,
            Some(EnvelopeError { name: None, message: None, stack: None, code: None, details: None })
        );
        assert_eq!(parse_result_envelope("{\"version\":1,\"ok\":false,\"error\":null}").unwrap().error, None);
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
            "{\"version\":1.0,\"ok\":true}",
            "{\"version\":1,\"ok\":false,\"error\":\"boom\"}",
            "{\"version\":1,\"ok\":false,\"error\":{\"message\":5}}",
        ] {
            let err = parse_result_envelope(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::HandlerError, "{bad}");
            assert_eq!(err.message(), "the harness output is not a valid result envelope");
            assert_eq!(err.direction(), Direction::Output);
            assert_eq!(err.http_status(), 500);
        }
    }
}
