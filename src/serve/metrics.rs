//! [`ServeMetrics`]: counters of the server's work (`GET /metrics`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// Counters of the server's work since it started (`GET /metrics`).
#[derive(Debug, Default)]
pub struct ServeMetrics {
    pub(crate) requests: AtomicU64,
    pub(crate) batches: AtomicU64,
    pub(crate) rows: AtomicU64,
    pub(crate) generated_tokens: AtomicU64,
    pub(crate) largest_batch: AtomicU64,
    pub(crate) abandoned: AtomicU64,
    pub(crate) refused_busy: AtomicU64,
}

/// A copy of [`ServeMetrics`] at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MetricsSnapshot {
    /// Generation requests accepted (chat and text completions).
    pub requests: u64,
    /// Generation batches run (fewer than `requests` when requests were batched together).
    pub batches: u64,
    /// Sequences decoded (requests × `n`).
    pub rows: u64,
    /// New tokens generated.
    pub generated_tokens: u64,
    /// Most sequences decoded in one batch.
    pub largest_batch: u64,
    /// Requests whose client went away before they finished (their generation was stopped).
    pub abandoned: u64,
    /// Requests answered 429 because the server held its limit of requests.
    pub refused_busy: u64,
}

impl ServeMetrics {
    /// The current counts.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        MetricsSnapshot {
            requests: load(&self.requests),
            batches: load(&self.batches),
            rows: load(&self.rows),
            generated_tokens: load(&self.generated_tokens),
            largest_batch: load(&self.largest_batch),
            abandoned: load(&self.abandoned),
            refused_busy: load(&self.refused_busy),
        }
    }

    /// Prometheus text exposition of the counters.
    pub fn prometheus(&self) -> String {
        let s = self.snapshot();
        let mut out = String::new();
        for (name, help, kind, value) in [
            (
                "agent_rl_requests_total",
                "Generation requests accepted.",
                "counter",
                s.requests,
            ),
            (
                "agent_rl_generation_batches_total",
                "Generation batches run.",
                "counter",
                s.batches,
            ),
            (
                "agent_rl_sequences_total",
                "Sequences decoded.",
                "counter",
                s.rows,
            ),
            (
                "agent_rl_generated_tokens_total",
                "New tokens generated.",
                "counter",
                s.generated_tokens,
            ),
            (
                "agent_rl_largest_batch",
                "Most sequences in one batch.",
                "gauge",
                s.largest_batch,
            ),
            (
                "agent_rl_abandoned_requests_total",
                "Requests stopped because their client went away.",
                "counter",
                s.abandoned,
            ),
            (
                "agent_rl_refused_busy_total",
                "Requests refused with 429 because the server was full.",
                "counter",
                s.refused_busy,
            ),
        ] {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            ));
        }
        out
    }
}
