//! What the Durable Object and the container mean by an answer: the one place that reads their
//! message text (STYLE.md §2.4). Each known phrase becomes a [`Verdict`] (and so an error code)
//! right here, with a unit test per phrase; nothing else in the crate matches message text.
//!
//! Provider layer, pure. Sources: cloudflare-sandbox-protocol.md §3 (the `containerFetch` start
//! failures table, the proxy's plain-text 500s), §4.1 (error codes), §5.2 and §6.4 (sessionless
//! timeout: exit 124 and a stderr line), §1.4 (RPC/transport error texts); the contract note §6.4
//! (the retriable phrases of the TypeScript package).

use crate::error::ErrorCode;
use crate::provider::cloudflare::wire;

/// What an answer of the Durable Object's `fetch` (or its rejection) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The container answered by itself (success or its own error): not a startup problem.
    Container,
    /// The container is starting, or there is no capacity for now: retry with backoff while the
    /// handler has not started; [`ErrorCode::ProviderUnavailable`] when retries run out.
    Starting,
    /// The container could not be started at all (no such image, out of memory):
    /// [`ErrorCode::ProviderUnavailable`] at once.
    StartFailed,
    /// The connection to the container or the Durable Object dropped before an answer: retried
    /// like [`Verdict::Starting`] for requests that are safe to send again,
    /// [`ErrorCode::TransportError`] otherwise.
    Disconnected,
    /// The Durable Object class has no container configured (its constructor throws: wrangler.toml
    /// lacks a `[[containers]]` entry for it): [`ErrorCode::ProviderUnavailable`] at once, never
    /// retried.
    NoContainers,
    /// The binding's class is not the `Sandbox` class of `@cloudflare/sandbox`: the Worker does
    /// not export the class it names (workerd fails every call with `internal error; reference =
    /// <id>`), or it names another class (no `configure` method, or no RPC at all). Told only by
    /// the rejection of `configure` ([`classify_configure_rejection`]).
    /// [`ErrorCode::ProviderUnavailable`] at once, never retried.
    NotSandboxClass,
    /// The Durable Object threw an error of its own (its constructor, say, when a setting it needs
    /// is missing): a rejection in none of the known words of a start or a dropped connection, and
    /// not flagged `retryable` or `overloaded` by workerd. Retrying runs the same code again:
    /// [`ErrorCode::ProviderUnavailable`] at once with its message.
    Thrown,
}

/// What workerd flags on the error of a rejected Durable Object call (its `retryable` and
/// `overloaded` properties, [Durable Object errors]); both `false` when absent.
///
/// [Durable Object errors]: https://developers.cloudflare.com/durable-objects/best-practices/error-handling/
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RejectionFlags {
    /// `error.retryable === true`: a transient failure workerd says a retry may mend.
    pub retryable: bool,
    /// `error.overloaded === true`: the Durable Object is overloaded for now.
    pub overloaded: bool,
}

impl Verdict {
    /// The code of an error with this verdict once no retry is left (or allowed).
    pub fn code(self) -> ErrorCode {
        match self {
            Verdict::Container | Verdict::Disconnected => ErrorCode::TransportError,
            Verdict::Starting
            | Verdict::StartFailed
            | Verdict::NoContainers
            | Verdict::NotSandboxClass
            | Verdict::Thrown => ErrorCode::ProviderUnavailable,
        }
    }

    /// What the app must change, for a verdict that names a configuration error.
    pub fn fix(self) -> Option<&'static str> {
        match self {
            Verdict::NoContainers => Some(NO_CONTAINERS_FIX),
            Verdict::NotSandboxClass => Some(NOT_SANDBOX_CLASS_FIX),
            _ => None,
        }
    }

    /// Whether a request that is safe to send again should be retried after this verdict.
    pub fn is_retryable(self) -> bool {
        matches!(self, Verdict::Starting | Verdict::Disconnected)
    }
}

/// Phrases of a container that is starting or short of capacity (lower case). Sources: §3 table
/// (`CONTAINER_UNAVAILABLE` reasons, "Container is starting…"), contract §6.4.
const STARTING_PHRASES: [&str; 5] = [
    "container is starting",
    "there is no container instance that can be provided to this durable object",
    "maximum number of running container instances exceeded",
    "currently provisioning",
    "retry in a moment",
];

/// Phrases of a dropped connection (lower case): the proxy's plain-text 500s (§3) and the texts of
/// a rejected Durable Object `fetch` (contract §6.4).
const DISCONNECTED_PHRASES: [&str; 5] = [
    "container suddenly disconnected",
    "network connection lost",
    "not listening in the tcp address",
    "durable object reset",
    "code was updated",
];

/// Phrases of a start that cannot succeed (lower case; §3 "permanent" row).
const START_FAILED_PHRASES: [&str; 3] = ["no such image", "out of memory", "did not call start"];

/// What `@cloudflare/containers` throws from the constructor of a class without containers
/// (lower case; its `Container` class, as the `Sandbox` class of @cloudflare/sandbox 0.12.10 extends it).
const NO_CONTAINERS_PHRASE: &str = "containers have not been enabled";

/// The words of a call the runtime could not complete (lower case): workerd's failure of its own
/// (`internal error; reference = …`) and a fetch that found no server (`TypeError: fetch failed`,
/// undici and workerd). Not an error of the Durable Object's code; only a rejection says them.
const CALL_FAILED_PHRASES: [&str; 2] = ["internal error", "fetch failed"];

/// What a Worker without containers for its `Sandbox` class must add (docs/providers/cloudflare.md).
const NO_CONTAINERS_FIX: &str = "the Sandbox Durable Object class has no container: add to wrangler.toml a [[containers]] entry with its class_name (the class the binding names, e.g. \"Sandbox\") and an image (e.g. \"docker.io/cloudflare/sandbox:0.12.10\"), or, under wrangler dev --enable-containers=false, set SANDBOX_LOCAL_URL and SANDBOX_LOCAL_TOKEN in .dev.vars to run Boxes on a local Box host (npx vite-hub-sandbox host prints both); see docs/providers/cloudflare.md";

/// How workerd fails a call to a Durable Object class the Worker does not export, and to a class
/// that is not the SDK's `Sandbox` (lower case; workerd 1.20260730). Only a rejection says them,
/// never a container's answer.
const NOT_SANDBOX_CLASS_PHRASES: [&str; 3] =
    ["internal error; reference =", "does not implement the method", "does not support rpc"];

/// What a Worker whose binding does not reach the `Sandbox` class must change (docs/providers/cloudflare.md).
const NOT_SANDBOX_CLASS_FIX: &str = "the Durable Object binding does not reach the Sandbox class of @cloudflare/sandbox: export { Sandbox } from '@cloudflare/sandbox' in the Worker's main module and name it as class_name of the [[durable_objects.bindings]] entry; see docs/providers/cloudflare.md";

fn contains_any(text: &str, phrases: &[&str]) -> bool {
    let text = text.to_ascii_lowercase();
    phrases.iter().any(|p| text.contains(p))
}

/// Classifies an HTTP answer of the Durable Object's `fetch` from its `status` and body bytes.
///
/// 2xx and 4xx are the container's own answers. A 503 is a start problem whatever its text (the
/// SDK's own HTTP transport retries every 503, §3.1), unless it names a start that cannot
/// succeed. Another 5xx is a start problem only when its text says so, or a dropped connection
/// when it is one of the proxy's plain-text failures; the container's own 500s
/// (`COMMAND_EXECUTION_ERROR`, …) are neither.
pub fn classify_answer(status: u16, body: &[u8]) -> Verdict {
    if status < 500 {
        return Verdict::Container;
    }
    let text = match wire::error_body(body) {
        Some(b) => format!("{} {}", b.code.unwrap_or_default(), b.message.unwrap_or_default()),
        None => String::from_utf8_lossy(body).into_owned(),
    };
    if contains_any(&text, &[NO_CONTAINERS_PHRASE]) {
        return Verdict::NoContainers;
    }
    if contains_any(&text, &START_FAILED_PHRASES) {
        return Verdict::StartFailed;
    }
    if status == 503 || contains_any(&text, &STARTING_PHRASES) || text.contains("CONTAINER_UNAVAILABLE") {
        return Verdict::Starting;
    }
    if contains_any(&text, &DISCONNECTED_PHRASES)
        || text.to_ascii_lowercase().starts_with("error proxying request to container")
    {
        return Verdict::Disconnected;
    }
    Verdict::Container
}

/// Classifies a rejected Durable Object `fetch` (no HTTP answer at all) from its message and
/// the flags workerd set on it. Known words of a start or a dropped connection come first; then a
/// rejection workerd flags `overloaded` is a start problem and one it flags `retryable` a dropped
/// connection; any other is an error the Durable Object's own code threw ([`Verdict::Thrown`]),
/// which no retry mends.
pub fn classify_rejection(message: &str, flags: RejectionFlags) -> Verdict {
    if contains_any(message, &[NO_CONTAINERS_PHRASE]) {
        Verdict::NoContainers
    } else if contains_any(message, &STARTING_PHRASES) || flags.overloaded {
        Verdict::Starting
    } else if contains_any(message, &START_FAILED_PHRASES) {
        Verdict::StartFailed
    } else if contains_any(message, &DISCONNECTED_PHRASES)
        || contains_any(message, &CALL_FAILED_PHRASES)
        || flags.retryable
    {
        Verdict::Disconnected
    } else {
        Verdict::Thrown
    }
}

/// Classifies the rejection of RPC `configure`, the first call to a Box's Durable Object: also
/// the one that can tell a binding that does not reach the `Sandbox` class
/// ([`Verdict::NotSandboxClass`]); otherwise as [`classify_rejection`].
pub fn classify_configure_rejection(message: &str, flags: RejectionFlags) -> Verdict {
    if contains_any(message, &NOT_SANDBOX_CLASS_PHRASES) {
        Verdict::NotSandboxClass
    } else {
        classify_rejection(message, flags)
    }
}

/// Whether a sessionless `/api/execute` answer is the container's own timeout: exit code 124
/// and a last stderr line `Command timed out after <n>ms` (§5.2, §6.4). A program that exits 124
/// by itself is not a timeout.
pub fn is_sessionless_timeout(exit_code: i32, stderr: &str) -> bool {
    exit_code == 124
        && stderr
            .trim_end()
            .rsplit('\n')
            .next()
            .is_some_and(|line| line.starts_with("Command timed out after ") && line.ends_with("ms"))
}

/// Bounded backoff for a container that is starting (503s of the Durable Object, dropped
/// connections): retried only for requests that are safe to send again, i.e. before the handler
/// starts.
///
/// Defaults: delays 500 ms × 2^k capped at 8 000 ms, a `Retry-After` (the DO sends 3–10 s) used
/// instead when present and capped at 10 000 ms, at most 10 attempts and 60 000 ms of waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupRetry {
    /// Total attempts including the first.
    pub max_attempts: u32,
    /// First delay, in ms.
    pub base_delay_ms: u64,
    /// Largest single delay, in ms (also caps `Retry-After`).
    pub max_delay_ms: u64,
    /// Most ms spent waiting over all retries of one request.
    pub budget_ms: u64,
}

impl Default for StartupRetry {
    fn default() -> Self {
        StartupRetry { max_attempts: 10, base_delay_ms: 500, max_delay_ms: 8_000, budget_ms: 60_000 }
    }
}

impl StartupRetry {
    /// The wait before attempt `attempts_done + 1`, or `None` when the bound is reached.
    /// `waited_ms` is what earlier retries of the request already waited.
    pub fn delay_ms(&self, attempts_done: u32, waited_ms: u64, retry_after_ms: Option<u64>) -> Option<u64> {
        if attempts_done >= self.max_attempts {
            return None;
        }
        let backoff = self.base_delay_ms.saturating_mul(1u64 << attempts_done.saturating_sub(1).min(20));
        let delay = retry_after_ms.unwrap_or(backoff).min(self.max_delay_ms);
        (waited_ms.saturating_add(delay) <= self.budget_ms).then_some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(status: u16, code: &str, message: &str) -> Verdict {
        classify_answer(
            status,
            format!(r#"{{"code":"{code}","message":"{message}","httpStatus":{status}}}"#).as_bytes(),
        )
    }

    #[test]
    fn success_and_client_errors_are_the_containers() {
        assert_eq!(classify_answer(200, b"{}"), Verdict::Container);
        assert_eq!(json(404, "FILE_NOT_FOUND", "File not found: /x"), Verdict::Container);
        assert_eq!(json(400, "IS_DIRECTORY", "container is starting"), Verdict::Container, "4xx never");
    }

    #[test]
    fn phrase_container_is_starting() {
        assert_eq!(json(503, "INTERNAL_ERROR", "Container is starting. Please retry in a moment."), Verdict::Starting);
        assert_eq!(json(500, "INTERNAL_ERROR", "Container is starting"), Verdict::Starting, "also on a 500");
    }

    #[test]
    fn phrase_no_container_instance() {
        let m = "There is no Container instance that can be provided to this Durable Object, try again later";
        assert_eq!(json(503, "CONTAINER_UNAVAILABLE", m), Verdict::Starting);
        assert_eq!(classify_rejection(m, RejectionFlags::default()), Verdict::Starting);
    }

    #[test]
    fn phrase_maximum_instances_exceeded() {
        assert_eq!(
            json(500, "INTERNAL_ERROR", "Maximum number of running container instances exceeded"),
            Verdict::Starting
        );
    }

    #[test]
    fn phrase_currently_provisioning() {
        assert_eq!(json(500, "INTERNAL_ERROR", "The container is currently provisioning"), Verdict::Starting);
    }

    #[test]
    fn phrase_retry_in_a_moment() {
        assert_eq!(json(500, "INTERNAL_ERROR", "Please retry in a moment"), Verdict::Starting);
    }

    #[test]
    fn code_container_unavailable_and_any_503() {
        assert_eq!(json(500, "CONTAINER_UNAVAILABLE", "capacity"), Verdict::Starting);
        assert_eq!(classify_answer(503, b""), Verdict::Starting);
        assert_eq!(json(503, "INTERNAL_ERROR", "something else"), Verdict::Starting);
    }

    #[test]
    fn phrase_container_suddenly_disconnected() {
        assert_eq!(classify_answer(500, b"Container suddenly disconnected, try again"), Verdict::Disconnected);
    }

    #[test]
    fn phrase_error_proxying_request() {
        assert_eq!(
            classify_answer(500, b"Error proxying request to container: connect ECONNREFUSED"),
            Verdict::Disconnected
        );
    }

    #[test]
    fn phrase_network_connection_lost() {
        assert_eq!(classify_rejection("Network connection lost.", RejectionFlags::default()), Verdict::Disconnected);
        assert_eq!(classify_answer(502, b"network connection lost"), Verdict::Disconnected);
    }

    #[test]
    fn phrase_not_listening() {
        let m = "the container is not listening in the TCP address 10.0.0.1:3000";
        assert_eq!(json(500, "INTERNAL_ERROR", m), Verdict::Disconnected);
        assert_eq!(classify_rejection(m, RejectionFlags::default()), Verdict::Disconnected);
        assert_eq!(json(503, "INTERNAL_ERROR", m), Verdict::Starting, "a 503 is a start problem first");
    }

    #[test]
    fn phrase_durable_object_reset_code_updated() {
        assert_eq!(
            classify_rejection("Durable Object reset because its code was updated.", RejectionFlags::default()),
            Verdict::Disconnected
        );
        assert_eq!(classify_answer(500, b"code was updated"), Verdict::Disconnected);
    }

    #[test]
    fn phrases_of_a_start_that_cannot_succeed() {
        assert_eq!(json(500, "INTERNAL_ERROR", "no such image: cloudflare/sandbox:9"), Verdict::StartFailed);
        assert_eq!(json(500, "INTERNAL_ERROR", "The container ran out of memory"), Verdict::StartFailed);
        assert_eq!(json(500, "INTERNAL_ERROR", "Container did not call start"), Verdict::StartFailed);
        assert_eq!(classify_rejection("no such image", RejectionFlags::default()), Verdict::StartFailed);
    }

    #[test]
    fn a_class_without_containers_is_named_and_never_retried() {
        let thrown = "Error: Containers have not been enabled for this Durable Object class. Have you correctly setup your Wrangler config? More info: https://developers.cloudflare.com/containers/get-started/#configuration";
        assert_eq!(classify_rejection(thrown, RejectionFlags::default()), Verdict::NoContainers);
        assert_eq!(classify_answer(500, thrown.as_bytes()), Verdict::NoContainers);
        assert_eq!(Verdict::NoContainers.code(), ErrorCode::ProviderUnavailable);
        assert!(!Verdict::NoContainers.is_retryable());
        assert!(Verdict::NoContainers.fix().is_some_and(|fix| fix.contains("[[containers]]")));
        assert_eq!(Verdict::Starting.fix(), None);
    }

    #[test]
    fn a_binding_that_does_not_reach_the_sandbox_class_is_named_and_never_retried() {
        let thrown = "Error: internal error; reference = 8e47f1vc2veqm92kan3jqrr2";
        assert_eq!(classify_configure_rejection(thrown, RejectionFlags::default()), Verdict::NotSandboxClass);
        assert_eq!(
            classify_configure_rejection(
                "TypeError: The RPC receiver does not implement the method \"configure\".",
                RejectionFlags::default()
            ),
            Verdict::NotSandboxClass
        );
        assert_eq!(
            classify_configure_rejection("Error: The receiving Durable Object does not support RPC, because its class was not declared with `extends DurableObject`.", RejectionFlags::default()),
            Verdict::NotSandboxClass
        );
        // Only configure tells it: a later container request rejected so lost its connection.
        assert_eq!(classify_rejection(thrown, RejectionFlags::default()), Verdict::Disconnected);
        assert_eq!(
            classify_configure_rejection("Network connection lost.", RejectionFlags::default()),
            Verdict::Disconnected
        );
        assert_eq!(
            classify_configure_rejection(
                "Containers have not been enabled for this Durable Object class.",
                RejectionFlags::default()
            ),
            Verdict::NoContainers
        );
        assert_eq!(Verdict::NotSandboxClass.code(), ErrorCode::ProviderUnavailable);
        assert!(!Verdict::NotSandboxClass.is_retryable());
        assert!(Verdict::NotSandboxClass
            .fix()
            .is_some_and(|fix| fix.contains("export { Sandbox } from '@cloudflare/sandbox'")));
    }

    #[test]
    fn the_containers_own_500s_are_not_start_problems() {
        assert_eq!(json(500, "COMMAND_EXECUTION_ERROR", "Failed to execute command"), Verdict::Container);
        assert_eq!(json(500, "FILESYSTEM_ERROR", "mkdir failed"), Verdict::Container);
    }

    #[test]
    fn phrases_of_a_call_that_failed() {
        assert_eq!(classify_rejection("TypeError: fetch failed", RejectionFlags::default()), Verdict::Disconnected);
        assert_eq!(
            classify_rejection(
                "Error: internal error; reference = 8e47f1vc2veqm92kan3jqrr2",
                RejectionFlags::default()
            ),
            Verdict::Disconnected
        );
    }

    #[test]
    fn an_error_the_durable_object_threw_is_never_retried() {
        // What workerd rejects with when the class's constructor throws (durableObjectReset set,
        // neither retryable nor overloaded): miniflare, tests/cloudflare/cloudflare-misconfig.test.mjs.
        let thrown = "the Sandbox class needs env.API_KEY, which is unset";
        assert_eq!(classify_rejection(thrown, RejectionFlags::default()), Verdict::Thrown);
        assert_eq!(classify_configure_rejection(thrown, RejectionFlags::default()), Verdict::Thrown);
        assert!(!Verdict::Thrown.is_retryable());
        assert_eq!(Verdict::Thrown.code(), ErrorCode::ProviderUnavailable);
    }

    #[test]
    fn workerd_flags_decide_for_words_it_does_not_know() {
        let words = "Durable Object storage operation exceeded timeout";
        assert_eq!(
            classify_rejection(words, RejectionFlags { retryable: true, overloaded: false }),
            Verdict::Disconnected
        );
        assert_eq!(classify_rejection(words, RejectionFlags { retryable: false, overloaded: true }), Verdict::Starting);
        assert_eq!(classify_rejection(words, RejectionFlags::default()), Verdict::Thrown);
    }

    #[test]
    fn verdict_codes() {
        assert_eq!(Verdict::Starting.code(), ErrorCode::ProviderUnavailable);
        assert_eq!(Verdict::StartFailed.code(), ErrorCode::ProviderUnavailable);
        assert_eq!(Verdict::Disconnected.code(), ErrorCode::TransportError);
        assert!(Verdict::Starting.is_retryable() && Verdict::Disconnected.is_retryable());
        assert!(!Verdict::StartFailed.is_retryable() && !Verdict::Container.is_retryable());
    }

    #[test]
    fn startup_retries_are_bounded() {
        let r = StartupRetry::default();
        assert_eq!(r.delay_ms(1, 0, None), Some(500));
        assert_eq!(r.delay_ms(2, 500, None), Some(1000));
        assert_eq!(r.delay_ms(6, 0, None), Some(8000), "capped");
        assert_eq!(r.delay_ms(1, 0, Some(3000)), Some(3000), "Retry-After wins");
        assert_eq!(r.delay_ms(1, 0, Some(60_000)), Some(8000), "and is capped");
        assert_eq!(r.delay_ms(10, 0, None), None, "attempts");
        assert_eq!(r.delay_ms(2, 59_500, None), None, "budget");
        let mut waited = 0;
        let mut attempts = 1;
        while let Some(d) = r.delay_ms(attempts, waited, None) {
            waited += d;
            attempts += 1;
        }
        assert!(waited <= 60_000 && attempts <= 10, "{waited} {attempts}");
    }

    #[test]
    fn phrase_command_timed_out_after() {
        assert!(is_sessionless_timeout(124, "partial\nCommand timed out after 5000ms\n"));
        assert!(!is_sessionless_timeout(124, "exit 124 by itself\n"));
        assert!(!is_sessionless_timeout(1, "Command timed out after 5000ms"));
    }
}
