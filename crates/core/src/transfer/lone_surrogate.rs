//! Strings that are not well-formed UTF-16 (a lone surrogate, as `'👋'.slice(0, 1)` leaves) in an
//! envelope.
//!
//! JSON keeps them (`JSON.stringify` writes `"\ud83d"`), but a Rust `String` cannot hold them, so
//! the envelope carries such a string as a marker: its text with each lone surrogate replaced by
//! U+FFFD (one UTF-16 code unit, so positions are unchanged), and the replaced units by position.
//!
//! Shape: `{ "vitehub:sandbox:value": { "tag": "string", "text": "\u{FFFD} hello",
//! "lone": [[0, 55357]] } }` (positions and units are UTF-16 code units).
//!
//! Source: docs/internals/transfer.md "Envelopes"; ECMA-262 "Well-Formed JSON.stringify".

use serde_json::{json, Value};

use super::VALUE_MARKER;

/// The marker's `tag`.
pub const STRING_TAG: &str = "string";

/// The marker standing for the UTF-16 string `units` (which holds at least one lone surrogate;
/// a well-formed one gives a marker too, with `lone` empty).
pub fn string_marker(units: &[u16]) -> Value {
    let mut lone = Vec::new();
    let mut position = 0usize;
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(c) => position += c.len_utf16(),
            Err(error) => {
                lone.push(json!([position, error.unpaired_surrogate()]));
                position += 1;
            }
        }
    }
    json!({ VALUE_MARKER: { "tag": STRING_TAG, "text": String::from_utf16_lossy(units), "lone": lone } })
}

/// The UTF-16 code units of a string marker's body (`{tag: "string", text, lone}`); `None` when it
/// is not a valid one (a position out of range or not at a U+FFFD, a unit that is not a surrogate).
pub fn string_units(marker: &Value) -> Option<Vec<u16>> {
    let mut units: Vec<u16> = marker.get("text")?.as_str()?.encode_utf16().collect();
    for pair in marker.get("lone")?.as_array()? {
        let position = usize::try_from(pair.get(0)?.as_u64()?).ok()?;
        let unit = u16::try_from(pair.get(1)?.as_u64()?).ok().filter(|unit| (0xD800..=0xDFFF).contains(unit))?;
        let slot = units.get_mut(position).filter(|slot| **slot == 0xFFFD)?;
        *slot = unit;
    }
    Some(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(marker: &Value) -> &Value {
        &marker[VALUE_MARKER]
    }

    #[test]
    fn a_lone_surrogate_round_trips_at_its_position() {
        let wave: Vec<u16> = "👋 hello".encode_utf16().collect();
        for units in [
            vec![wave[0]],
            [&wave[1..], &wave[..1]].concat(),
            [&wave[..1], &wave[2..], &wave[..]].concat(),
            vec![0xDC00, 0xD800],
        ] {
            let marker = string_marker(&units);
            assert_eq!(body(&marker)["tag"], "string");
            assert_eq!(string_units(body(&marker)).as_deref(), Some(units.as_slice()), "{marker}");
        }
        let marker = string_marker(&[0x61, 0xD83D, 0x62]);
        assert_eq!(body(&marker)["text"], "a\u{FFFD}b");
        assert_eq!(body(&marker)["lone"], json!([[1, 0xD83D]]));
    }

    #[test]
    fn a_forged_marker_is_refused() {
        for forged in [
            json!({ "text": "ab", "lone": [[0, 0xD83D]] }),
            json!({ "text": "\u{FFFD}", "lone": [[1, 0xD83D]] }),
            json!({ "text": "\u{FFFD}", "lone": [[0, 0x61]] }),
            json!({ "text": "\u{FFFD}", "lone": [[0]] }),
            json!({ "text": 1, "lone": [] }),
        ] {
            assert_eq!(string_units(&forged), None, "{forged}");
        }
    }
}
