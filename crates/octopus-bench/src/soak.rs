//! The soak at its full size (`octopus_testkit::soak`): ten minutes of the
//! real release binary under 500 appends, 50 recalls and 20 contexts a
//! second across 100 tenants (wrk), an import of 5,000 messages every
//! minute and a user forgotten every 30 s, killed with SIGKILL and
//! restarted halfway. Prints the server every interval and what it kept,
//! and draws resident memory, p95 latencies and the memory queue over time
//! (`soak.svg` in `--out`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use octopus_testkit::soak::{self, Options as SoakOptions, Report, wrk::Kind};

#[derive(clap::Args)]
pub struct Options {
    #[arg(long, default_value_t = 600)]
    seconds: u64,
    /// The `octopus` binary [default: beside this one, as `cargo build
    /// --release -p octopus-cli` leaves it].
    #[arg(long)]
    server: Option<PathBuf>,
    #[arg(long, default_value = "wrk")]
    wrk: PathBuf,
    #[arg(long, default_value_t = 100)]
    tenants: usize,
    #[arg(long, default_value_t = 10)]
    users_per_tenant: usize,
    #[arg(long, default_value_t = 500.0)]
    appends: f64,
    #[arg(long, default_value_t = 50.0)]
    recalls: f64,
    #[arg(long, default_value_t = 20.0)]
    contexts: f64,
    #[arg(long, default_value_t = 60)]
    import_every: u64,
    #[arg(long, default_value_t = 5000)]
    import_messages: usize,
    #[arg(long, default_value_t = 30)]
    forget_every: u64,
    #[arg(long, default_value_t = 10)]
    sample_every: u64,
    /// Run without the kill and restart.
    #[arg(long)]
    no_kill: bool,
    /// Seconds to wait, once the load stops, for the memory queue to drain.
    #[arg(long, default_value_t = 900)]
    drain_within: u64,
    /// What users say: the turns of the LoCoMo dev split in this folder
    /// (one JSON file per conversation); without it, everyday sentences.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    data: Option<PathBuf>,
    /// Where the chart and the samples go.
    #[arg(long, default_value = "soak-report")]
    out: PathBuf,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let server = crate::setup::server_binary(options.server.as_deref())?;
    let texts = options
        .data
        .as_deref()
        .and_then(|data| crate::corpus::chat_turns(data).ok())
        .unwrap_or_else(soak::everyday_texts);
    let work = tempfile::tempdir()?;
    let duration = Duration::from_secs(options.seconds);
    let soak_options = SoakOptions {
        server,
        wrk: options.wrk.clone(),
        work_dir: work.path().to_owned(),
        duration,
        sample_every: Duration::from_secs(options.sample_every),
        tenants: options.tenants,
        users_per_tenant: options.users_per_tenant,
        appends_per_second: options.appends,
        recalls_per_second: options.recalls,
        contexts_per_second: options.contexts,
        import_every: Duration::from_secs(options.import_every),
        import_messages: options.import_messages,
        forget_every: Duration::from_secs(options.forget_every),
        kill_at: (!options.no_kill).then_some(duration / 2),
        drain_within: Duration::from_secs(options.drain_within),
        texts,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime
        .block_on(soak::run(soak_options))
        .map_err(anyhow::Error::msg)?;
    println!("{report}");
    std::fs::create_dir_all(&options.out)?;
    let chart = options.out.join("soak.svg");
    std::fs::write(&chart, draw(&report)).with_context(|| format!("write {}", chart.display()))?;
    println!("\nchart: {}", chart.display());
    Ok(())
}

const KINDS: [Kind; 3] = [Kind::Append, Kind::Recall, Kind::Context];

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The p95 of `kind` in the slice that covers `at`, if any.
fn p95_at(report: &Report, kind: Kind, at: Duration) -> Option<f64> {
    report
        .slices
        .iter()
        .find(|s| s.kind == kind && s.began <= at && at <= s.ended)
        .map(|s| s.figures.p95_ms)
}

/// Three panels over time: resident memory, p95 latency per kind, the
/// memory queue; a dashed line where the server was killed.
fn draw(report: &Report) -> String {
    const WIDTH: f64 = 900.0;
    const PANEL: f64 = 200.0;
    const LEFT: f64 = 70.0;
    const TOP: f64 = 30.0;
    let end = report
        .samples
        .iter()
        .map(|s| s.at.as_secs_f64())
        .fold(1.0, f64::max);
    let x = |at: f64| LEFT + at / end * (WIDTH - LEFT - 150.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        TOP + 3.0 * (PANEL + 40.0) + 20.0
    );
    let samples = &report.samples;
    let at = |s: &soak::Sample| s.at.as_secs_f64();
    type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);
    let panels: [(&str, Vec<Series>); 3] = [
        (
            "resident memory, MiB",
            vec![
                (
                    "total",
                    "#1f77b4",
                    samples
                        .iter()
                        .map(|s| (at(s), mib(s.resident.total)))
                        .collect(),
                ),
                (
                    "own (RssAnon)",
                    "#9467bd",
                    samples
                        .iter()
                        .map(|s| (at(s), mib(s.resident.own)))
                        .collect(),
                ),
            ],
        ),
        (
            "p95 latency, ms",
            KINDS
                .iter()
                .zip(["#2ca02c", "#ff7f0e", "#d62728"])
                .map(|(kind, colour)| {
                    let points = samples
                        .iter()
                        .filter_map(|s| p95_at(report, *kind, s.at).map(|p| (at(s), p)))
                        .collect();
                    (kind.name(), colour, points)
                })
                .collect(),
        ),
        (
            "memory queue",
            vec![
                (
                    "jobs waiting / 100",
                    "#8c564b",
                    samples
                        .iter()
                        .map(|s| (at(s), s.queued as f64 / 100.0))
                        .collect(),
                ),
                (
                    "oldest job, s",
                    "#e377c2",
                    samples.iter().map(|s| (at(s), s.oldest_job_secs)).collect(),
                ),
            ],
        ),
    ];
    for (i, (title, series)) in panels.iter().enumerate() {
        let top = TOP + i as f64 * (PANEL + 40.0);
        let bottom = top + PANEL;
        let high = series
            .iter()
            .flat_map(|(_, _, points)| points.iter().map(|p| p.1))
            .fold(1.0, f64::max)
            * 1.1;
        let y = |v: f64| bottom - v / high * PANEL;
        let _ = writeln!(
            svg,
            "<text x=\"{LEFT}\" y=\"{}\" font-weight=\"bold\">{title}</text>",
            top - 8.0
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"black\"/><line x1=\"{LEFT}\" y1=\"{top}\" x2=\"{LEFT}\" y2=\"{bottom}\" stroke=\"black\"/>",
            x(end)
        );
        for tick in 0..=4 {
            let value = high * f64::from(tick) / 4.0;
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{value:.0}</text><line x1=\"{LEFT}\" y1=\"{1}\" x2=\"{}\" y2=\"{1}\" stroke=\"#eee\"/>",
                LEFT - 6.0,
                y(value),
                x(end)
            );
        }
        for tick in 0..=5 {
            let t = end * f64::from(tick) / 5.0;
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{t:.0} s</text>",
                x(t),
                bottom + 16.0
            );
        }
        if let Some((kill, _)) = report.restart {
            let kx = x(kill.as_secs_f64());
            let _ = writeln!(
                svg,
                "<line x1=\"{kx}\" y1=\"{top}\" x2=\"{kx}\" y2=\"{bottom}\" stroke=\"red\" stroke-dasharray=\"4 3\"/><text x=\"{kx}\" y=\"{}\" fill=\"red\" text-anchor=\"middle\">kill -9</text>",
                top + 12.0
            );
        }
        for (n, (name, colour, points)) in series.iter().enumerate() {
            let path: Vec<String> = points
                .iter()
                .map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v)))
                .collect();
            let _ = writeln!(
                svg,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
                path.join(" ")
            );
            let legend_y = top + 20.0 + n as f64 * 18.0;
            let _ = writeln!(
                svg,
                "<line x1=\"{0}\" y1=\"{legend_y}\" x2=\"{1}\" y2=\"{legend_y}\" stroke=\"{colour}\" stroke-width=\"3\"/><text x=\"{2}\" y=\"{3}\">{name}</text>",
                x(end) + 10.0,
                x(end) + 30.0,
                x(end) + 35.0,
                legend_y + 4.0
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}
