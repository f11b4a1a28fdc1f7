//! Retry policy for provider requests: which outcomes are retried, and after how long.
//!
//! Transport layer, pure: it decides, the fetch loop sleeps and re-sends. It mirrors the
//! `@vercel/sandbox` 3.5.0 wrapper (3 attempts, 400 ms × 2^k with jitter, `Retry-After` ≤ 20 s)
//! with one deliberate difference: a non-idempotent request (a command `POST`) is never re-sent
//! once it may have reached the server, so network errors and 5xx are not retried for it.
//! Stopping on abort and at the caller's deadline is the caller's job.
//!
//! Source: vercel-sandbox-protocol.md §5 (Retry behaviour), §12; STYLE.md §2.4 (Retries).

/// How many attempts to make and how long to wait between them.
///
/// Defaults: 3 attempts, 400 ms base delay, factor 2, `Retry-After` capped at 20 000 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first one (3 = up to 2 retries).
    pub max_attempts: u32,
    /// Delay before the first retry without jitter, in ms.
    pub base_delay_ms: u64,
    /// Multiplier of the delay for each further retry.
    pub factor: u64,
    /// A 429 whose `Retry-After` asks for longer than this (ms) is not retried at all.
    pub max_retry_after_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 3, base_delay_ms: 400, factor: 2, max_retry_after_ms: 20_000 }
    }
}

/// Whether a request may be sent again after it may have reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestSafety {
    /// Re-sending has no extra effect (create is treated so by the SDK, reads, writes of the
    /// same archive, stop): network errors, 429 and 5xx are retried.
    Idempotent,
    /// Re-sending may repeat an effect (running a command): only 429 is retried, because the
    /// server refused the request without acting on it.
    NonIdempotent,
}

/// What one attempt produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The request failed before a response arrived (fetch rejected).
    NetworkError,
    /// A response arrived with this HTTP `status` and raw `Retry-After` header value.
    Status {
        /// The HTTP status code.
        status: u16,
        /// The raw `Retry-After` header, if any.
        retry_after: Option<String>,
    },
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// Send the request again after `delay_ms` ms.
    Retry {
        /// Wait before the next attempt, in ms.
        delay_ms: u64,
    },
    /// Stop: use this outcome as the final one (success or error).
    GiveUp,
}

impl RetryPolicy {
    /// Decides whether to retry after `attempts_done` attempts (1 after the first one) ended
    /// with `outcome`. `jitter` is a random number in `[0, 1)` (clamped).
    ///
    /// Rules: statuses below 400 and 4xx other than 429 give up; network errors and 5xx are
    /// retried only for [`RequestSafety::Idempotent`]; 429 is retried for both; all only while
    /// `attempts_done < max_attempts`. The delay is
    /// `round((1 + jitter) × base_delay_ms × factor^(attempts_done − 1))`; for a 429 with a
    /// numeric `Retry-After` of N s it is `N × 1000 + delay`, and a `Retry-After` above
    /// `max_retry_after_ms` gives up at once.
    pub fn decide(
        &self,
        attempts_done: u32,
        outcome: &AttemptOutcome,
        safety: RequestSafety,
        jitter: f64,
    ) -> RetryDecision {
        let retry_after_ms = match outcome {
            AttemptOutcome::NetworkError => {
                if safety == RequestSafety::NonIdempotent {
                    return RetryDecision::GiveUp;
                }
                0
            }
            AttemptOutcome::Status { status: 429, retry_after } => {
                let wait = retry_after.as_deref().and_then(parse_retry_after_ms).unwrap_or(0);
                if wait > self.max_retry_after_ms {
                    return RetryDecision::GiveUp;
                }
                wait
            }
            AttemptOutcome::Status { status, .. } if (500..=599).contains(status) => {
                if safety == RequestSafety::NonIdempotent {
                    return RetryDecision::GiveUp;
                }
                0
            }
            AttemptOutcome::Status { .. } => return RetryDecision::GiveUp,
        };
        if attempts_done >= self.max_attempts {
            return RetryDecision::GiveUp;
        }
        let delay_ms = retry_after_ms.saturating_add(self.backoff_ms(attempts_done, jitter));
        RetryDecision::Retry { delay_ms }
    }

    /// `round((1 + jitter) × base_delay_ms × factor^(attempts_done − 1))`, saturating.
    fn backoff_ms(&self, attempts_done: u32, jitter: f64) -> u64 {
        let jitter = if jitter.is_finite() { jitter.clamp(0.0, 1.0) } else { 0.0 };
        let exponent = attempts_done.saturating_sub(1);
        let base = self.base_delay_ms.saturating_mul(self.factor.saturating_pow(exponent));
        let delay = ((1.0 + jitter) * base as f64).round();
        if delay >= u64::MAX as f64 {
            u64::MAX
        } else {
            delay as u64
        }
    }
}

/// Parses a `Retry-After` header given in delta-seconds (e.g. `"3"`) into ms.
///
/// Returns `None` for anything else, including the HTTP-date form, which the Vercel SDK does
/// not honour either.
pub fn parse_retry_after_ms(value: &str) -> Option<u64> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Digits only, so a parse failure can only be an overflow: saturate.
    Some(value.parse::<u64>().unwrap_or(u64::MAX).saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RequestSafety::{Idempotent, NonIdempotent};

    fn status(status: u16) -> AttemptOutcome {
        AttemptOutcome::Status { status, retry_after: None }
    }

    fn too_many(retry_after: &str) -> AttemptOutcome {
        AttemptOutcome::Status { status: 429, retry_after: Some(retry_after.to_owned()) }
    }

    #[test]
    fn defaults() {
        let p = RetryPolicy::default();
        assert_eq!((p.max_attempts, p.base_delay_ms, p.factor, p.max_retry_after_ms), (3, 400, 2, 20_000));
    }

    #[test]
    fn success_and_client_errors_give_up() {
        let p = RetryPolicy::default();
        for s in [200, 204, 301, 400, 401, 404, 410, 415, 422] {
            assert_eq!(p.decide(1, &status(s), Idempotent, 0.5), RetryDecision::GiveUp, "{s}");
        }
    }

    #[test]
    fn backoff_grows_with_jitter() {
        let p = RetryPolicy::default();
        assert_eq!(p.decide(1, &status(503), Idempotent, 0.0), RetryDecision::Retry { delay_ms: 400 });
        assert_eq!(p.decide(1, &status(500), Idempotent, 0.5), RetryDecision::Retry { delay_ms: 600 });
        assert_eq!(p.decide(2, &status(502), Idempotent, 0.0), RetryDecision::Retry { delay_ms: 800 });
        assert_eq!(
            p.decide(2, &AttemptOutcome::NetworkError, Idempotent, 0.999),
            RetryDecision::Retry { delay_ms: 1599 }
        );
        assert_eq!(p.decide(1, &status(503), Idempotent, 7.0), RetryDecision::Retry { delay_ms: 800 });
    }

    #[test]
    fn stops_after_max_attempts() {
        let p = RetryPolicy::default();
        assert_eq!(p.decide(3, &status(503), Idempotent, 0.0), RetryDecision::GiveUp);
        assert_eq!(p.decide(3, &AttemptOutcome::NetworkError, Idempotent, 0.0), RetryDecision::GiveUp);
        assert_eq!(p.decide(3, &too_many("1"), NonIdempotent, 0.0), RetryDecision::GiveUp);
    }

    #[test]
    fn non_idempotent_is_never_resent_after_it_may_have_arrived() {
        let p = RetryPolicy::default();
        assert_eq!(p.decide(1, &AttemptOutcome::NetworkError, NonIdempotent, 0.0), RetryDecision::GiveUp);
        assert_eq!(p.decide(1, &status(500), NonIdempotent, 0.0), RetryDecision::GiveUp);
        assert_eq!(p.decide(1, &status(503), NonIdempotent, 0.0), RetryDecision::GiveUp);
        assert_eq!(p.decide(1, &status(429), NonIdempotent, 0.0), RetryDecision::Retry { delay_ms: 400 });
    }

    #[test]
    fn retry_after_is_added_and_capped() {
        let p = RetryPolicy::default();
        assert_eq!(p.decide(1, &too_many("2"), Idempotent, 0.0), RetryDecision::Retry { delay_ms: 2400 });
        assert_eq!(p.decide(2, &too_many("20"), Idempotent, 0.0), RetryDecision::Retry { delay_ms: 20_800 });
        assert_eq!(p.decide(1, &too_many("21"), Idempotent, 0.0), RetryDecision::GiveUp);
        assert_eq!(p.decide(1, &too_many("0"), Idempotent, 0.0), RetryDecision::Retry { delay_ms: 400 });
        assert_eq!(
            p.decide(1, &too_many("Wed, 21 Oct 2015 07:28:00 GMT"), Idempotent, 0.0),
            RetryDecision::Retry { delay_ms: 400 }
        );
    }

    #[test]
    fn parses_delta_seconds_only() {
        assert_eq!(parse_retry_after_ms("3"), Some(3000));
        assert_eq!(parse_retry_after_ms(" 0 "), Some(0));
        assert_eq!(parse_retry_after_ms("1.5"), None);
        assert_eq!(parse_retry_after_ms("-1"), None);
        assert_eq!(parse_retry_after_ms(""), None);
        assert_eq!(parse_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after_ms("99999999999999999999999"), Some(u64::MAX));
    }
}
