//! Scrubbing secrets out of text before it can reach an error, a log or a Response.
//!
//! A provider may echo a credential back in any form: as sent, URL-encoded, with its case
//! changed, base64-encoded (as in a `Basic` header), or cut short. Every form is replaced with
//! `[redacted]`; a secret of 8 or more bytes is also caught by any prefix of 8 or more bytes of
//! any of those forms. Matching is ASCII case-insensitive.
//!
//! Pure.

use base64::Engine;

/// Shortest prefix of a secret that is still treated as the secret, in bytes.
const MIN_PREFIX_BYTES: usize = 8;

/// Replaces every occurrence of each non-empty secret in `text`, in every form (see the module
/// docs), with `[redacted]`. Callers run every message that may echo credentials (tokens, env
/// values) through it before building an [`crate::Error`].
pub fn redact(text: &str, secrets: &[&str]) -> String {
    // Each form once (an alphanumeric secret is its own URL encoding); their order does not
    // matter, the longest match wins.
    let mut forms: Vec<String> = Vec::new();
    let mut add = |form: String| {
        if !forms.contains(&form) {
            forms.push(form);
        }
    };
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        add((*secret).to_owned());
        add(url_encoded(secret));
        let g = &base64::engine::general_purpose::STANDARD;
        for engine in [
            g,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            add(engine.encode(secret.as_bytes()));
        }
    }
    replace_forms(text, &forms)
}

/// `text` with every match of any of `forms` replaced by `[redacted]`: at each position the
/// longest match among all forms, a whole form or (for a form of at least [`MIN_PREFIX_BYTES`])
/// a prefix of it of at least that many bytes; ASCII case-insensitive. All forms are tried at
/// each position together: one form's prefix must not cut short a longer match of another (an
/// echoed `abcdefgh+/=xyz` whose URL-encoded form shares its first 8 bytes).
fn replace_forms(text: &str, forms: &[String]) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let longest = forms
            .iter()
            .map(|form| {
                let form = form.as_bytes();
                let min = form.len().min(MIN_PREFIX_BYTES);
                let matched = bytes[i..].iter().zip(form).take_while(|(a, b)| a.eq_ignore_ascii_case(b)).count();
                if matched >= min && text.is_char_boundary(i + matched) {
                    matched
                } else {
                    0
                }
            })
            .max()
            .unwrap_or(0);
        if longest > 0 && text.is_char_boundary(i) {
            out.push_str(&text[start..i]);
            out.push_str("[redacted]");
            i += longest;
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[start..]);
    out
}

/// `secret` percent-encoded as `encodeURIComponent` does (unreserved ASCII kept).
fn url_encoded(secret: &str) -> String {
    let mut out = String::with_capacity(secret.len());
    for byte in secret.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_secrets_are_replaced_longest_first() {
        assert_eq!(redact("token abc123 and abc123x", &["abc123", "", "abc123x"]), "token [redacted] and [redacted]");
        assert_eq!(redact("nothing here", &[]), "nothing here");
    }

    #[test]
    fn every_form_of_a_token_is_replaced() {
        let token = "tok_Secret/Value+42";
        let b64 = base64::engine::general_purpose::STANDARD.encode(token);
        let cases = [
            format!("echo {token} end"),
            format!("echo {} end", url_encoded(token)),
            format!("echo {} end", token.to_uppercase()),
            format!("echo {b64} end"),
            format!("echo {} end", base64::engine::general_purpose::STANDARD.encode(format!("{token}x"))),
            format!("echo {} end", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token)),
            format!("echo {} end", &token[..9]),
            format!("echo {}… end", &url_encoded(token)[..12]),
        ];
        for case in cases {
            let out = redact(&case, &[token]);
            assert!(out.starts_with("echo [redacted]") && out.contains("end"), "{case} → {out}");
            assert!(!out.contains("Secret") && !out.to_lowercase().contains("secret"), "{out}");
        }
    }

    #[test]
    fn short_prefixes_and_short_secrets_are_not_overmatched() {
        let token = "abcdefghijkl";
        assert_eq!(redact("abcdefg is seven", &[token]), "abcdefg is seven");
        assert_eq!(redact("x abcdefgh y", &[token]), "x [redacted] y");
        assert_eq!(redact("keys: abc, abd", &["abc"]), "keys: [redacted], abd");
    }

    #[test]
    fn a_token_with_url_reserved_characters_is_replaced_whole() {
        // Its URL-encoded form shares the first 8 bytes, which must not win over the exact echo.
        let token = "tok_Abc1+/=Abc123XYZ";
        assert_eq!(redact(&format!("echo {token} end"), &[token]), "echo [redacted] end");
        assert_eq!(redact(&format!("echo {} end", url_encoded(token)), &[token]), "echo [redacted] end");
    }

    #[test]
    fn multibyte_text_is_kept_whole() {
        assert_eq!(redact("é abcdefghij é", &["abcdefghij"]), "é [redacted] é");
        assert_eq!(redact("ééééé", &["éé"]), "[redacted][redacted]é");
    }
}
