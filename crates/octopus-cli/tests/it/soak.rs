//! A minute of the soak (`octopus_testkit::soak`): the real server under a
//! mixed load from wrk (appends, recalls and contexts across twenty
//! tenants' users), imports and forgets beside it, and a `kill -9` with a
//! restart halfway. The ten-minute run at the full rates is
//! `octopus-bench soak`; this one keeps its shape at a tenth of the appends
//! and imports and a fifth of the rest, on the debug build, so that the
//! memory queue drains within a minute or two after it.
//!
//! Nothing here depends on how fast the server is: the assertions are about
//! what it kept (every acknowledged append, once), what failed (nothing but
//! a 429 outside the restart), and that its memory queue resumed and drained.

use std::path::PathBuf;
use std::time::Duration;

use octopus_testkit::soak::{self, Options, wrk::Kind};

fn wrk() -> PathBuf {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("wrk"))
        .find(|path| path.is_file());
    found.expect("wrk is not installed: scripts/clients.sh installs Debian's")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minute_of_mixed_load_with_a_kill_loses_no_acknowledged_append() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        server: PathBuf::from(env!("CARGO_BIN_EXE_octopus")),
        wrk: wrk(),
        work_dir: dir.path().to_owned(),
        duration: Duration::from_secs(60),
        sample_every: Duration::from_secs(10),
        tenants: 20,
        users_per_tenant: 5,
        appends_per_second: 50.0,
        recalls_per_second: 10.0,
        contexts_per_second: 4.0,
        import_every: Duration::from_secs(20),
        import_messages: 500,
        forget_every: Duration::from_secs(10),
        kill_at: Some(Duration::from_secs(30)),
        drain_within: Duration::from_secs(900),
        texts: soak::everyday_texts(),
    };
    let report = soak::run(options).await.unwrap();
    eprintln!("{report}");

    let (restarted_at, _) = report.restart.expect("the server was killed and restarted");
    assert!(report.acknowledged > 0, "appends were acknowledged");
    assert!(
        report.lost.is_empty(),
        "{} of {} acknowledged appends lost, e.g. {:?}",
        report.lost.len(),
        report.acknowledged,
        &report.lost[..report.lost.len().min(5)]
    );
    assert!(
        report.duplicated.is_empty(),
        "stored twice: {:?}",
        report.duplicated
    );
    assert!(
        report.errors_outside_restart().is_empty(),
        "failures other than 429 outside the restart: {:#?}",
        report.errors_outside_restart()
    );
    assert!(
        report.failed_events_outside_restart().is_empty(),
        "{:#?}",
        report.failed_events_outside_restart()
    );
    for kind in [Kind::Append, Kind::Recall, Kind::Context] {
        let answered_after = report
            .slices
            .iter()
            .filter(|s| s.kind == kind && s.began > restarted_at)
            .map(|s| s.figures.ok)
            .sum::<u64>();
        assert!(answered_after > 0, "{kind:?} answered after the restart");
    }
    let done = |what| {
        report
            .events
            .iter()
            .filter(|e| e.what == what && e.status.is_some_and(|s| (200..300).contains(&s)))
            .count()
    };
    // Forgets come twice as often as imports: those between take users
    // of their own (imports at 10, 30 and 50 s, forgets every 10 s).
    assert!(
        done("import") >= 2 && done("forget") >= 3 && done("forget") > done("import"),
        "{:#?}",
        report.events
    );
    assert!(
        report.drained_after.is_some(),
        "the memory queue resumed after the restart and drained: {:?}",
        report.samples.last()
    );
}
