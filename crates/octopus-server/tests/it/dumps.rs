//! Export and import over HTTP: a round trip into an empty data directory
//! gives the same answers, and an import is all or nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{ADMIN_KEY, Seeded, TestServer, seed};

/// Everything a tenant's API shows of its data, with what is made afresh on
/// each server (memory vectors' ids) left out.
async fn answers(server: &TestServer, key: &str, s: &Seeded) -> Value {
    let get = |path: String| async move {
        server
            .ok(Method::GET, &path, key, None, StatusCode::OK)
            .await
    };
    let post = |path: String, body: Value| async move {
        server
            .ok(Method::POST, &path, key, Some(body), StatusCode::OK)
            .await
    };
    let mut episodes = Vec::new();
    for listing in ["", "&deleted=true"] {
        let listed = get(format!("/v1/episodes?limit=1000{listing}")).await;
        for episode in listed["items"].as_array().unwrap() {
            let id = episode["id"].as_str().unwrap();
            let whole = if listing.is_empty() {
                get(format!("/v1/episodes/{id}")).await
            } else {
                episode.clone()
            };
            episodes.push(whole);
        }
    }
    let mut answers = json!({
        "agents": get("/v1/agents".into()).await,
        "conversations": get("/v1/conversations?include_deleted=true".into()).await,
        "episodes": episodes,
        "procedures": get("/v1/procedures".into()).await,
        "versions": get(format!("/v1/procedures/{}/versions", s.procedure)).await,
        "search": get("/v1/messages/search?q=roadmap+bakery".into()).await,
        "knowledge": get(format!("/v1/agents/{}/knowledge", s.agent)).await,
        "knowledge_search": post(format!("/v1/agents/{}/knowledge/search", s.agent),
            json!({"query": "when are refunds paid"})).await,
        "recall": post(format!("/v1/agents/{}/recall", s.agent),
            json!({"user_id": "alice", "query": "the secret roadmap"})).await,
    });
    strip(&mut answers, "embedding_ref");
    answers
}

fn strip(value: &mut Value, field: &str) {
    match value {
        Value::Object(fields) => {
            fields.remove(field);
            fields.values_mut().for_each(|v| strip(v, field));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip(v, field)),
        _ => {}
    }
}

async fn export(server: &TestServer, tenant: &str) -> String {
    let reply = server
        .raw(
            Method::GET,
            &format!("/v1/tenants/{tenant}/export"),
            Some(ADMIN_KEY),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body.as_str().unwrap().to_owned()
}

async fn import(server: &TestServer, key: &str, dump: &str) -> (StatusCode, Value) {
    let reply = server
        .raw_as(
            Method::POST,
            "/v1/import",
            Some(key),
            "application/x-ndjson",
            Some(dump.as_bytes().to_vec()),
        )
        .await;
    (reply.status, reply.body)
}

/// The dump's records, without the header's time and what each server makes
/// afresh.
fn records(dump: &str) -> Vec<Value> {
    dump.lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["type"] == "header" {
                record["exported_at"] = Value::Null;
            }
            strip(&mut record, "embedding_ref");
            record
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_trip_into_an_empty_server_gives_the_same_answers() {
    let first = TestServer::start().await;
    let s = seed(&first, "acme").await;
    let call = |method: Method, path: String, body: Value, status: StatusCode| {
        let first = &first;
        let key = s.key.clone();
        async move { first.ok(method, &path, &key, Some(body), status).await }
    };
    call(
        Method::POST,
        format!("/v1/agents/{}/knowledge/documents", s.agent),
        json!({"source": "refunds.md", "text": "# Refunds\n\nRefunds are paid to the original card within five business days."}),
        StatusCode::CREATED,
    )
    .await;
    call(
        Method::POST,
        format!("/v1/episodes/{}/close", s.episode),
        json!({"end_reason": "user_closed", "summary": "Alice shared the secret roadmap.", "key_facts": ["roadmap is secret"]}),
        StatusCode::OK,
    )
    .await;
    let bob = call(
        Method::POST,
        "/v1/conversations".into(),
        json!({"agent_id": s.agent, "user_id": "bob"}),
        StatusCode::CREATED,
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = call(
        Method::POST,
        format!("/v1/conversations/{bob}/messages"),
        json!({"messages": [{"role": "user", "content": "The corner bakery sells cardamom buns"}]}),
        StatusCode::CREATED,
    )
    .await;
    let bobs_episode = said["messages"][0]["episode_id"].as_str().unwrap();
    first
        .ok(
            Method::DELETE,
            &format!("/v1/episodes/{bobs_episode}"),
            &s.key,
            None,
            StatusCode::OK,
        )
        .await;
    first.octopus.run_memory_jobs().await.unwrap();
    let dump = export(&first, &s.tenant).await;
    let before = answers(&first, &s.key, &s).await;

    let second = TestServer::start().await;
    let (status, report) = import(&second, ADMIN_KEY, &dump).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        (
            report["tenant_id"].as_str(),
            &report["agents"],
            &report["conversations"],
            &report["messages"],
            &report["knowledge_chunks"],
            &report["procedures"]
        ),
        (
            Some(s.tenant.as_str()),
            &json!(1),
            &json!(2),
            &json!(3),
            &json!(1),
            &json!(1)
        ),
        "{report}"
    );
    assert_eq!(
        report["vectors_embedded_again"], 0,
        "the same model made them"
    );
    let key = key_for(&second, &s.tenant).await;
    second.octopus.run_memory_jobs().await.unwrap();
    let after = answers(&second, &key, &s).await;
    assert_eq!(after, before);
    assert_eq!(records(&export(&second, &s.tenant).await), records(&dump));

    // The same dump restored again: every id exists, so nothing of it is stored.
    let (status, refused) = import(&second, ADMIN_KEY, &dump).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"]["code"], "import_conflict");
    assert_eq!(answers(&second, &key, &s).await, before);
}

/// A new key of `tenant`, which an import brought to `server`.
async fn key_for(server: &TestServer, tenant: &str) -> String {
    server
        .ok(
            Method::POST,
            &format!("/v1/tenants/{tenant}/keys"),
            ADMIN_KEY,
            Some(json!({"name": "moved"})),
            StatusCode::CREATED,
        )
        .await["key"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn tenants(server: &TestServer) -> usize {
    server
        .ok(Method::GET, "/v1/tenants", ADMIN_KEY, None, StatusCode::OK)
        .await["items"]
        .as_array()
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_midway_or_a_cut_dump_leaves_nothing() {
    let first = TestServer::start().await;
    let s = seed(&first, "acme").await;
    let dump = export(&first, &s.tenant).await;
    let lines: Vec<&str> = dump.lines().collect();
    let empty = TestServer::start().await;

    // A message of an episode that no record brings: the store refuses it
    // after the tenant, agent, procedure and conversation went in.
    let mut broken: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let message = broken.iter().position(|r| r["type"] == "message").unwrap();
    broken[message]["episode_id"] = json!("01900000-0000-7000-8000-000000000001");
    let broken: Vec<String> = broken.iter().map(Value::to_string).collect();
    let (status, body) = import(&empty, ADMIN_KEY, &broken.join("\n")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nothing was imported"),
        "{body}"
    );
    assert_eq!(tenants(&empty).await, 0);

    // Cut before its end record.
    let cut = lines[..lines.len() - 1].join("\n");
    let (status, body) = import(&empty, ADMIN_KEY, &cut).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(tenants(&empty).await, 0);

    // A line that is not JSON, halfway.
    let mut garbled: Vec<&str> = lines.clone();
    garbled.insert(lines.len() / 2, "{not json");
    let (status, body) = import(&empty, ADMIN_KEY, &garbled.join("\n")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("line"),
        "{body}"
    );
    assert_eq!(tenants(&empty).await, 0);

    // Into another tenant of the same server, a record naming acme's agent
    // is refused as if that agent did not exist.
    let (_, globex) = first.tenant("globex").await;
    let conversation: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let conversation = conversation
        .iter()
        .find(|r| r["type"] == "conversation")
        .unwrap();
    let mut foreign = conversation.clone();
    foreign["id"] = json!("01900000-0000-7000-8000-000000000002");
    let smuggled = [
        lines[0].to_owned(),
        foreign.to_string(),
        json!({"type": "end", "records": 2}).to_string(),
    ];
    let (status, body) = import(&first, &globex, &smuggled.join("\n")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(!body.to_string().contains("acme"), "{body}");
    let listed = first
        .ok(
            Method::GET,
            "/v1/conversations",
            &globex,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(listed["items"], json!([]));

    // And whole, it goes in.
    let (status, body) = import(&empty, ADMIN_KEY, &dump).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(tenants(&empty).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_of_another_model_are_embedded_again_on_import() {
    let first = TestServer::start().await;
    let s = seed(&first, "acme").await;
    first
        .ok(
            Method::POST,
            &format!("/v1/agents/{}/knowledge/documents", s.agent),
            &s.key,
            Some(json!({"source": "refunds.md", "text": "Refunds are paid within five business days."})),
            StatusCode::CREATED,
        )
        .await;
    let dump = export(&first, &s.tenant).await;
    assert!(dump.contains("\"model\":\"all-MiniLM-L6-v2\""));

    // A server whose embedder is another model, over HTTP.
    let provider = std::sync::Arc::new(octopus_testkit::fake_providers::Provider::default());
    let url = octopus_testkit::fake_providers::serve(provider.clone()).await;
    let second = TestServer::with_engine(Default::default(), |engine| {
        engine.embedding = octopus_core::embedding_settings::EmbeddingSettings::Ollama(
            octopus_core::embedding_settings::HttpEmbedding::new(
                format!("{url}/api/embed"),
                "nomic-embed-text",
                octopus_testkit::fake_providers::DIMENSION,
            ),
        );
    })
    .await;
    let (status, report) = import(&second, ADMIN_KEY, &dump).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        report["vectors_embedded_again"], 2,
        "the chunk and the procedure's version: {report}"
    );
    let key = key_for(&second, &s.tenant).await;
    let knowledge = second
        .ok(
            Method::GET,
            &format!("/v1/agents/{}/knowledge", s.agent),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (
            &knowledge["collection"]["model"],
            &knowledge["collection"]["dimension"]
        ),
        (
            &json!("ollama:nomic-embed-text"),
            &json!(octopus_testkit::fake_providers::DIMENSION)
        )
    );
    let exported = export(&second, &s.tenant).await;
    assert!(
        !exported.contains("all-MiniLM-L6-v2"),
        "no vector of the old model is left"
    );
}

/// A tenant's import is a copy with new ids: whether an id of the dump is
/// held by another tenant makes no difference to the answer, so an import
/// cannot be used to learn that; and the copy works, its new ids named.
#[tokio::test]
async fn a_tenants_import_is_a_copy_that_reveals_no_other_tenants_ids() {
    let server = TestServer::start().await;
    let s = seed(&server, "acme").await;
    let dump = export(&server, &s.tenant).await;
    let lines: Vec<Value> = dump
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let acme_conversation = lines.iter().find(|r| r["type"] == "conversation").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A dump of globex's own: an agent and a conversation, whose id is
    // either acme's or one nobody holds.
    let (globex_tenant, globex) = server.tenant("globex").await;
    let agent_id = "01900000-0000-7000-8000-0000000000a1";
    let dump_with = |conversation_id: &str, agent_name: &str| {
        let header = json!({"type": "header", "format": "octopus-dump", "version": 1,
            "exported_at": "2026-01-01T00:00:00Z", "tenant_id": globex_tenant, "user_id": null});
        let mut agent = lines.iter().find(|r| r["type"] == "agent").unwrap().clone();
        agent["id"] = json!(agent_id);
        agent["name"] = json!(agent_name);
        let mut conversation = lines
            .iter()
            .find(|r| r["type"] == "conversation")
            .unwrap()
            .clone();
        conversation["id"] = json!(conversation_id);
        conversation["agent_id"] = json!(agent_id);
        [
            header.to_string(),
            agent.to_string(),
            conversation.to_string(),
            json!({"type": "end", "records": 3}).to_string(),
        ]
        .join("\n")
    };
    let (taken_status, taken) =
        import(&server, &globex, &dump_with(&acme_conversation, "one")).await;
    let (free_status, free) = import(
        &server,
        &globex,
        &dump_with("01900000-0000-7000-8000-0000000000f7", "two"),
    )
    .await;
    assert_eq!(taken_status, StatusCode::OK, "{taken}");
    assert_eq!(free_status, StatusCode::OK, "{free}");
    let shape = |report: &Value| {
        (
            report["agents"].clone(),
            report["conversations"].clone(),
            report["new_ids"]["conversations"]
                .as_object()
                .unwrap()
                .len(),
        )
    };
    assert_eq!(shape(&taken), shape(&free));
    // The copy is globex's, under its new id; acme's conversation is acme's.
    let copied = taken["new_ids"]["conversations"][&acme_conversation]
        .as_str()
        .unwrap();
    assert_ne!(copied, acme_conversation);
    server
        .ok(
            Method::GET,
            &format!("/v1/conversations/{copied}"),
            &globex,
            None,
            StatusCode::OK,
        )
        .await;
    let reply = server
        .call(
            Method::GET,
            &format!("/v1/conversations/{acme_conversation}"),
            &globex,
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    server
        .ok(
            Method::GET,
            &format!("/v1/conversations/{acme_conversation}"),
            &s.key,
            None,
            StatusCode::OK,
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_twice_in_one_dump_is_named_by_both_records() {
    let first = TestServer::start().await;
    let s = seed(&first, "acme").await;
    let dump = export(&first, &s.tenant).await;
    let mut records: Vec<Value> = dump
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let message = records.iter().position(|r| r["type"] == "message").unwrap();
    records.insert(message + 1, records[message].clone());
    let end = records.len() - 1;
    records[end]["records"] = json!(end);
    let twice: Vec<String> = records.iter().map(Value::to_string).collect();
    let empty = TestServer::start().await;
    // Restored by the admin with its ids, or copied into a tenant with new
    // ones: either way the dump's own fault is named, not the server's data.
    let (tenant, key) = empty.tenant("globex").await;
    for key in [ADMIN_KEY, key.as_str()] {
        let (status, body) = import(&empty, key, &twice.join("\n")).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let text = body["error"]["message"].as_str().unwrap();
        assert!(
            text.contains(&format!("line {} (message)", message + 2))
                && text.contains(&format!("also line {}'s", message + 1))
                && !text.contains("already holds"),
            "{text}"
        );
    }
    assert_eq!(tenants(&empty).await, 1, "only {tenant}, made before");
}

/// A tenant may import a copy of its own dump: the names it holds already
/// (an agent's, a shared procedure's) do not block the copy, which takes
/// "name (copy)" and says so; a second copy takes "name (copy 2)".
#[tokio::test]
async fn a_copy_into_the_tenant_it_came_from_renames_what_is_taken() {
    let server = TestServer::start().await;
    let s = seed(&server, "acme").await;
    server
        .ok(
            Method::POST,
            "/v1/procedures",
            &s.key,
            Some(json!({"name": "refunds", "trigger_pattern": "(?i)refund",
                        "steps": [{"instruction": "Check the order."}]})),
            StatusCode::CREATED,
        )
        .await;
    let dump = export(&server, &s.tenant).await;

    for (round, copy) in [(1, "support (copy)"), (2, "support (copy 2)")] {
        let (status, report) = import(&server, &s.key, &dump).await;
        assert_eq!(status, StatusCode::OK, "round {round}: {report}");
        assert_eq!(report["new_ids"]["agent_names"], json!({"support": copy}));
        let procedure = copy.replace("support", "refunds");
        assert_eq!(
            report["new_ids"]["procedure_names"],
            json!({"refunds": procedure})
        );
        let new_agent = report["new_ids"]["agents"][&s.agent].as_str().unwrap();
        let agent = server
            .ok(
                Method::GET,
                &format!("/v1/agents/{new_agent}"),
                &s.key,
                None,
                StatusCode::OK,
            )
            .await;
        assert_eq!(agent["name"], copy);
    }
    let agents = server
        .ok(Method::GET, "/v1/agents", &s.key, None, StatusCode::OK)
        .await;
    let mut names: Vec<&str> = agents["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["support", "support (copy 2)", "support (copy)"]);
}
