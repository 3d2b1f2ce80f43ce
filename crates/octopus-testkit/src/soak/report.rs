//! What a soak saw: the server sampled at every interval, each wrk slice's
//! figures, the driver's own requests, the restart, and what was kept.

use std::time::Duration;

use super::Resident;
use super::wrk::{Kind, Slice};

/// The server at one moment of the run.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub at: Duration,
    pub resident: Resident,
    /// Memory jobs waiting, all tenants.
    pub queued: u64,
    /// The oldest waiting job's age, any tenant.
    pub oldest_job_secs: f64,
}

/// One slice of one kind of request.
#[derive(Clone, Debug)]
pub struct TimedSlice {
    pub kind: Kind,
    pub began: Duration,
    pub ended: Duration,
    pub figures: Slice,
}

/// A request the driver made itself (an import or a forget), and its end.
#[derive(Clone, Debug)]
pub struct Event {
    pub what: &'static str,
    pub began: Duration,
    pub ended: Duration,
    /// The HTTP status, or `None` when no answer came.
    pub status: Option<u16>,
}

/// What the soak saw.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub samples: Vec<Sample>,
    pub slices: Vec<TimedSlice>,
    pub events: Vec<Event>,
    /// When the kill came, and how long until the server listened again.
    pub restart: Option<(Duration, Duration)>,
    /// Appends the server acknowledged (2xx).
    pub acknowledged: usize,
    /// Acknowledged appends not found in the exports afterwards.
    pub lost: Vec<String>,
    /// Appends found more than once.
    pub duplicated: Vec<String>,
    /// How long the memory queue took to drain once the load stopped; `None`
    /// when it had not within `drain_within`.
    pub drained_after: Option<Duration>,
}

impl Report {
    /// Whether `[from, to]` overlaps the restart (the kill until the server
    /// listened again, and a second after it for connections to recover).
    pub fn during_restart(&self, from: Duration, to: Duration) -> bool {
        self.restart
            .is_some_and(|(at, away)| from <= at + away + Duration::from_secs(1) && to >= at)
    }

    /// Slices with a failure other than a 429 that did not overlap the restart.
    pub fn errors_outside_restart(&self) -> Vec<&TimedSlice> {
        self.slices
            .iter()
            .filter(|s| s.figures.errors() > 0 && !self.during_restart(s.began, s.ended))
            .collect()
    }

    /// The driver's own requests that failed (429 aside) outside the restart.
    pub fn failed_events_outside_restart(&self) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| {
                !e.status
                    .is_some_and(|s| (200..300).contains(&s) || s == 429)
                    && !self.during_restart(e.began, e.ended)
            })
            .collect()
    }

    /// The p99s of `kind`'s slices (the restart's aside), split into those a
    /// forget overlapped and the rest: whether a forget holds that kind back.
    pub fn p99s_by_forget(&self, kind: Kind) -> (Vec<f64>, Vec<f64>) {
        let slices = self
            .slices
            .iter()
            .filter(|s| s.kind == kind && s.figures.requests > 0)
            .filter(|s| !self.during_restart(s.began, s.ended));
        let mut with_forget = Vec::new();
        let mut without = Vec::new();
        for slice in slices {
            let overlapped = self
                .events
                .iter()
                .any(|e| e.what == "forget" && e.began < slice.ended && e.ended > slice.began);
            let side = if overlapped {
                &mut with_forget
            } else {
                &mut without
            };
            side.push(slice.figures.p99_ms);
        }
        (with_forget, without)
    }

    /// Requests of `kind` in all: (sent, answered 2xx, answered 429).
    pub fn totals(&self, kind: Kind) -> (u64, u64, u64) {
        let slices = self.slices.iter().filter(|s| s.kind == kind);
        slices.fold((0, 0, 0), |(requests, ok, throttled), s| {
            (
                requests + s.figures.requests,
                ok + s.figures.ok,
                throttled + s.figures.throttled,
            )
        })
    }
}

/// "median M ms, max X ms" of `values`, or "none".
fn spread(values: &[f64]) -> String {
    if values.is_empty() {
        return "none".to_owned();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let max = sorted[sorted.len() - 1];
    format!("median {median:.1} ms, max {max:.1} ms")
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The run as a table, a row per sample, then what was kept and lost.
impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const KINDS: [Kind; 3] = [Kind::Append, Kind::Recall, Kind::Context];
        writeln!(
            f,
            "| s | resident MiB (own) | jobs waiting | oldest job s | append /s, p95 ms | recall /s, p95 ms | context /s, p95 ms | failed (not 429) | 429 |"
        )?;
        writeln!(f, "|---|---|---|---|---|---|---|---|---|")?;
        for sample in &self.samples {
            write!(
                f,
                "| {:.0} | {:.0} ({:.0}) | {} | {:.1} |",
                sample.at.as_secs_f64(),
                mib(sample.resident.total),
                mib(sample.resident.own),
                sample.queued,
                sample.oldest_job_secs
            )?;
            let (mut failed, mut throttled) = (0, 0);
            for kind in KINDS {
                let slice = self
                    .slices
                    .iter()
                    .find(|s| s.kind == kind && s.began <= sample.at && sample.at < s.ended);
                match slice {
                    Some(s) => {
                        failed += s.figures.errors();
                        throttled += s.figures.throttled;
                        write!(
                            f,
                            " {:.0}, {:.1} |",
                            s.figures.per_second(),
                            s.figures.p95_ms
                        )?;
                    }
                    None => write!(f, " — |")?,
                }
            }
            writeln!(f, " {failed} | {throttled} |")?;
        }
        writeln!(f)?;
        for kind in KINDS {
            let (sent, ok, throttled) = self.totals(kind);
            writeln!(
                f,
                "{}: {sent} sent, {ok} answered 2xx, {throttled} answered 429",
                kind.name()
            )?;
        }
        let (with_forget, without) = self.p99s_by_forget(Kind::Recall);
        writeln!(
            f,
            "recall p99 in the {} slices a forget overlapped: {}; in the other {}: {}",
            with_forget.len(),
            spread(&with_forget),
            without.len(),
            spread(&without)
        )?;
        for event in &self.events {
            writeln!(
                f,
                "{} at {:.0} s: {} in {:.1} s",
                event.what,
                event.began.as_secs_f64(),
                event
                    .status
                    .map_or("no answer".to_owned(), |s| s.to_string()),
                (event.ended - event.began).as_secs_f64()
            )?;
        }
        if let Some((at, away)) = self.restart {
            writeln!(
                f,
                "killed (SIGKILL) at {:.0} s, listening again {:.2} s later",
                at.as_secs_f64(),
                away.as_secs_f64()
            )?;
        }
        writeln!(
            f,
            "acknowledged appends: {}; lost: {}; stored twice: {}",
            self.acknowledged,
            self.lost.len(),
            self.duplicated.len()
        )?;
        writeln!(
            f,
            "failures other than 429 outside the restart: {} slices, {} driver requests",
            self.errors_outside_restart().len(),
            self.failed_events_outside_restart().len()
        )?;
        match self.drained_after {
            Some(after) => write!(
                f,
                "memory queue drained {:.0} s after the load stopped",
                after.as_secs_f64()
            ),
            None => write!(f, "memory queue NOT drained within the wait"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(kind: Kind, from: u64, p99_ms: f64) -> TimedSlice {
        TimedSlice {
            kind,
            began: Duration::from_secs(from),
            ended: Duration::from_secs(from + 10),
            figures: Slice {
                requests: 100,
                p99_ms,
                ..Slice::default()
            },
        }
    }

    /// A slice counts as a forget's when the forget ran during it, whatever
    /// the other kinds did; the restart's slices count for neither side.
    #[test]
    fn recall_p99s_are_split_by_the_forgets_they_overlapped() {
        let report = Report {
            slices: vec![
                slice(Kind::Recall, 0, 20.0),
                slice(Kind::Recall, 10, 900.0),
                slice(Kind::Append, 10, 700.0),
                slice(Kind::Recall, 20, 30.0),
                slice(Kind::Recall, 30, 5000.0),
            ],
            events: vec![
                Event {
                    what: "forget",
                    began: Duration::from_secs(15),
                    ended: Duration::from_secs(17),
                    status: Some(202),
                },
                Event {
                    what: "import",
                    began: Duration::from_secs(22),
                    ended: Duration::from_secs(25),
                    status: Some(200),
                },
            ],
            restart: Some((Duration::from_secs(33), Duration::from_millis(100))),
            ..Report::default()
        };
        let (with_forget, without) = report.p99s_by_forget(Kind::Recall);
        assert_eq!(with_forget, vec![900.0]);
        assert_eq!(without, vec![20.0, 30.0]);
        assert_eq!(spread(&without), "median 30.0 ms, max 30.0 ms");
        assert_eq!(spread(&[]), "none");
    }
}
