//! A summary by the agent's model survives the server being killed between
//! the episode's close and the model's answer: the job is in the database,
//! and the restarted server does it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use reqwest::Method;
use serde_json::json;

use crate::process::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_interrupted_by_kill_9_is_written_after_the_restart() {
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    // The first summary request hangs: the server is killed while it waits.
    fake.then(Answer::Stall(Duration::from_secs(60)));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("octopus.toml");
    // A short lease, so the restarted server may take the dead one's job soon.
    std::fs::write(
        &config,
        format!("[worker]\njob_lease_secs = 2\n[llm]\nmax_retries = 0\nallowed_base_urls = [\"{url}\"]\n"),
    )
    .unwrap();
    let data = dir.path().join("data");
    let server = Server::start_with(&data, Some(&config));
    let (_, key, _) = server.tenant_with_agent("acme").await;
    let agent = server
        .call(
            &key,
            Method::POST,
            "/v1/agents",
            Some(json!({"name": "support",
            "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url}})),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let conversation = server
        .call(
            &key,
            Method::POST,
            "/v1/conversations",
            Some(json!({"agent_id": agent, "user_id": "dana"})),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let stored = server
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            Some(json!({"messages": [
                {"role": "user", "content": "My flight to Oslo is on the 3rd of May"},
                {"role": "assistant", "content": "Noted: Oslo, 3 May."},
                {"role": "user", "content": "I need a vegetarian meal on board"}
            ]})),
        )
        .await;
    let episode = stored["messages"][0]["episode_id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/episodes/{episode}/close"),
            Some(json!({"end_reason": "user_closed"})),
        )
        .await;

    let deadline = Instant::now() + Duration::from_secs(30);
    while !fake
        .received()
        .iter()
        .any(|r| r.body.to_string().contains("key_facts"))
    {
        assert!(Instant::now() < deadline, "the summary was never asked for");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill_hard();

    let server = Server::start_with(&data, Some(&config));
    let deadline = Instant::now() + Duration::from_secs(60);
    let summarised = loop {
        let current = server
            .call(&key, Method::GET, &format!("/v1/episodes/{episode}"), None)
            .await;
        if current["summary_source"] == "llm" {
            break current;
        }
        assert!(
            Instant::now() < deadline,
            "no model summary after the restart: {}",
            current["summary"]
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let summary = summarised["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("LLM summary:") && summary.contains("Oslo"),
        "{summary}"
    );
    assert_eq!(summarised["key_facts"].as_array().unwrap().len(), 2);
    let asked = fake
        .received()
        .iter()
        .filter(|r| r.body.to_string().contains("key_facts"))
        .count();
    assert_eq!(asked, 2, "asked once before the kill, once after");
    server.kill_hard();
}
