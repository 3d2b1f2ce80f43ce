//! The load itself, by wrk (Debian's `wrk`): one wrk per kind of request,
//! run in back-to-back slices of the sampling interval so that each slice
//! gives that interval's latencies and statuses. wrk keeps each connection
//! waiting `pause` ms between requests; after each slice the pause is set
//! so that the next one comes nearer the target rate.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

/// The Lua script wrk runs (`load.lua`).
pub const SCRIPT: &str = include_str!("load.lua");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Append,
    Recall,
    Context,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Append => "append",
            Kind::Recall => "recall",
            Kind::Context => "context",
        }
    }
}

/// One kind's load: how many requests a second, over how many connections.
#[derive(Clone, Debug)]
pub struct Stream {
    pub kind: Kind,
    pub per_second: f64,
    pub connections: u32,
}

/// What one slice of one kind did, as the script's `done()` reports it.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct Slice {
    pub requests: u64,
    pub seconds: f64,
    pub ok: u64,
    pub throttled: u64,
    pub failed: u64,
    pub connect_errors: u64,
    pub read_errors: u64,
    pub write_errors: u64,
    pub timeouts: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Slice {
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.requests as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Requests that failed for any reason but a documented 429.
    pub fn errors(&self) -> u64 {
        self.failed + self.connect_errors + self.read_errors + self.write_errors + self.timeouts
    }
}

/// Where the script and its data live, and the server it loads.
pub struct Load {
    pub wrk: PathBuf,
    pub script: PathBuf,
    pub targets: PathBuf,
    pub acks: PathBuf,
    pub url: String,
}

impl Load {
    /// Runs one slice of `stream` for `length`, each connection pausing
    /// `pause_ms` between requests; `tag` names the slice in the appends'
    /// markers.
    pub fn slice(
        &self,
        stream: &Stream,
        pause_ms: u64,
        length: Duration,
        tag: &str,
    ) -> std::io::Result<Slice> {
        let output = Command::new(&self.wrk)
            .args(["-t1", &format!("-c{}", stream.connections)])
            .arg(format!("-d{}s", length.as_secs().max(1)))
            .args(["--timeout", "10s", "-s"])
            .arg(&self.script)
            .arg(&self.url)
            .arg("--")
            .arg(stream.kind.name())
            .arg(&self.targets)
            .arg(pause_ms.to_string())
            .arg(tag)
            .arg(&self.acks)
            .output()?;
        let printed = String::from_utf8_lossy(&output.stdout);
        let line = printed
            .lines()
            .find_map(|line| line.strip_prefix("SOAK "))
            .ok_or_else(|| {
                let said = format!("{printed}{}", String::from_utf8_lossy(&output.stderr));
                // wrk gives up at once when the server is not listening (it
                // is being started again after the kill).
                let kind = match said.contains("unable to connect") {
                    true => std::io::ErrorKind::ConnectionRefused,
                    false => std::io::ErrorKind::Other,
                };
                std::io::Error::new(kind, format!("wrk printed no figures: {said}"))
            })?;
        serde_json::from_str(line).map_err(std::io::Error::other)
    }
}

/// The pause that brings `connections` connections to `per_second`
/// requests a second, given the last slice: its own pause scaled by how far
/// it fell short or went over, within [0, 10 s].
pub fn next_pause(stream: &Stream, pause_ms: u64, last: &Slice) -> u64 {
    let achieved = last.per_second();
    if achieved <= 0.0 {
        return pause_ms;
    }
    // A request's cycle is its pause plus its latency: keep the latency,
    // and set the pause to what is left of the cycle the target rate needs.
    let cycle_ms = f64::from(stream.connections) * 1000.0 / achieved;
    let latency_ms = (cycle_ms - pause_ms as f64).max(0.0);
    let wanted_ms = f64::from(stream.connections) * 1000.0 / stream.per_second;
    (wanted_ms - latency_ms).clamp(0.0, 10_000.0) as u64
}

/// The first pause: the whole cycle, as if requests took no time.
pub fn first_pause(stream: &Stream) -> u64 {
    (f64::from(stream.connections) * 1000.0 / stream.per_second) as u64
}

/// The Lua data file the script loads: every target (a user's
/// conversation, with the tenant's key and the agent) and the texts, each a
/// JSON string literal.
pub fn write_targets(path: &Path, targets: &[Value], texts: &[String]) -> std::io::Result<()> {
    let mut lua = String::from("return {\n  targets = {\n");
    for target in targets {
        let field = |name: &str| target[name].as_str().unwrap_or_default().to_owned();
        lua.push_str(&format!(
            "    {{ key = [==[{}]==], agent = [==[{}]==], conversation = [==[{}]==], user = [==[{}]==] }},\n",
            field("key"),
            field("agent"),
            field("conversation"),
            field("user")
        ));
    }
    lua.push_str("  },\n  texts = {\n");
    for text in texts {
        let literal = serde_json::to_string(text).map_err(std::io::Error::other)?;
        lua.push_str(&format!("    [==[{literal}]==],\n"));
    }
    lua.push_str("  },\n}\n");
    std::fs::write(path, lua)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_closes_on_the_target_rate() {
        let stream = Stream {
            kind: Kind::Recall,
            per_second: 50.0,
            connections: 10,
        };
        assert_eq!(first_pause(&stream), 200);
        // 10 connections pausing 200 ms with 50 ms of latency: 40/s.
        let slow = Slice {
            requests: 400,
            seconds: 10.0,
            ..Slice::default()
        };
        assert_eq!(next_pause(&stream, 200, &slow), 150);
        // Already on target: unchanged.
        let on = Slice {
            requests: 500,
            seconds: 10.0,
            ..Slice::default()
        };
        assert_eq!(next_pause(&stream, 200, &on), 200);
        // Slower than the target even without pausing: no pause at all.
        let stuck = Slice {
            requests: 100,
            seconds: 10.0,
            ..Slice::default()
        };
        assert_eq!(next_pause(&stream, 0, &stuck), 0);
    }
}
