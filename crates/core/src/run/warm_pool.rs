//! The `warmPool` option of `configureSandbox` and `hubSandbox`: per Definition, Boxes opened
//! ahead of its next Runs, with its files and harness written (the runtime's `run/warm_pool.rs`
//! keeps them). Off unless configured.
//!
//! Shape: `{ size?: 0–16, idleMs?: 1000–3600000 }`: `size` Boxes kept per Definition (default 1;
//! 0 turns the pool off), `idleMs` before an unused one is closed (default 60000). Read through
//! [`WarmPoolOption`], so a value out of range or not a whole number is refused by its key
//! (`warmPool.size is -1; it must be an integer from 0 to 16`).
//!
//! Pure.

use serde::Deserialize;

/// The `warmPool` option, resolved (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "WarmPoolOption")]
pub struct WarmPool {
    /// Boxes kept per Definition, 0 to [`WarmPool::MAX_SIZE`]; 0 keeps none.
    pub size: u32,
    /// ms an unused Box waits before it is closed, [`WarmPool::MIN_IDLE_MS`] to
    /// [`WarmPool::MAX_IDLE_MS`].
    pub idle_ms: u32,
}

impl WarmPool {
    /// Largest `size` (each pooled Box is a live Box at the provider).
    pub const MAX_SIZE: u32 = 16;
    /// `size` when the option leaves it out.
    pub const DEFAULT_SIZE: u32 = 1;
    /// Shortest `idleMs` (one second).
    pub const MIN_IDLE_MS: u32 = 1_000;
    /// Largest `idleMs` (one hour).
    pub const MAX_IDLE_MS: u32 = 3_600_000;
    /// `idleMs` when the option leaves it out (one minute).
    pub const DEFAULT_IDLE_MS: u32 = 60_000;
    /// What a pooled Box lives beyond its idle time and the Definition timeout, in ms: room to
    /// take it just before its idle close, run, recover the result and close it.
    pub const LIFETIME_GRACE_MS: u32 = 90_000;

    /// Whether the pool keeps any Box (`size` > 0).
    pub fn enabled(self) -> bool {
        self.size > 0
    }

    /// The provider lifetime a pooled Box of a Definition with `timeout_ms` is opened with, in
    /// ms: `idleMs` + the timeout + [`WarmPool::LIFETIME_GRACE_MS`], capped at
    /// [`crate::definition::MAX_TIMEOUT_MS`].
    pub fn box_lifetime_ms(self, timeout_ms: u32) -> u32 {
        self.idle_ms
            .saturating_add(timeout_ms)
            .saturating_add(Self::LIFETIME_GRACE_MS)
            .min(crate::definition::MAX_TIMEOUT_MS)
    }
}

/// `warmPool` as written: each key any JSON value, checked by [`WarmPool::try_from`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WarmPoolOption {
    size: Option<serde_json::Value>,
    idle_ms: Option<serde_json::Value>,
}

/// `value` as a whole number from `min` to `max`, or the sentence naming `key` and the range.
fn whole_number_in(key: &str, value: &serde_json::Value, (min, max): (u32, u32), unit: &str) -> Result<u32, String> {
    let number = value.as_f64().filter(|n| n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max));
    // In range of u32 by the filter above, so the cast is exact.
    number.map(|n| n as u32).ok_or_else(|| format!("{key} is {value}; it must be an integer from {min} to {max}{unit}"))
}

impl TryFrom<WarmPoolOption> for WarmPool {
    type Error = String;

    fn try_from(option: WarmPoolOption) -> Result<WarmPool, String> {
        let size = option
            .size
            .filter(|v| !v.is_null())
            .map(|v| whole_number_in("warmPool.size", &v, (0, WarmPool::MAX_SIZE), ""))
            .transpose()?
            .unwrap_or(WarmPool::DEFAULT_SIZE);
        let idle_ms = option
            .idle_ms
            .filter(|v| !v.is_null())
            .map(|v| whole_number_in("warmPool.idleMs", &v, (WarmPool::MIN_IDLE_MS, WarmPool::MAX_IDLE_MS), " ms"))
            .transpose()?
            .unwrap_or(WarmPool::DEFAULT_IDLE_MS);
        Ok(WarmPool { size, idle_ms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: serde_json::Value) -> Result<WarmPool, String> {
        WarmPool::deserialize(value).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_ranges_and_lifetime() {
        assert_eq!(read(json!({})).unwrap(), WarmPool { size: 1, idle_ms: 60_000 });
        assert_eq!(read(json!({"size": 16, "idleMs": 3_600_000})).unwrap(), WarmPool { size: 16, idle_ms: 3_600_000 });
        assert!(!read(json!({"size": 0})).unwrap().enabled());
        for (value, words) in [
            (json!({"size": 17}), "warmPool.size is 17; it must be an integer from 0 to 16"),
            (json!({"size": -1}), "warmPool.size is -1; it must be an integer from 0 to 16"),
            (json!({"size": 1.5}), "warmPool.size is 1.5; it must be an integer from 0 to 16"),
            (json!({"size": "2"}), "warmPool.size is \"2\"; it must be an integer from 0 to 16"),
            (json!({"idleMs": 999}), "warmPool.idleMs is 999; it must be an integer from 1000 to 3600000 ms"),
        ] {
            assert_eq!(read(value).unwrap_err(), words);
        }
        assert!(read(json!({"count": 1})).unwrap_err().starts_with("unknown field `count`"));
        let pool = WarmPool { size: 1, idle_ms: 10_000 };
        assert_eq!(pool.box_lifetime_ms(300_000), 400_000);
        assert_eq!(pool.box_lifetime_ms(u32::MAX), crate::definition::MAX_TIMEOUT_MS);
    }
}
