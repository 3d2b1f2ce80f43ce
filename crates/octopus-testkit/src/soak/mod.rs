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

mod api;
mod report;
mod server;
mod texts;
pub mod wrk;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use api::Api;
pub use report::{Event, Report, Sample, TimedSlice};
pub use server::{ADMIN_KEY, Resident, SoakServer};
pub use texts::everyday_texts;
use wrk::{Kind, Load, Stream};

/// The history of each user imported only to be forgotten.
const FORGETTABLE_MESSAGES: usize = 100;

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

/// Why a soak could not run.
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    /// The server refused or failed a call the setup needs.
    #[error(transparent)]
    Api(#[from] octopus_client::Error),
    /// A file, the server's process or wrk could not be used.
    #[error("{0}")]
    Setup(String),
}

fn setup(error: impl std::fmt::Display) -> SoakError {
    SoakError::Setup(error.to_string())
}

/// Runs the soak. Fails on a broken setup (the server does not start, wrk
/// is missing); what the server does under the load is in the report.
pub async fn run(options: Options) -> Result<Report, SoakError> {
    octopus_provider_http::install_tls_provider();
    std::fs::create_dir_all(&options.work_dir).map_err(setup)?;
    let config = options.work_dir.join("octopus.toml");
    // No model is reachable: summaries stay extractive rather than waiting
    // on one. Jobs the killed server had claimed come back when their lease
    // ends: 15 s rather than the default 5 minutes, so that the queue
    // resumes within the run (each batch is embedded in well under that).
    std::fs::write(
        &config,
        "[llm]\nsummarise_episodes = false\n[worker]\njob_lease_secs = 15\n",
    )
    .map_err(setup)?;
    let data_dir = options.work_dir.join("data");
    let server = SoakServer::start(&options.server, &data_dir, Some(&config))
        .map_err(|e| setup(format!("start {}: {e}", options.server.display())))?;
    let url = server.url.clone();
    let server = Arc::new(Mutex::new(server));
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .map_err(setup)?;
    let api = Api {
        admin: octopus_client::Client::with_http(http.clone(), &url, Some(ADMIN_KEY)),
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
    std::fs::write(&load.script, wrk::SCRIPT).map_err(setup)?;
    std::fs::write(&load.acks, "").map_err(setup)?;
    wrk::write_targets(&load.targets, &targets, &options.texts).map_err(setup)?;

    // A user is forgotten twice as often as one is imported: the forgets
    // between imports take users of their own, each with a short history
    // imported now (never one the load appends for, whose acknowledged
    // messages must all be found at the end).
    let mut to_forget: Vec<(usize, String)> = Vec::new();
    let forgets = options.duration.as_secs_f64() / options.forget_every.as_secs_f64();
    let imports = options.duration.as_secs_f64() / options.import_every.as_secs_f64();
    for n in 0..(forgets - imports).ceil().max(0.0) as usize {
        let (tenant, user) = (n % tenants.len(), format!("forgettable-{n}"));
        if api
            .import(&tenants[tenant], &user, FORGETTABLE_MESSAGES, &options)
            .await
            != Some(201)
        {
            return Err(SoakError::Setup(format!(
                "import the history of {user} to forget later"
            )));
        }
        to_forget.push((tenant, user));
    }

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
            // As it goes, so that a run cut short still says what it saw.
            eprintln!(
                "soak: {:.0} s, {:.0} MiB resident ({:.0} MiB its own), {} memory jobs waiting",
                sample.at.as_secs_f64(),
                sample.resident.total as f64 / 1048576.0,
                sample.resident.own as f64 / 1048576.0,
                sample.queued
            );
            lock(&report).samples.push(sample);
            next_sample += options.sample_every;
        }
        if kill_at.is_some_and(|at| now >= at) {
            kill_at = None;
            let at = started.elapsed();
            let restarting = Arc::clone(&server);
            let away = tokio::task::spawn_blocking(move || lock(&restarting).kill_and_restart())
                .await
                .map_err(setup)?
                .map_err(|e| setup(format!("restart the server: {e}")))?;
            lock(&report).restart = Some((at, away));
        }
        if now >= next_import {
            next_import += options.import_every;
            let tenant = imported.len() % tenants.len();
            let user = format!("imported-{}", imported.len());
            let began = started.elapsed();
            let status = api
                .import(&tenants[tenant], &user, options.import_messages, &options)
                .await;
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
            // The latest import not yet forgotten, or else a user of its own.
            let next = match imported.get(forgotten) {
                Some(user) => {
                    forgotten += 1;
                    Some(user.clone())
                }
                None => to_forget.pop(),
            };
            if let Some((tenant, user)) = next {
                let began = started.elapsed();
                let status = api.forget(&tenants[tenant], &user).await;
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
            .map_err(|_| setup("a load thread panicked"))??;
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
        .map_err(setup)?
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
        .map_err(|_| setup("the report is still shared"))?
        .into_inner()
        .map_err(|_| setup("a load thread panicked"))?;
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
) -> Result<(), SoakError> {
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
        let figures = match load.slice(stream, pause, length, &tag) {
            Ok(figures) => figures,
            // A slice begun while the server was down and not yet listening
            // again: the load resumes once it listens.
            Err(error)
                if error.kind() == std::io::ErrorKind::ConnectionRefused
                    && options.kill_at.is_some_and(|at| started.elapsed() >= at)
                    && lock(report).restart.is_none() =>
            {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            Err(error) => {
                return Err(SoakError::Setup(format!(
                    "wrk ({}): {error}",
                    stream.kind.name()
                )));
            }
        };
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
