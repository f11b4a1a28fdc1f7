//! Transfer limits: how much a Run may move into and out of a Box, checked before any provider
//! call (input) and when recovering the result (output).
//!
//! Transfer layer, pure. Limit errors are `SANDBOX_TRANSFER_LIMIT` with
//! `details {limit, value, maximum}`; input-side ones are 413, output-side ones 500.
//!
//! Source: DESIGN.md §6 (Transfer), contract note §1.5–1.6 (R0071).

use crate::error::{Direction, Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};

/// Upper bound of every limit value: 1 GiB (1 073 741 824).
pub const MAX_LIMIT_VALUE: u64 = 1_073_741_824;

/// The transfer limits of a Run.
///
/// Shape (serde camelCase, missing keys take the defaults, unknown keys rejected):
/// ```ts
/// { maxInputBytes?: number, maxOutputBytes?: number, maxDepth?: number,
///   maxSidecars?: number, maxSidecarBytes?: number }
/// ```
/// Defaults: 4 MiB, 4 MiB, 32, 64, 64 MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferLimits {
    /// Maximum size of the encoded input envelope (payload + context), in bytes.
    pub max_input_bytes: u64,
    /// Maximum size of the encoded result envelope, in bytes.
    pub max_output_bytes: u64,
    /// Maximum nesting depth of a transferred value (objects and arrays).
    pub max_depth: u32,
    /// Maximum number of binary sidecars in one direction.
    pub max_sidecars: u32,
    /// Maximum total size of the binary sidecars in one direction, in bytes.
    pub max_sidecar_bytes: u64,
}

impl Default for TransferLimits {
    fn default() -> Self {
        TransferLimits {
            max_input_bytes: 4 * 1024 * 1024,
            max_output_bytes: 4 * 1024 * 1024,
            max_depth: 32,
            max_sidecars: 64,
            max_sidecar_bytes: 64 * 1024 * 1024,
        }
    }
}

fn limit_error(name: &str, value: u64, maximum: u64, direction: Direction) -> Error {
    let what = match direction {
        Direction::Input => "input",
        Direction::Output => "result",
    };
    let err = Error::new(ErrorCode::TransferLimit, format!("The sandbox {what} exceeds {name}: {value} > {maximum}."))
        .with_limit(name, value, maximum);
    match direction {
        Direction::Input => err,
        Direction::Output => err.for_output(),
    }
}

impl TransferLimits {
    /// Each limit by its public (camelCase) name, in a fixed order: `maxInputBytes`,
    /// `maxOutputBytes` (bytes), `maxDepth` (levels), `maxSidecars` (count), `maxSidecarBytes`
    /// (bytes). The names are those of `configureSandbox({ transfer })` and of error details.
    pub fn named(&self) -> [(&'static str, u64); 5] {
        [
            ("maxInputBytes", self.max_input_bytes),
            ("maxOutputBytes", self.max_output_bytes),
            ("maxDepth", u64::from(self.max_depth)),
            ("maxSidecars", u64::from(self.max_sidecars)),
            ("maxSidecarBytes", self.max_sidecar_bytes),
        ]
    }

    /// Checks that every limit is a positive integer ≤ [`MAX_LIMIT_VALUE`].
    ///
    /// # Errors
    /// `InvalidArgument` naming the first offending limit, e.g.
    /// "transfer.maxDepth must be a positive integer <= 1073741824 (got 0)".
    pub fn validate(&self) -> Result<()> {
        for (name, value) in self.named() {
            if value == 0 || value > MAX_LIMIT_VALUE {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("transfer.{name} must be a positive integer <= {MAX_LIMIT_VALUE} (got {value})"),
                ));
            }
        }
        Ok(())
    }

    /// Checks the encoded input envelope size `n` (bytes) against `maxInputBytes`.
    ///
    /// # Errors
    /// `TransferLimit` (413) with details `{limit: "maxInputBytes", value: n, maximum}`.
    pub fn check_input_bytes(&self, n: u64) -> Result<()> {
        if n > self.max_input_bytes {
            return Err(limit_error("maxInputBytes", n, self.max_input_bytes, Direction::Input));
        }
        Ok(())
    }

    /// Checks the encoded result envelope size `n` (bytes) against `maxOutputBytes`.
    ///
    /// # Errors
    /// `TransferLimit` (output, 500) with details `{limit: "maxOutputBytes", value: n, maximum}`.
    pub fn check_output_bytes(&self, n: u64) -> Result<()> {
        if n > self.max_output_bytes {
            return Err(limit_error("maxOutputBytes", n, self.max_output_bytes, Direction::Output));
        }
        Ok(())
    }

    /// Checks a value nesting `depth` against `maxDepth`.
    ///
    /// # Errors
    /// `TransferLimit` with details `{limit: "maxDepth", value: depth, maximum}`; 413 for
    /// [`Direction::Input`], 500 for [`Direction::Output`].
    pub fn check_depth(&self, depth: u32, direction: Direction) -> Result<()> {
        if depth > self.max_depth {
            return Err(limit_error("maxDepth", u64::from(depth), u64::from(self.max_depth), direction));
        }
        Ok(())
    }

    /// Checks the sidecar `count` against `maxSidecars`, then their `total_bytes` against
    /// `maxSidecarBytes`.
    ///
    /// # Errors
    /// `TransferLimit` with details `{limit: "maxSidecars" | "maxSidecarBytes", value, maximum}`;
    /// 413 for [`Direction::Input`], 500 for [`Direction::Output`].
    pub fn check_sidecars(&self, count: u32, total_bytes: u64, direction: Direction) -> Result<()> {
        if count > self.max_sidecars {
            return Err(limit_error("maxSidecars", u64::from(count), u64::from(self.max_sidecars), direction));
        }
        if total_bytes > self.max_sidecar_bytes {
            return Err(limit_error("maxSidecarBytes", total_bytes, self.max_sidecar_bytes, direction));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_serde() {
        let limits = TransferLimits::default();
        assert_eq!(
            serde_json::to_value(limits).unwrap(),
            json!({"maxInputBytes": 4194304, "maxOutputBytes": 4194304, "maxDepth": 32,
                "maxSidecars": 64, "maxSidecarBytes": 67108864})
        );
        let partial: TransferLimits = serde_json::from_value(json!({"maxDepth": 8})).unwrap();
        assert_eq!(partial, TransferLimits { max_depth: 8, ..TransferLimits::default() });
        assert!(serde_json::from_value::<TransferLimits>(json!({"maxBytes": 1})).is_err());
        limits.validate().unwrap();
    }

    #[test]
    fn validate_rejects_zero_and_too_large() {
        let zero = TransferLimits { max_depth: 0, ..TransferLimits::default() };
        let err = zero.validate().unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert_eq!(err.message(), "transfer.maxDepth must be a positive integer <= 1073741824 (got 0)");
        let big = TransferLimits { max_sidecar_bytes: MAX_LIMIT_VALUE + 1, ..TransferLimits::default() };
        assert_eq!(
            big.validate().unwrap_err().message(),
            "transfer.maxSidecarBytes must be a positive integer <= 1073741824 (got 1073741825)"
        );
        let edge = TransferLimits { max_input_bytes: MAX_LIMIT_VALUE, ..TransferLimits::default() };
        edge.validate().unwrap();
    }

    #[test]
    fn input_and_output_bytes() {
        let limits = TransferLimits { max_input_bytes: 10, max_output_bytes: 20, ..TransferLimits::default() };
        limits.check_input_bytes(10).unwrap();
        let err = limits.check_input_bytes(11).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TransferLimit);
        assert_eq!(err.http_status(), 413);
        assert_eq!(
            err.to_json_body()["error"]["details"],
            json!({"limit": "maxInputBytes", "value": 11, "maximum": 10})
        );
        limits.check_output_bytes(20).unwrap();
        let err = limits.check_output_bytes(21).unwrap_err();
        assert_eq!(err.http_status(), 500);
        assert_eq!(err.details().limit.as_deref(), Some("maxOutputBytes"));
    }

    #[test]
    fn sidecars_and_depth() {
        let limits =
            TransferLimits { max_sidecars: 2, max_sidecar_bytes: 100, max_depth: 3, ..TransferLimits::default() };
        limits.check_sidecars(2, 100, Direction::Input).unwrap();
        let err = limits.check_sidecars(3, 0, Direction::Input).unwrap_err();
        assert_eq!((err.details().limit.as_deref(), err.http_status()), (Some("maxSidecars"), 413));
        let err = limits.check_sidecars(1, 101, Direction::Output).unwrap_err();
        assert_eq!((err.details().limit.as_deref(), err.http_status()), (Some("maxSidecarBytes"), 500));
        limits.check_depth(3, Direction::Input).unwrap();
        let err = limits.check_depth(4, Direction::Output).unwrap_err();
        assert_eq!(err.details().value, Some(4));
        assert_eq!(err.http_status(), 500);
    }
}
