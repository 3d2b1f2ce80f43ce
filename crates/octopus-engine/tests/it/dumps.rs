//! Dumps between stores of different kinds, through the engine as the API
//! drives it: a tenant (and one user) exported from SQLite goes into
//! PostgreSQL and comes back, every record the same.

use octopus_core::TenantId;
use octopus_engine::{ImportInto, IngestDocument, Octopus};
use serde_json::{Value, json};

use crate::Place;

/// A tenant with an agent, knowledge, a procedure, and two users'
/// conversations.
async fn seed(octopus: &Octopus) -> TenantId {
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({"name": "support",
        "llm": {"provider": "ollama", "model": "m"}, "memory": {"embed_messages": false}}))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
    let document = IngestDocument {
        source: "handbook.md".into(),
        text: "# Leave\n\nEmployees receive 25 days of paid vacation per year.".into(),
        format: octopus_core::chunking::Format::Markdown,
        category: Some("policy".into()),
    };
    octopus
        .ingest_document(tenant, agent, document)
        .await
        .unwrap();
    let procedure = serde_json::from_value(json!({"agent_id": agent, "name": "refund",
        "trigger_pattern": "(?i)refund", "steps": [{"instruction": "Check the order."}]}))
    .unwrap();
    octopus
        .create_procedure(tenant, procedure, Some("k".into()))
        .await
        .unwrap();
    for user in ["alice", "bob"] {
        let spec = serde_json::from_value(json!({"agent_id": agent, "user_id": user})).unwrap();
        let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
        let messages = serde_json::from_value(json!([
            {"role": "user", "content": format!("{user} wants a refund for order 1182")},
            {"role": "assistant", "content": "The refund is on its way."}
        ]))
        .unwrap();
        octopus
            .append_messages(tenant, conversation, messages)
            .await
            .unwrap();
    }
    tenant
}

/// The dump's records, without what each server makes afresh.
async fn dump(octopus: &Octopus, tenant: TenantId, user: Option<&str>) -> (String, Vec<Value>) {
    let mut lines = octopus
        .export_dump(tenant, user.map(str::to_owned))
        .await
        .unwrap();
    let mut text = String::new();
    let mut records = Vec::new();
    while let Some(line) = lines.recv().await {
        let line = line.expect("the export ends with its end record, not an error");
        let mut record: Value = serde_json::from_str(&line).unwrap();
        if record["type"] == "header" {
            record["exported_at"] = Value::Null;
        }
        if let Some(fields) = record.as_object_mut() {
            fields.remove("embedding_ref");
        }
        text.push_str(&line);
        records.push(record);
    }
    assert_eq!(records.last().unwrap()["type"], "end");
    (text, records)
}

async fn import(octopus: &Octopus, text: String) {
    octopus
        .import_dump(
            ImportInto::DumpTenant,
            std::io::Cursor::new(text.into_bytes()),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dump_goes_from_sqlite_to_postgres_and_back_unchanged() {
    let sqlite = Place::sqlite().open_with(|_| {}).await;
    let tenant = seed(&sqlite).await;
    for user in [None, Some("alice")] {
        let (text, from_sqlite) = dump(&sqlite, tenant, user).await;
        let postgres = Place::postgres().await.open_with(|_| {}).await;
        import(&postgres, text).await;
        let (text, from_postgres) = dump(&postgres, tenant, user).await;
        assert_eq!(
            from_postgres, from_sqlite,
            "SQLite to PostgreSQL, user {user:?}"
        );
        let back = Place::sqlite().open_with(|_| {}).await;
        import(&back, text).await;
        let (_, round_trip) = dump(&back, tenant, user).await;
        assert_eq!(round_trip, from_sqlite, "and back, user {user:?}");
    }
}

/// A dump written while an agent's PII handling was three settings
/// (`redact_pii`, `pii_detection`, `pii_storage`) imports with them read as
/// the one `pii` setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dump_with_the_earlier_pii_settings_imports_under_the_one_setting() {
    let sqlite = Place::sqlite().open_with(|_| {}).await;
    let tenant = seed(&sqlite).await;
    let (text, _) = dump(&sqlite, tenant, None).await;
    let earlier: String = text
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["type"] == "agent" {
                let memory = record["memory"].as_object_mut().unwrap();
                assert_eq!(memory.remove("pii"), Some(json!("redact")));
                memory.insert("redact_pii".into(), json!(true));
                memory.insert("pii_detection".into(), json!("flag"));
                memory.insert("pii_storage".into(), json!("original"));
            }
            format!("{record}\n")
        })
        .collect();
    let back = Place::sqlite().open_with(|_| {}).await;
    import(&back, earlier).await;
    let agents = back
        .list_agents(tenant, octopus_core::store::Page::default())
        .await
        .unwrap();
    assert_eq!(
        agents[0].memory.pii,
        octopus_core::pii::PiiPolicy::RedactOutgoing,
        "redact_pii: true reads as redact_outgoing"
    );
}
