//! A soak: the real `octopus serve` under a mixed load for a while, killed
//! with SIGKILL in the middle and started again, then checked.
//!
//! wrk drives the requests clients make all the time (appends, recalls and
//! contexts, each across every tenant's users, [`wrk`]); this driver makes
//! the rarer ones (an import of thousands of messages every minute, a user
//! forgotten every half minute), samples the server (resident memory, the
//! memory queue) at every interval, and kills and restarts it once. At the
//! end it waits for the memory queue to drain and reads every tenant's
//! export: each append the server acknowledged must be there exactly once.
//!
//! `octopus-bench soak` runs the ten-minute version and draws it; the test
//! command runs a one-minute one (`octopus-cli/tests/it/soak.rs`).

mod server;
pub mod wrk;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use server::{ADMIN_KEY, Resident, SoakServer};
use wrk::{Kind, Load, Slice, Stream};

/// What to run, and against which binary.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `octopus` binary.
    pub server: PathBuf,
    /// The `wrk` binary.
    pub wrk: PathBuf,
    /// Where the data directory, the script and the acknowledgements go.
    pub work_dir: PathBuf,
    pub duration: Duration,
    /// How often the server is sampled; the length of each wrk slice.
    pub sample_every: Duration,
    pub tenants: usize,
    pub users_per_tenant: usize,
    pub appends_per_second: f64,
    pub recalls_per_second: f64,
    pub contexts_per_second: f64,
    pub import_every: Duration,
    pub import_messages: usize,
    pub forget_every: Duration,
    /// When the server is killed and started again; never when `None`.
    pub kill_at: Option<Duration>,
    /// How long the memory queue may take to drain once the load stops.
    pub drain_within: Duration,
    /// What users say: the appends, the recalls' and contexts' questions,
    /// the imports.
    pub texts: Vec<String>,
}

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

/// Runs the soak. Fails on a broken setup (the server does not start, wrk
/// is missing); what the server does under the load is in the report.
pub async fn run(options: Options) -> Result<Report, String> {
    octopus_http::install_tls_provider();
    std::fs::create_dir_all(&options.work_dir).map_err(|e| e.to_string())?;
    let config = options.work_dir.join("octopus.toml");
    // No model is reachable: summaries stay extractive rather than waiting
    // on one. Fixtures never go idle within the run.
    std::fs::write(&config, "[llm]\nsummarise_episodes = false\n").map_err(|e| e.to_string())?;
    let data_dir = options.work_dir.join("data");
    let server = SoakServer::start(&options.server, &data_dir, Some(&config))
        .map_err(|e| format!("start {}: {e}", options.server.display()))?;
    let url = server.url.clone();
    let server = Arc::new(Mutex::new(server));
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .map_err(|e| e.to_string())?;
    let api = Api {
        http: http.clone(),
        url: url.clone(),
    };

    let tenants = api.create_tenants(&options).await?;
    let targets: Vec<Value> = tenants
        .iter()
        .flat_map(|t| {
            t.conversations.iter().map(move |(user, c)| {
            json!({"key": t.key, "agent": t.agent, "conversation": c, "user": user})
        })
        })
        .collect();
    let load = Load {
        wrk: options.wrk.clone(),
        script: options.work_dir.join("load.lua"),
        targets: options.work_dir.join("targets.lua"),
        acks: options.work_dir.join("acknowledged.txt"),
        url: url.clone(),
    };
    std::fs::write(&load.script, wrk::SCRIPT).map_err(|e| e.to_string())?;
    std::fs::write(&load.acks, "").map_err(|e| e.to_string())?;
    wrk::write_targets(&load.targets, &targets, &options.texts).map_err(|e| e.to_string())?;

    let started = Instant::now();
    let report = Arc::new(Mutex::new(Report::default()));
    let load = Arc::new(load);
    let streams = [
        (Kind::Append, options.appends_per_second),
        (Kind::Recall, options.recalls_per_second),
        (Kind::Context, options.contexts_per_second),
    ];
    let mut drivers = Vec::new();
    for (kind, per_second) in streams.into_iter().filter(|(_, rate)| *rate > 0.0) {
        let stream = Stream {
            kind,
            per_second,
            // Enough connections that each pauses at least 100 ms.
            connections: (per_second / 10.0).ceil().max(1.0) as u32,
        };
        let (load, report, options) = (Arc::clone(&load), Arc::clone(&report), options.clone());
        drivers.push(std::thread::spawn(move || {
            drive(&stream, &load, &report, &options, started)
        }));
    }

    let deadline = started + options.duration;
    let mut next_sample = started;
    let mut next_import = started + options.import_every / 2;
    let mut next_forget = started + options.forget_every;
    let mut kill_at = options.kill_at.map(|at| started + at);
    let mut imported: Vec<(usize, String)> = Vec::new();
    let mut forgotten = 0;
    while Instant::now() < deadline {
        let now = Instant::now();
        // A load that stopped early failed to run at all (wrk missing, say):
        // its error is returned below, without waiting out the run.
        if drivers.iter().any(|d| d.is_finished()) && now + Duration::from_secs(2) < deadline {
            break;
        }
        if now >= next_sample {
            let sample = sample(&server, &api, started).await;
            lock(&report).samples.push(sample);
            next_sample += options.sample_every;
        }
        if kill_at.is_some_and(|at| now >= at) {
            kill_at = None;
            let at = started.elapsed();
            let restarting = Arc::clone(&server);
            let away = tokio::task::spawn_blocking(move || lock(&restarting).kill_and_restart())
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("restart the server: {e}"))?;
            lock(&report).restart = Some((at, away));
        }
        if now >= next_import {
            next_import += options.import_every;
            let tenant = imported.len() % tenants.len();
            let user = format!("imported-{}", imported.len());
            let began = started.elapsed();
            let status = api.import(&tenants[tenant], &user, &options).await;
            let event = Event {
                what: "import",
                began,
                ended: started.elapsed(),
                status,
            };
            lock(&report).events.push(event);
            imported.push((tenant, user));
        }
        if now >= next_forget {
            next_forget += options.forget_every;
            if let Some((tenant, user)) = imported.get(forgotten) {
                forgotten += 1;
                let began = started.elapsed();
                let status = api.forget(&tenants[*tenant], user).await;
                let event = Event {
                    what: "forget",
                    began,
                    ended: started.elapsed(),
                    status,
                };
                lock(&report).events.push(event);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for driver in drivers {
        driver
            .join()
            .map_err(|_| "a load thread panicked".to_owned())??;
    }

    // The queue after the load: it must resume after the restart and drain.
    let stopped = Instant::now();
    let drained_after = loop {
        let (queued, _) = api.queue().await.unwrap_or((u64::MAX, 0.0));
        if queued == 0 {
            break Some(stopped.elapsed());
        }
        if stopped.elapsed() > options.drain_within {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let last = sample(&server, &api, started).await;

    let acknowledged: Vec<String> = std::fs::read_to_string(&load.acks)
        .map_err(|e| e.to_string())?
        .lines()
        .map(str::to_owned)
        .collect();
    let mut found: HashMap<String, usize> = HashMap::new();
    for tenant in &tenants {
        let dump = api.export(&tenant.key).await?;
        for marker in markers(&dump) {
            *found.entry(marker.to_owned()).or_default() += 1;
        }
    }
    let mut report = Arc::try_unwrap(report)
        .map_err(|_| "the report is still shared".to_owned())?
        .into_inner()
        .map_err(|_| "a load thread panicked".to_owned())?;
    report.samples.push(last);
    report.drained_after = drained_after;
    report.acknowledged = acknowledged.len();
    report.lost = acknowledged
        .iter()
        .filter(|m| !found.contains_key(*m))
        .cloned()
        .collect();
    report.duplicated = found
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(m, _)| m)
        .collect();
    Ok(report)
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
                        write!(f, " {:.0}, {:.1} |", s.figures.per_second(), s.figures.p95_ms)?;
                    }
                    None => write!(f, " — |")?,
                }
            }
            writeln!(f, " {failed} | {throttled} |")?;
        }
        writeln!(f)?;
        for kind in KINDS {
            let (sent, ok, throttled) = self.totals(kind);
            writeln!(f, "{}: {sent} sent, {ok} answered 2xx, {throttled} answered 429", kind.name())?;
        }
        for event in &self.events {
            writeln!(
                f,
                "{} at {:.0} s: {} in {:.1} s",
                event.what,
                event.began.as_secs_f64(),
                event.status.map_or("no answer".to_owned(), |s| s.to_string()),
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// One kind's load, slice after slice until the run's end.
fn drive(
    stream: &Stream,
    load: &Load,
    report: &Mutex<Report>,
    options: &Options,
    started: Instant,
) -> Result<(), String> {
    let mut pause = wrk::first_pause(stream);
    let mut number = 0;
    loop {
        let began = started.elapsed();
        let left = options.duration.saturating_sub(began);
        if left < Duration::from_secs(1) {
            return Ok(());
        }
        number += 1;
        let tag = format!("{}{number}", &stream.kind.name()[..1]);
        let length = left.min(options.sample_every);
        let figures = load
            .slice(stream, pause, length, &tag)
            .map_err(|e| format!("wrk ({}): {e}", stream.kind.name()))?;
        pause = wrk::next_pause(stream, pause, &figures);
        lock(report).slices.push(TimedSlice {
            kind: stream.kind,
            began,
            ended: started.elapsed(),
            figures,
        });
    }
}

async fn sample(server: &Mutex<SoakServer>, api: &Api, started: Instant) -> Sample {
    let resident = lock(server).resident();
    let (queued, oldest_job_secs) = api.queue().await.unwrap_or_default();
    Sample {
        at: started.elapsed(),
        resident,
        queued,
        oldest_job_secs,
    }
}

/// The appends' markers in a text: `soak-` then the slice's tag, the wrk
/// thread and the request's number.
fn markers(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("soak-").filter_map(move |(at, _)| {
        let rest = &text[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        let marker = &rest[..end];
        (marker.split('-').count() == 4).then_some(marker)
    })
}

/// One tenant of the soak: its key, its agent, and its users' conversations.
struct SoakTenant {
    key: String,
    agent: String,
    conversations: Vec<(String, String)>,
}

struct Api {
    http: reqwest::Client,
    url: String,
}

impl Api {
    async fn call(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(format!("{method} {path}: {status} {value}"));
        }
        Ok(value)
    }

    async fn create_tenants(&self, options: &Options) -> Result<Vec<SoakTenant>, String> {
        use reqwest::Method;
        let mut tenants = Vec::new();
        for t in 0..options.tenants {
            let tenant = self
                .call(
                    ADMIN_KEY,
                    Method::POST,
                    "/v1/tenants",
                    Some(json!({"name": format!("soak-{t}")})),
                )
                .await?;
            let id = tenant["id"].as_str().unwrap_or_default();
            let key = self
                .call(
                    ADMIN_KEY,
                    Method::POST,
                    &format!("/v1/tenants/{id}/keys"),
                    Some(json!({"name": "soak"})),
                )
                .await?["key"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let agent = json!({"name": "assistant", "llm": {"provider": "ollama", "model": "llama3"},
                               "memory": {"episode_idle_timeout_secs": 86_400}});
            let agent = self
                .call(&key, Method::POST, "/v1/agents", Some(agent))
                .await?["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let mut conversations = Vec::new();
            for u in 0..options.users_per_tenant {
                let user = format!("user-{u}");
                let body = json!({"agent_id": agent, "user_id": user});
                let conversation = self
                    .call(&key, Method::POST, "/v1/conversations", Some(body))
                    .await?["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                conversations.push((user, conversation));
            }
            tenants.push(SoakTenant {
                key,
                agent,
                conversations,
            });
        }
        Ok(tenants)
    }

    /// Imports `import_messages` messages for `user`, in sessions of 20 a
    /// day apart; the status, or `None` when no answer came.
    async fn import(&self, tenant: &SoakTenant, user: &str, options: &Options) -> Option<u16> {
        let sessions: Vec<Value> = (0..options.import_messages.div_ceil(20))
            .map(|s| {
                let messages: Vec<Value> = (0..20.min(options.import_messages - s * 20))
                    .map(|m| {
                        let n = s * 20 + m;
                        json!({
                            "role": if m % 2 == 0 { "user" } else { "assistant" },
                            "content": options.texts[n % options.texts.len()],
                            "timestamp": format!("2025-01-{:02}T{:02}:{m:02}:00Z", 1 + s % 28, (s / 28) % 24),
                        })
                    })
                    .collect();
                json!({"messages": messages})
            })
            .collect();
        let body = json!({"agent_id": tenant.agent, "user_id": user, "sessions": sessions});
        self.status(
            &tenant.key,
            reqwest::Method::POST,
            "/v1/conversations/import",
            Some(body),
        )
        .await
    }

    async fn forget(&self, tenant: &SoakTenant, user: &str) -> Option<u16> {
        self.status(
            &tenant.key,
            reqwest::Method::DELETE,
            &format!("/v1/users/{user}"),
            None,
        )
        .await
    }

    async fn status(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Option<u16> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.ok()?;
        let status = response.status().as_u16();
        response.bytes().await.ok()?;
        Some(status)
    }

    /// Memory jobs waiting in all, and the oldest one's age, from `/metrics`.
    async fn queue(&self) -> Option<(u64, f64)> {
        let response = self
            .http
            .get(format!("{}/metrics", self.url))
            .bearer_auth(ADMIN_KEY)
            .send()
            .await
            .ok()?;
        let text = response.text().await.ok()?;
        let value = |line: &str| line.rsplit(' ').next()?.parse::<f64>().ok();
        let mut queued = 0.0;
        let mut oldest: f64 = 0.0;
        for line in text.lines() {
            if line.starts_with("octopus_memory_jobs_queued{") {
                queued += value(line)?;
            } else if line.starts_with("octopus_memory_job_oldest_age_seconds{") {
                oldest = oldest.max(value(line)?);
            }
        }
        Some((queued as u64, oldest))
    }

    async fn export(&self, key: &str) -> Result<String, String> {
        let response = self
            .http
            .get(format!("{}/v1/export", self.url))
            .bearer_auth(key)
            .send()
            .await
            .map_err(|e| format!("export: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("export: {}", response.status()));
        }
        response.text().await.map_err(|e| format!("export: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_read_whole_from_json() {
        let text = r#"{"content":"soak-a12-1-57 Hello"}{"content":"soak-a3-1-9"}"soak-x""#;
        assert_eq!(
            markers(text).collect::<Vec<_>>(),
            vec!["soak-a12-1-57", "soak-a3-1-9"]
        );
    }
}

/// Sentences of the kind users say, about five hundred, the same on every
/// run: for a soak without the LoCoMo data at hand.
pub fn everyday_texts() -> Vec<String> {
    let people = ["Maria", "Jon", "Aiko", "Sam", "Priya", "Luis", "Ana", "Tom"];
    let doings = [
        "started a pottery class on Tuesdays",
        "adopted a rescue greyhound called Pixel",
        "is planning a trip to Lisbon in the spring",
        "finished reading a novel about lighthouse keepers",
        "signed up for a half marathon in October",
        "moved into a flat near the river",
        "is learning to play the cello",
        "volunteers at the animal shelter on weekends",
        "cooked a lentil curry for the neighbours",
        "lost the keys to the bike shed again",
        "got a new job at a bakery downtown",
        "wants to repaint the kitchen a pale green",
    ];
    let asides = [
        "and it went better than expected.",
        "but the weather might spoil it.",
        "so the next few weeks are busy.",
        "which everyone found funny.",
        "after thinking about it for months.",
    ];
    let mut texts = Vec::new();
    for (i, person) in people.iter().enumerate() {
        for (j, doing) in doings.iter().enumerate() {
            for (k, aside) in asides.iter().enumerate() {
                if (i + j + k) % 2 == 0 {
                    texts.push(format!("{person} {doing}, {aside}"));
                }
            }
        }
    }
    texts
}
