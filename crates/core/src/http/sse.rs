//! Server-Sent Events framing that is safe across chunk boundaries: a byte-level event reader.
//!
//! Transport layer, pure: it knows events (`event:`, `data:` fields, blank-line dispatch), not
//! what their data means (the provider's `wire` module parses it). Lines end at CRLF, LF or a
//! lone CR, found over *bytes*: a CR at the end of one chunk followed by an LF at the start of the
//! next is one line end, not two, and a line is decoded only when complete, so a multi-byte UTF-8
//! character split across two network reads is never corrupted.
//!
//! Source: the WHATWG HTML "Server-sent events" parsing rules (event stream interpretation);
//! cloudflare-sandbox-protocol.md §4.4 (the container's streams use only `data:` lines).

use crate::error::{Error, ErrorCode, Result};

/// Longest line accepted, in bytes (a line longer than this is a corrupt or hostile stream).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE reader over a byte stream.
///
/// Feed chunks with [`SseReader::push`]; call [`SseReader::finish`] at end of stream to learn
/// whether it stopped inside an event (the last event of a well-formed stream ends with a blank
/// line, so an event without one is never dispatched).
#[derive(Debug, Default)]
pub struct SseReader {
    line: Vec<u8>,
    /// The previous chunk ended with a CR: an LF at the start of the next one belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
}

/// How a stream ended, from [`SseReader::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseEnd {
    /// Between events: nothing was left over.
    Clean,
    /// Inside an event (field lines without the closing blank line, or a partial line).
    MidEvent,
}

impl SseReader {
    /// Appends `chunk` and returns every event completed by it, in order.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when a line is longer than [`MAX_LINE_BYTES`].
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.extend_line(&rest[..pos])?;
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
            if rest[pos] == b'\r' {
                match rest.get(pos + 1) {
                    Some(b'\n') => rest = &rest[pos + 2..],
                    Some(_) => rest = &rest[pos + 1..],
                    None => {
                        self.after_cr = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[pos + 1..];
            }
        }
        self.extend_line(rest)?;
        Ok(events)
    }

    /// Ends the stream: [`SseEnd::MidEvent`] when a partial line or undispatched fields remain.
    pub fn finish(self) -> SseEnd {
        if self.line.is_empty() && self.data.is_none() && self.event.is_none() {
            SseEnd::Clean
        } else {
            SseEnd::MidEvent
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<()> {
        if self.line.len() + bytes.len() > MAX_LINE_BYTES {
            return Err(Error::new(
                ErrorCode::TransportError,
                format!("the provider sent an event-stream line longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Interprets one complete line; returns the event a blank line dispatches.
    fn take_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            let event = self.event.take();
            return self.data.take().map(|data| SseEvent { event, data });
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.find(':') {
            Some(i) => (&text[..i], text[i + 1..].strip_prefix(' ').unwrap_or(&text[i + 1..])),
            None => (&*text, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            _ => {} // `id`, `retry` and unknown fields: not used by the container streams
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream with every line ending (LF, CRLF, lone CR), multi-byte UTF-8 (2, 3 and 4 bytes),
    /// a comment, an `event:` field, a multi-line data field, a field without a colon and an
    /// empty data value.
    const STREAM: &[u8] = "data: {\"type\":\"start\",\"command\":\"echo é\"}\n\n\
: keep-alive comment\r\n\
event: output\r\n\
data: {\"type\":\"stdout\",\"data\":\"日本 😀\\n\"}\r\n\r\n\
data: line one\rdata:line two\r\r\
data\n\n\
id: 7\ndata: {\"type\":\"complete\",\"exitCode\":0}\n\n"
        .as_bytes();

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent { event: None, data: "{\"type\":\"start\",\"command\":\"echo é\"}".into() },
            SseEvent { event: Some("output".into()), data: "{\"type\":\"stdout\",\"data\":\"日本 😀\\n\"}".into() },
            SseEvent { event: None, data: "line one\nline two".into() },
            SseEvent { event: None, data: String::new() },
            SseEvent { event: None, data: "{\"type\":\"complete\",\"exitCode\":0}".into() },
        ]
    }

    fn read(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseEnd) {
        let mut reader = SseReader::default();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(reader.push(chunk).unwrap());
        }
        (events, reader.finish())
    }

    #[test]
    fn whole_stream_at_once() {
        assert_eq!(read(&[STREAM]), (expected(), SseEnd::Clean));
    }

    #[test]
    fn every_single_split_point_gives_the_same_events() {
        for at in 0..=STREAM.len() {
            let (a, b) = STREAM.split_at(at);
            assert_eq!(read(&[a, b]), (expected(), SseEnd::Clean), "split at byte {at}");
        }
    }

    #[test]
    fn every_pair_of_split_points_gives_the_same_events() {
        for i in 0..=STREAM.len() {
            for j in i..=STREAM.len() {
                let chunks = [&STREAM[..i], &STREAM[i..j], &STREAM[j..]];
                assert_eq!(read(&chunks), (expected(), SseEnd::Clean), "split at bytes {i} and {j}");
            }
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let chunks: Vec<&[u8]> = STREAM.chunks(1).collect();
        assert_eq!(read(&chunks), (expected(), SseEnd::Clean));
    }

    #[test]
    fn a_cr_at_a_chunk_end_then_lf_is_one_line_end() {
        // "data: a\r" | "\n\r\n": CRLF split, then a blank CRLF line: one event.
        assert_eq!(read(&[b"data: a\r", b"\n\r\n"]).0, vec![SseEvent { event: None, data: "a".into() }]);
        // "data: a\r" | "\r": two lone CRs: the second one is the blank line.
        assert_eq!(read(&[b"data: a\r", b"\r"]).0, vec![SseEvent { event: None, data: "a".into() }]);
    }

    #[test]
    fn a_stream_cut_inside_an_event_is_reported_and_not_dispatched() {
        for cut in [&b"data: {\"type\":\"stdout\""[..], b"data: x\n", b"event: e\n", b"data: \xe6\x97"] {
            let (events, end) = read(&[b"data: first\n\n", cut]);
            assert_eq!(events, vec![SseEvent { event: None, data: "first".into() }]);
            assert_eq!(end, SseEnd::MidEvent, "{cut:?}");
        }
        assert_eq!(read(&[b"data: first\n\n: comment only\n"]).1, SseEnd::Clean);
    }

    #[test]
    fn an_event_field_without_data_dispatches_nothing() {
        assert_eq!(read(&[b"event: ping\n\ndata: x\n\n"]).0, vec![SseEvent { event: None, data: "x".into() }]);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(read(&[b"data: a\xffb\n\n"]).0[0].data, "a\u{fffd}b");
    }
}
