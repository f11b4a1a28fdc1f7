//! Media type comparison for `content-type` headers (RFC 9110 §8.3.1): the type and subtype are
//! case-insensitive and parameters (`; charset=utf-8`) do not change the type.
//!
//! Pure.

/// Whether the `content-type` value `header` names the media type `expected` (lowercase
/// `type/subtype`), whatever its case and parameters.
pub fn media_type_is(header: &str, expected: &str) -> bool {
    header.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_parameters_do_not_matter() {
        assert!(media_type_is("application/x-ndjson", "application/x-ndjson"));
        assert!(media_type_is("Application/X-NDJSON; charset=utf-8", "application/x-ndjson"));
        assert!(media_type_is(" application/x-ndjson ;x=1", "application/x-ndjson"));
        assert!(!media_type_is("application/x-ndjsonx", "application/x-ndjson"));
        assert!(!media_type_is("application/json", "application/x-ndjson"));
        assert!(!media_type_is("", "application/x-ndjson"));
    }
}
