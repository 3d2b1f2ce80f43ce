//! The real `octopus serve` under the soak: started on a port of its own
//! over a data directory, killed with SIGKILL and started again on the same
//! port and directory, and read from `/proc` and `/metrics`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const ADMIN_KEY: &str = "oct_soak_admin";

pub struct SoakServer {
    binary: PathBuf,
    data_dir: PathBuf,
    config: Option<PathBuf>,
    port: u16,
    child: Child,
    pub url: String,
}

/// Resident memory, from `/proc/PID/status`, in bytes: the whole (`VmRSS`),
/// the process's own (`RssAnon`), and the mapped files' pages it holds
/// (`RssFile`: the database, the kernel's to drop).
#[derive(Clone, Copy, Debug, Default)]
pub struct Resident {
    pub total: u64,
    pub own: u64,
    pub files: u64,
}

impl SoakServer {
    /// Starts `binary` over `data_dir` on a free port and waits until it listens.
    pub fn start(binary: &Path, data_dir: &Path, config: Option<&Path>) -> std::io::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = spawn(binary, data_dir, config, port)?;
        Ok(Self {
            binary: binary.to_owned(),
            data_dir: data_dir.to_owned(),
            config: config.map(Path::to_owned),
            port,
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then the same binary started again over the same data on
    /// the same port (no shutdown code runs). Returns how long it was away.
    pub fn kill_and_restart(&mut self) -> std::io::Result<Duration> {
        let began = Instant::now();
        self.child.kill()?;
        self.child.wait()?;
        // The port may linger a moment in the kernel; the new process retries.
        let deadline = Instant::now() + Duration::from_secs(30);
        self.child = loop {
            match spawn(
                &self.binary,
                &self.data_dir,
                self.config.as_deref(),
                self.port,
            ) {
                Ok(child) => break child,
                Err(error) if Instant::now() < deadline => {
                    eprintln!("soak: restart failed ({error}); trying again");
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(error) => return Err(error),
            }
        };
        Ok(began.elapsed())
    }

    pub fn resident(&self) -> Resident {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let kib = |field: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
                * 1024
        };
        Resident {
            total: kib("VmRSS:"),
            own: kib("RssAnon:"),
            files: kib("RssFile:") + kib("RssShmem:"),
        }
    }
}

impl Drop for SoakServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server and waits for its "listening" line; an exit before it
/// is an error (the port still taken, say).
fn spawn(
    binary: &Path,
    data_dir: &Path,
    config: Option<&Path>,
    port: u16,
) -> std::io::Result<Child> {
    let mut command = Command::new(binary);
    command.arg("serve");
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    let mut child = command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--log", "warn", "--admin-key", ADMIN_KEY])
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("OCTOPUS_CONFIG")
        .env_remove("OCTOPUS_DATABASE_URL")
        .env_remove("OCTOPUS_QDRANT_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("Octopus listening on ") => break,
            Some(Ok(_)) => {}
            _ => {
                let _ = child.kill();
                let status = child.wait()?;
                return Err(std::io::Error::other(format!(
                    "octopus exited before listening ({status})"
                )));
            }
        }
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok(child)
}
