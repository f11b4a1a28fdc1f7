//! Base64 (RFC 4648 §4 standard and §5 URL-safe alphabets), the one codec of the crate.
//!
//! Written here instead of the `base64` crate, whose generic engines cost about 6 KB of the
//! runtime wasm (docs/internals.md "Runtime size"). It behaves as the crate's `general_purpose`
//! engines do, errors and their text included: decoding is strict (no whitespace, no bits set
//! past the last byte, padding exactly as the engine requires). The tests compare it with the
//! crate (a dev-dependency) on every short input and on random ones.

use std::fmt;

/// Which of the engines of the `base64` crate this codec stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `STANDARD`: `+` and `/`, padded with `=` (required when decoding).
    Standard,
    /// `STANDARD_NO_PAD`: `+` and `/`, no padding (refused when decoding).
    StandardNoPad,
    /// `URL_SAFE`: `-` and `_`, padded.
    UrlSafe,
    /// `URL_SAFE_NO_PAD`: `-` and `_`, no padding.
    UrlSafeNoPad,
}

/// Why a text is not base64, as the `base64` crate's `DecodeError` says it (same `Display`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A byte outside the alphabet (or a misplaced `=`) at this offset.
    InvalidByte(usize, u8),
    /// One symbol too many at the end (a length of 4n + 1 symbols); the offset of the end.
    InvalidLength(usize),
    /// The last symbol sets bits past the last byte (a non-canonical encoding).
    InvalidLastSymbol(usize, u8),
    /// Padding missing (padded engines) or present (no-pad engines).
    InvalidPadding,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::InvalidByte(index, byte) => write!(f, "Invalid symbol {byte}, offset {index}."),
            DecodeError::InvalidLength(len) => write!(f, "Invalid input length: {len}"),
            DecodeError::InvalidLastSymbol(index, byte) => write!(f, "Invalid last symbol {byte}, offset {index}."),
            DecodeError::InvalidPadding => f.write_str("Invalid padding"),
        }
    }
}

const PAD: u8 = b'=';

impl Engine {
    fn url_safe(self) -> bool {
        matches!(self, Engine::UrlSafe | Engine::UrlSafeNoPad)
    }

    fn padded(self) -> bool {
        matches!(self, Engine::Standard | Engine::UrlSafe)
    }

    fn symbol(self, value: u8) -> u8 {
        match value {
            0..=25 => b'A' + value,
            26..=51 => b'a' + value - 26,
            52..=61 => b'0' + value - 52,
            62 if self.url_safe() => b'-',
            63 if self.url_safe() => b'_',
            62 => b'+',
            _ => b'/',
        }
    }

    fn value(self, symbol: u8) -> Option<u8> {
        Some(match symbol {
            b'A'..=b'Z' => symbol - b'A',
            b'a'..=b'z' => symbol - b'a' + 26,
            b'0'..=b'9' => symbol - b'0' + 52,
            b'-' if self.url_safe() => 62,
            b'_' if self.url_safe() => 63,
            b'+' if !self.url_safe() => 62,
            b'/' if !self.url_safe() => 63,
            _ => return None,
        })
    }

    /// `bytes` in base64.
    pub fn encode(self, bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(char::from(self.symbol((n >> (18 - 6 * i)) as u8 & 63)));
            }
            if self.padded() {
                for _ in chunk.len()..3 {
                    out.push('=');
                }
            }
        }
        out
    }

    /// The bytes `text` encodes.
    ///
    /// # Errors
    /// A [`DecodeError`], the first the `base64` crate would report for the same text.
    pub fn decode(self, text: impl AsRef<[u8]>) -> Result<Vec<u8>, DecodeError> {
        let input = text.as_ref();
        let rem = input.len() % 4;
        // A trailing byte outside the alphabet (a newline, say) is reported first, as the crate does.
        if rem == 1 {
            let last = input[input.len() - 1];
            if last != PAD && self.value(last).is_none() {
                return Err(DecodeError::InvalidByte(input.len() - 1, last));
            }
        }
        // Every quad but the last (complete or not) holds no padding.
        let body = input.len().saturating_sub(rem).saturating_sub(usize::from(rem == 0) * 4);
        let mut out = Vec::with_capacity(input.len() / 4 * 3 + 3);
        for (quad_index, quad) in input[..body].chunks(4).enumerate() {
            let mut n = 0u32;
            for (i, symbol) in quad.iter().enumerate() {
                let value = self.value(*symbol).ok_or(DecodeError::InvalidByte(quad_index * 4 + i, *symbol))?;
                n = n << 6 | u32::from(value);
            }
            out.extend_from_slice(&n.to_be_bytes()[1..]);
        }
        // The last quad: symbols, then padding only.
        let (mut morsels, mut padding, mut first_padding, mut last_symbol, mut n) = (0usize, 0usize, 0usize, 0u8, 0u32);
        for (offset, symbol) in input[body..].iter().enumerate() {
            if *symbol == PAD {
                if offset < 2 {
                    return Err(DecodeError::InvalidByte(body + offset, PAD));
                }
                if padding == 0 {
                    first_padding = offset;
                }
                padding += 1;
                continue;
            }
            if padding > 0 {
                return Err(DecodeError::InvalidByte(body + first_padding, PAD));
            }
            let value = self.value(*symbol).ok_or(DecodeError::InvalidByte(body + offset, *symbol))?;
            last_symbol = *symbol;
            n |= u32::from(value) << (26 - 6 * morsels);
            morsels += 1;
        }
        if !input.is_empty() && morsels < 2 {
            return Err(DecodeError::InvalidLength(body + morsels));
        }
        if if self.padded() { (padding + morsels) % 4 != 0 } else { padding > 0 } {
            return Err(DecodeError::InvalidPadding);
        }
        let bytes = morsels * 6 / 8;
        if n & (u32::MAX >> (bytes * 8)) != 0 {
            return Err(DecodeError::InvalidLastSymbol(body + morsels - 1, last_symbol));
        }
        out.extend_from_slice(&n.to_be_bytes()[..bytes]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{DecodeError, Engine};
    use ::base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use ::base64::Engine as _;

    const ENGINES: [(Engine, &::base64::engine::GeneralPurpose); 4] =
        [(Engine::Standard, &STANDARD), (Engine::StandardNoPad, &STANDARD_NO_PAD), (Engine::UrlSafe, &URL_SAFE), (Engine::UrlSafeNoPad, &URL_SAFE_NO_PAD)];

    fn same_as_the_crate(text: &[u8]) {
        for (ours, theirs) in ENGINES {
            let expected = theirs.decode(text).map_err(|e| e.to_string());
            let got = ours.decode(text).map_err(|e: DecodeError| e.to_string());
            assert_eq!(got, expected, "{ours:?} {:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn encodes_as_the_crate() {
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..bytes.len() {
            for (ours, theirs) in ENGINES {
                assert_eq!(ours.encode(&bytes[..len]), theirs.encode(&bytes[..len]), "{ours:?} {len}");
            }
        }
    }

    #[test]
    fn decodes_every_short_text_as_the_crate() {
        // Every text of up to 5 symbols over an alphabet that hits each rule: both alphabets'
        // extra symbols, padding, a byte of neither, and symbols with low bits set or clear.
        let symbols = b"AQw/+_-=.";
        let mut level: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..5 {
            level = level
                .iter()
                .flat_map(|text| {
                    symbols.iter().map(move |s| {
                        let mut text = text.clone();
                        text.push(*s);
                        text
                    })
                })
                .collect();
            for text in &level {
                same_as_the_crate(text);
            }
        }
        same_as_the_crate(b"");
    }

    #[test]
    fn decodes_round_trips_and_random_texts_as_the_crate() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let len = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            for (ours, theirs) in ENGINES {
                let text = theirs.encode(&bytes);
                assert_eq!(ours.decode(&text), Ok(bytes.clone()));
                same_as_the_crate(text.as_bytes());
                // One symbol changed, dropped or added.
                let mut changed = text.clone().into_bytes();
                if !changed.is_empty() {
                    let at = (next() as usize) % changed.len();
                    changed[at] = b"A/_=\n+-"[(next() % 7) as usize];
                    same_as_the_crate(&changed);
                    changed.remove(at);
                    same_as_the_crate(&changed);
                }
                changed.push(b'=');
                same_as_the_crate(&changed);
            }
        }
    }
}
