//! What `/metrics` reports, in the Prometheus text format (version 0.0.4):
//! requests by route and status with a latency histogram, connections, and,
//! read from the engine at scrape time, the memory queue per tenant and the
//! embedder's throughput.
//!
//! Written by hand: a dozen series do not need a metrics library.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use octopus_core::memory_jobs::MemoryQueue;
use octopus_engine::{EmbeddingStats, MemoryJobStats};

/// Upper bounds of the latency histogram's buckets, in seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Counters the server keeps while it runs.
#[derive(Default)]
pub struct Metrics {
    connections_open: AtomicU64,
    connections_accepted: AtomicU64,
    connections_refused: AtomicU64,
    requests: Mutex<BTreeMap<RequestKey, RequestStats>>,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RequestKey {
    method: String,
    /// The route's template (`/v1/agents/{id}`), never the raw path: ids would
    /// make a series per object.
    route: String,
    status: u16,
}

impl RequestKey {
    /// The series' labels; `status` is the key's status as text.
    fn labels<'a>(&'a self, status: &'a str) -> [(&'static str, &'a str); 3] {
        [
            ("method", self.method.as_str()),
            ("route", self.route.as_str()),
            ("status", status),
        ]
    }
}

#[derive(Default)]
struct RequestStats {
    count: u64,
    seconds: f64,
    /// Requests at or under each of [`LATENCY_BUCKETS`] (not cumulative).
    buckets: [u64; LATENCY_BUCKETS.len()],
}

impl Metrics {
    pub(crate) fn connection_opened(&self) {
        self.connections_open.fetch_add(1, Ordering::Relaxed);
        self.connections_accepted.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn connection_refused(&self) {
        self.connections_refused.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn observe_request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let key = RequestKey {
            method: method.to_owned(),
            route: route.to_owned(),
            status,
        };
        let seconds = took.as_secs_f64();
        let mut requests = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let stats = requests.entry(key).or_default();
        stats.count += 1;
        stats.seconds += seconds;
        if let Some(bucket) = LATENCY_BUCKETS.iter().position(|&bound| seconds <= bound) {
            stats.buckets[bucket] += 1;
        }
    }

    /// The whole exposition, with the engine's figures read at this scrape.
    pub(crate) fn render(
        &self,
        queues: &[MemoryQueue],
        embedding: &EmbeddingStats,
        jobs: &MemoryJobStats,
        erased_words_waiting: Option<Duration>,
    ) -> String {
        let mut out = String::new();
        self.render_requests(&mut out);
        family(
            &mut out,
            "octopus_connections_open",
            "gauge",
            "Client connections open now.",
        );
        sample(
            &mut out,
            "octopus_connections_open",
            &[],
            self.connections_open.load(Ordering::Relaxed) as f64,
        );
        family(
            &mut out,
            "octopus_connections_total",
            "counter",
            "Client connections, by whether they were served or refused over the connection caps.",
        );
        for (outcome, counter) in [
            ("accepted", &self.connections_accepted),
            ("refused", &self.connections_refused),
        ] {
            sample(
                &mut out,
                "octopus_connections_total",
                &[("outcome", outcome)],
                counter.load(Ordering::Relaxed) as f64,
            );
        }
        render_queues(&mut out, queues);
        render_embedding(&mut out, embedding);
        render_precision(&mut out, embedding);
        family(
            &mut out,
            "octopus_memory_jobs_completed_total",
            "counter",
            "Memory jobs this server's worker completed: stored, or superseded (another server completed the job first).",
        );
        for (outcome, count) in [("stored", jobs.stored()), ("superseded", jobs.superseded())] {
            sample(
                &mut out,
                "octopus_memory_jobs_completed_total",
                &[("outcome", outcome)],
                count as f64,
            );
        }
        family(
            &mut out,
            "octopus_erased_words_waiting_seconds",
            "gauge",
            "How long words an erasure removed have waited to leave the data files' write-ahead logs, held back by a reader (an export, a backup); 0 when none wait.",
        );
        sample(
            &mut out,
            "octopus_erased_words_waiting_seconds",
            &[],
            erased_words_waiting.map_or(0.0, |waited| waited.as_secs_f64()),
        );
        out
    }

    fn render_requests(&self, out: &mut String) {
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        family(
            out,
            "octopus_http_requests_total",
            "counter",
            "HTTP requests answered, by method, route and status.",
        );
        for (key, stats) in requests.iter() {
            let status = key.status.to_string();
            sample(
                out,
                "octopus_http_requests_total",
                &key.labels(&status),
                stats.count as f64,
            );
        }
        family(
            out,
            "octopus_http_request_duration_seconds",
            "histogram",
            "Time from a request's headers to its response, by method, route and status.",
        );
        for (key, stats) in requests.iter() {
            let status = key.status.to_string();
            let labels = key.labels(&status);
            let mut cumulative = 0;
            for (bound, count) in LATENCY_BUCKETS.iter().zip(stats.buckets) {
                cumulative += count;
                let le = bound.to_string();
                let mut with_le = labels.to_vec();
                with_le.push(("le", le.as_str()));
                sample(
                    out,
                    "octopus_http_request_duration_seconds_bucket",
                    &with_le,
                    cumulative as f64,
                );
            }
            let mut with_le = labels.to_vec();
            with_le.push(("le", "+Inf"));
            sample(
                out,
                "octopus_http_request_duration_seconds_bucket",
                &with_le,
                stats.count as f64,
            );
            sample(
                out,
                "octopus_http_request_duration_seconds_sum",
                &labels,
                stats.seconds,
            );
            sample(
                out,
                "octopus_http_request_duration_seconds_count",
                &labels,
                stats.count as f64,
            );
        }
    }
}

fn render_queues(out: &mut String, queues: &[MemoryQueue]) {
    let now = octopus_core::now();
    family(
        out,
        "octopus_memory_jobs_queued",
        "gauge",
        "Memory jobs (embeddings, summaries) waiting, by tenant and class: live conversations go before imports.",
    );
    for queue in queues {
        let tenant = queue.tenant_id.to_string();
        for (class, count) in [("live", queue.live), ("bulk", queue.bulk)] {
            sample(
                out,
                "octopus_memory_jobs_queued",
                &[("tenant_id", tenant.as_str()), ("class", class)],
                count as f64,
            );
        }
    }
    family(
        out,
        "octopus_memory_jobs_parked",
        "gauge",
        "Memory jobs set aside, by tenant, because they cannot succeed as the server is configured (an agent's model with no API key): released when the agent's settings or the server's configuration change.",
    );
    for queue in queues {
        let tenant = queue.tenant_id.to_string();
        sample(
            out,
            "octopus_memory_jobs_parked",
            &[("tenant_id", tenant.as_str())],
            queue.parked as f64,
        );
    }
    family(
        out,
        "octopus_memory_job_oldest_age_seconds",
        "gauge",
        "Age of the tenant's oldest waiting memory job (parked ones do not wait).",
    );
    for queue in queues {
        let tenant = queue.tenant_id.to_string();
        let age = queue.oldest_queued_at.map_or(0.0, |oldest| {
            (now - oldest).to_std().unwrap_or_default().as_secs_f64()
        });
        sample(
            out,
            "octopus_memory_job_oldest_age_seconds",
            &[("tenant_id", tenant.as_str())],
            age,
        );
    }
}

fn render_precision(out: &mut String, embedding: &EmbeddingStats) {
    let Some(choice) = embedding.precision() else {
        return;
    };
    family(
        out,
        "octopus_embedding_precision",
        "gauge",
        "The local model's number format (1 for the one in use), chosen by timing each at load (precision = \"auto\") or by the setting.",
    );
    let chosen_by = if choice.by_measurement {
        "measurement"
    } else {
        "setting"
    };
    sample(
        out,
        "octopus_embedding_precision",
        &[("precision", choice.chosen), ("chosen_by", chosen_by)],
        1.0,
    );
    if choice.timings.is_empty() {
        return;
    }
    family(
        out,
        "octopus_embedding_calibration_seconds",
        "gauge",
        "What precision = \"auto\" measured at load: each format's fastest run over the same texts.",
    );
    for (precision, took) in &choice.timings {
        sample(
            out,
            "octopus_embedding_calibration_seconds",
            &[("precision", precision)],
            took.as_secs_f64(),
        );
    }
}

fn render_embedding(out: &mut String, embedding: &EmbeddingStats) {
    family(
        out,
        "octopus_embedded_texts_total",
        "counter",
        "Texts embedded, by what asked: the memory worker, knowledge ingestion, or a query.",
    );
    family(
        out,
        "octopus_embedding_seconds_total",
        "counter",
        "Time spent embedding, by what asked; texts over seconds is the throughput.",
    );
    for (purpose, texts, seconds) in embedding.by_purpose() {
        sample(
            out,
            "octopus_embedded_texts_total",
            &[("purpose", purpose)],
            texts as f64,
        );
        sample(
            out,
            "octopus_embedding_seconds_total",
            &[("purpose", purpose)],
            seconds,
        );
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (label, value)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{label}=\"{}\"", escape(value));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// Label values escape backslash, double quote and newline.
fn escape(value: &str) -> String {
    value
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_end_in_the_count() {
        let metrics = Metrics::default();
        metrics.observe_request("GET", "/healthz", 200, Duration::from_micros(500));
        metrics.observe_request("GET", "/healthz", 200, Duration::from_millis(30));
        metrics.observe_request("GET", "/healthz", 200, Duration::from_secs(60));
        let text = metrics.render(
            &[],
            &EmbeddingStats::default(),
            &MemoryJobStats::default(),
            None,
        );
        let bucket = |le: &str| {
            let prefix = format!(
                "octopus_http_request_duration_seconds_bucket{{method=\"GET\",route=\"/healthz\",status=\"200\",le=\"{le}\"}} "
            );
            text.lines()
                .find_map(|line| line.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("no bucket {le} in\n{text}"))
                .to_owned()
        };
        assert_eq!(bucket("0.001"), "1");
        assert_eq!(bucket("0.025"), "1");
        assert_eq!(bucket("0.05"), "2");
        assert_eq!(bucket("10"), "2");
        assert_eq!(bucket("+Inf"), "3");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
