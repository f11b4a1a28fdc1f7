//! Property tests of the pure parsers (issue 9, item 9): arbitrary input never panics, and what
//! is split anywhere reads as what was whole. Native `cargo test --lib` only (proptest is a
//! native dev-dependency).

use proptest::prelude::*;

use crate::http::ndjson::NdjsonReader;
use crate::http::sse::SseReader;
use crate::provider::vercel::wire::parse_command_stream_line;
use crate::transfer::box_file::{validate_relative_path, BoxFile};
use crate::transfer::frame::{frame_prefix, new_nonce, parse_result_envelope, FrameScanner, StdoutPiece};
use crate::transfer::tar::write_tar;

/// Reads `bytes` through an NDJSON reader in chunks cut at `cuts` (sorted, deduplicated).
fn ndjson_lines(bytes: &[u8], cuts: &[usize]) -> Result<Vec<String>, ()> {
    let mut reader = NdjsonReader::default();
    let mut lines = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let cut = cut.min(bytes.len()).max(from);
        lines.extend(reader.push(&bytes[from..cut]).map_err(|_| ())?);
        from = cut;
    }
    lines.extend(reader.finish().map_err(|_| ())?);
    Ok(lines)
}

fn sse_events(bytes: &[u8], cuts: &[usize]) -> Result<Vec<(Option<String>, String)>, ()> {
    let mut reader = SseReader::default();
    let mut events = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let cut = cut.min(bytes.len()).max(from);
        events.extend(reader.push(&bytes[from..cut]).map_err(|_| ())?.into_iter().map(|e| (e.event, e.data)));
        from = cut;
    }
    Ok(events)
}

/// Feeds `text` to a [`FrameScanner`] for `nonce`, cut at `cuts` (char boundaries only): the
/// entry's output joined, and the frames in order.
fn scan(text: &str, nonce: &str, cuts: &[usize]) -> (String, Vec<String>) {
    let mut scanner = FrameScanner::new(nonce, 1 << 20);
    let mut pieces = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
        let cut = cut.min(text.len());
        if cut < start || !text.is_char_boundary(cut) {
            continue;
        }
        let _ = scanner.push(&text[start..cut], &mut pieces);
        start = cut;
    }
    scanner.finish(&mut pieces);
    let mut output = String::new();
    let mut frames = Vec::new();
    for piece in pieces {
        match piece {
            StdoutPiece::Output(text) => output.push_str(&text),
            StdoutPiece::Frame(json) => frames.push(json),
        }
    }
    (output, frames)
}

fn sorted(mut cuts: Vec<usize>) -> Vec<usize> {
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn ndjson_split_anywhere_reads_as_whole(bytes in proptest::collection::vec(any::<u8>(), 0..512), cuts in proptest::collection::vec(0usize..512, 0..8)) {
        let whole = ndjson_lines(&bytes, &[]);
        let split = ndjson_lines(&bytes, &sorted(cuts));
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn ndjson_lines_of_text_round_trip(lines in proptest::collection::vec("[^\n\r]{0,40}", 0..8), cuts in proptest::collection::vec(0usize..400, 0..6)) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        // Lines of ASCII whitespace only are skipped; every other line comes back exactly.
        let expected: Vec<String> = lines.iter().filter(|l| !l.bytes().all(|b| b.is_ascii_whitespace())).cloned().collect();
        prop_assert_eq!(ndjson_lines(text.as_bytes(), &sorted(cuts)), Ok(expected));
    }

    #[test]
    fn sse_split_anywhere_reads_as_whole(bytes in proptest::collection::vec(any::<u8>(), 0..512), cuts in proptest::collection::vec(0usize..512, 0..8)) {
        prop_assert_eq!(sse_events(&bytes, &[]), sse_events(&bytes, &sorted(cuts)));
    }

    #[test]
    fn command_stream_lines_never_panic(line in ".{0,200}") {
        let _ = parse_command_stream_line(&line);
    }

    #[test]
    fn result_frames_are_found_only_with_their_nonce(
        noise in "[^\n]{0,80}",
        json in "[^\n\r]{0,80}",
        random in any::<[u8; 16]>(),
        other in any::<[u8; 16]>(),
        cuts in proptest::collection::vec(0usize..200, 0..8),
    ) {
        let nonce = new_nonce(&random);
        let stdout = format!("{noise}\n{}{json}\n", frame_prefix(&nonce));
        let (output, frames) = scan(&stdout, &nonce, &sorted(cuts.clone()));
        prop_assert_eq!(frames, vec![json.clone()]);
        prop_assert_eq!(output, format!("{noise}\n"));
        if other != random {
            let (output, frames) = scan(&stdout, &new_nonce(&other), &sorted(cuts));
            prop_assert!(frames.is_empty());
            prop_assert_eq!(output, stdout);
        }
    }

    #[test]
    fn result_envelopes_never_panic(text in ".{0,300}") {
        let _ = parse_result_envelope(&text);
    }

    #[test]
    fn box_paths_accepted_are_safe(path in "[a-z./\\\\]{0,24}") {
        if validate_relative_path(&path).is_ok() {
            prop_assert!(!path.starts_with('/'));
            prop_assert!(!path.split('/').any(|seg| seg.is_empty() || seg == "." || seg == ".."));
            // An accepted path can be written into a tar.
            let file = BoxFile { path: path.clone(), bytes: b"x".to_vec(), mode: 0o644 };
            prop_assert!(write_tar(&[file]).is_ok());
        }
    }

    #[test]
    fn sandbox_config_json_never_panics(json in "\\{(\"[a-zA-Z]{1,12}\":(\"[a-z:/.]{0,20}\"|[0-9]{1,12}|true|null|\\{\\}),?){0,4}\\}") {
        if let Ok(config) = serde_json::from_str::<crate::config::SandboxConfig>(&json) {
            let _ = config.provider_settings(false);
            let _ = config.select_provider(false);
        }
    }
}
