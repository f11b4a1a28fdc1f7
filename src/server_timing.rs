//! The phases of one Run, for the `Server-Timing` header (W3C Server Timing, ms):
//! `host`, `connect`, `box`, `stage`, `install`, `prepare` (the Run that prepares a project: its
//! snapshot and the create of the Box it goes on in), `exec`, `recover`, `close`; a Run that fails
//! before a Box is opened shows `resolve`, `encode` or `host`.
//!
//! `host` and `connect` appear only in the Run that started the isolate's in-process local Box
//! host (after `warmUp()`, in none): `host` is the start itself (listening; in a worker thread
//! whose process offers a warmed host, runtime/shared-host.mjs, borrowing that one), `connect` the
//! isolate's first request to it (Node loads its fetch implementation and HTTP parser on first
//! use, and opens the kept-alive connection the Run's requests then reuse).
//!
//! A leaf below the Run and the Response, which both use it: it knows clocks and the header's
//! syntax, nothing of providers or Runs.

use crate::sys;

/// Phase durations of a Run, for the `Server-Timing` header (W3C Server Timing).
#[derive(Debug)]
pub struct ServerTiming {
    last_ms: f64,
    phases: Vec<(&'static str, f64)>,
    current: Option<&'static str>,
    descriptions: Vec<(&'static str, &'static str)>,
}

impl ServerTiming {
    /// Starts the clock.
    pub fn start() -> ServerTiming {
        ServerTiming { last_ms: sys::performance_now(), phases: Vec::new(), current: None, descriptions: Vec::new() }
    }

    /// Names the phase now running, so a failure can close it with [`ServerTiming::end_current`].
    pub fn begin(&mut self, name: &'static str) {
        self.current = Some(name);
    }

    /// Ends the phase named by the last [`ServerTiming::begin`], if it was not marked already.
    pub fn end_current(&mut self) {
        if let Some(name) = self.current.take() {
            self.mark(name);
        }
    }

    /// Records phase `name` that took `ms` and ended now: the next phase starts now, and the
    /// phase running before it is shortened by `ms` (so no time is counted twice).
    pub fn record(&mut self, name: &'static str, ms: f64) {
        self.phases.push((name, ms));
        self.last_ms += ms;
    }

    /// Records the `host` phase (`host_ms`, the start of the in-process local Box host) and the
    /// `connect` phase (`connect_ms`, the isolate's first request to it, when there was one),
    /// which both ended now.
    pub fn record_host_start(&mut self, host_ms: f64, connect_ms: Option<f64>) {
        self.record("host", host_ms);
        if let Some(connect_ms) = connect_ms {
            self.record("connect", connect_ms);
        }
    }

    /// Ends phase `name` now (it began when the previous phase ended).
    pub fn mark(&mut self, name: &'static str) {
        let now = sys::performance_now();
        self.phases.push((name, now - self.last_ms));
        self.last_ms = now;
        self.current = None;
    }

    /// Gives phase `name` a description (`desc="<text>"`; `text` is a token, no quotes), e.g.
    /// `install;desc="prepared"`.
    pub fn describe(&mut self, name: &'static str, text: &'static str) {
        // The last word wins: a Run whose prepared project would not unpack installs after all.
        self.descriptions.retain(|(n, _)| *n != name);
        self.descriptions.push((name, text));
    }

    /// The header value, e.g. `box;dur=12.4, stage;dur=3.1, install;desc="fresh";dur=900.2, exec;dur=80.0`.
    pub fn header_value(&self) -> String {
        self.phases
            .iter()
            .map(|(name, ms)| match self.descriptions.iter().find(|(n, _)| n == name) {
                // A phase never lasts less than 0 ms; `max` keeps a clock step from printing `-0.0`.
                Some((_, text)) => format!("{name};desc=\"{text}\";dur={:.1}", ms.max(0.0)),
                None => format!("{name};dur={:.1}", ms.max(0.0)),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
