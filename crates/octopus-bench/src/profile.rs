//! A user's profile: how long it takes to assemble for a user with a
//! thousand facts, through the engine and over HTTP, with other users'
//! facts in the same store.
//!
//! One agent with four fact categories; the measured user has `--facts`
//! facts (one in thirty a standing instruction, one in thirty a
//! preference, the rest spread over the categories and none), twenty past
//! conversations of ten turns with summaries; `--others` users have as many
//! facts each. Then the profile is read `--reads` times one at a time.

use std::time::{Duration, Instant};

use octopus_app::AppConfig;
use octopus_core::episode::EpisodeSummary;
use octopus_core::fact::NewFactSpec;
use octopus_engine::EngineConfig;
use serde_json::json;

use crate::latency::p50_p95_max;
use crate::setup;

#[derive(clap::Args)]
pub struct Options {
    /// Facts of the measured user.
    #[arg(long, default_value_t = 1000)]
    facts: usize,
    /// Other users of the agent, each with as many facts.
    #[arg(long, default_value_t = 10)]
    others: usize,
    /// Profiles read and timed, after 50 not timed.
    #[arg(long, default_value_t = 1000)]
    reads: usize,
}

const CATEGORIES: [&str; 4] = ["work", "family", "travel", "health"];
const USER: &str = "measured";

pub fn run(options: Options) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(measure(options))
}

async fn measure(options: Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let octopus = octopus_app::open(&AppConfig::in_dir(dir.path(), EngineConfig::default()))?;
    octopus.ensure_admin_key(Some(setup::ADMIN_KEY)).await?;
    let tenant = octopus.create_tenant("profile-bench").await?.id;
    let agent = setup::agent(&octopus, tenant, "profile-bench").await?.id;
    octopus
        .update_agent(
            tenant,
            agent,
            &json!({"memory": {"fact_categories": CATEGORIES}}),
        )
        .await?;
    let started = Instant::now();
    let days = (0..20)
        .map(|day| {
            (0..10)
                .map(|turn| format!("Day {day}, turn {turn}: about the garden and the trip."))
                .collect()
        })
        .collect();
    let first_day = chrono::Utc::now() - chrono::Duration::days(60);
    let conversation = setup::import_days(&octopus, (tenant, agent), USER, first_day, days).await?;
    let filter = octopus_core::episode::EpisodeFilter {
        conversation_id: Some(conversation),
        page: octopus_core::page::Page {
            limit: 100,
            offset: 0,
        },
        ..Default::default()
    };
    for episode in octopus.list_episodes(tenant, &filter).await? {
        let summary = EpisodeSummary {
            summary: format!(
                "They talked about the garden on {}. Then the trip.",
                episode.started_at.format("%d %B")
            ),
            key_facts: Vec::new(),
            embedding: None,
        };
        octopus
            .set_episode_summary(tenant, episode.id, summary)
            .await?;
    }
    for user in
        std::iter::once(USER.to_owned()).chain((0..options.others).map(|i| format!("other-{i}")))
    {
        for i in 0..options.facts {
            let category = match i % 30 {
                0 => Some("instruction"),
                1 => Some("preference"),
                n => CATEGORIES.get(n % 5).copied(),
            };
            let spec = NewFactSpec {
                text: format!(
                    "{user} fact number {i}: a sentence of about the length a learned fact has."
                ),
                category: category.map(str::to_owned),
                key: None,
                valid_from: None,
                reason: None,
            };
            octopus
                .add_fact(tenant, agent, &user, spec, "bench")
                .await?;
        }
    }
    eprintln!(
        "profile: {} facts of {} users stored in {:.0} s",
        options.facts * (options.others + 1),
        options.others + 1,
        started.elapsed().as_secs_f64()
    );

    let profile = octopus.user_profile(tenant, agent, USER).await?;
    let held: usize = profile.facts.iter().map(|g| g.facts.len()).sum::<usize>()
        + profile.instructions.len()
        + profile.preferences.len();
    anyhow::ensure!(
        held == options.facts,
        "the profile holds {held} facts, not {}",
        options.facts
    );
    let engine = time(options.reads, || async {
        octopus
            .user_profile(tenant, agent, USER)
            .await
            .map(|_| ())?;
        Ok(())
    })
    .await?;

    // Where the time goes: the profile's reads, each alone.
    let facts = octopus_core::fact::FactFilter {
        agent_id: agent,
        user_id: USER.to_owned(),
        include_replaced: false,
        categories: Vec::new(),
        key: None,
        page: octopus_core::page::Page {
            limit: octopus_core::page::Page::MAX_LIMIT,
            offset: 0,
        },
    };
    let facts_alone = time(options.reads, || async {
        octopus.list_facts(tenant, &facts).await?;
        Ok(())
    })
    .await?;
    let episodes = octopus_core::episode::EpisodeFilter {
        agent_id: Some(agent),
        user_id: Some(USER.to_owned()),
        page: octopus_core::page::Page {
            limit: 20,
            offset: 0,
        },
        ..Default::default()
    };
    let episodes_alone = time(options.reads, || async {
        octopus.list_episodes(tenant, &episodes).await?;
        Ok(())
    })
    .await?;

    let (_, key) = octopus.create_api_key(tenant, "bench").await?;
    let url = setup::serve_on_loopback(octopus.clone()).await?;
    let http = reqwest::Client::new();
    let path = format!("{url}/v1/agents/{agent}/users/{USER}/profile");
    let bytes = http
        .get(&path)
        .bearer_auth(&key)
        .send()
        .await?
        .error_for_status()?
        .bytes()
        .await?
        .len();
    let over_http = time(options.reads, || async {
        http.get(&path)
            .bearer_auth(&key)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        Ok(())
    })
    .await?;

    println!(
        "A profile of {} facts ({} KiB of JSON), {} other users with {} facts each, {} reads one at a time:\n",
        options.facts,
        bytes / 1024,
        options.others,
        options.facts,
        options.reads
    );
    println!("| read | p50 | p95 | max |\n|---|---|---|---|");
    for (name, times) in [
        ("engine (`user_profile`)", engine),
        ("over HTTP, loopback", over_http),
        (
            "its facts alone (`list_facts`, a page of 1,000)",
            facts_alone,
        ),
        ("its episodes alone (`list_episodes`, 20)", episodes_alone),
    ] {
        let (p50, p95, max) = p50_p95_max(times);
        println!("| {name} | {p50:.2} ms | {p95:.2} ms | {max:.2} ms |");
    }
    Ok(())
}

/// `reads` timed calls of `read`, after 50 that are not.
async fn time<F, Fut>(reads: usize, read: F) -> anyhow::Result<Vec<Duration>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    for _ in 0..50 {
        read().await?;
    }
    let mut times = Vec::with_capacity(reads);
    for _ in 0..reads {
        let started = Instant::now();
        read().await?;
        times.push(started.elapsed());
    }
    Ok(times)
}
