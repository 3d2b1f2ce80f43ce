//! Procedures in the context, as a property: whatever the procedures' flags
//! and patterns and whatever the message, only active procedures with an
//! approved version of this agent (or shared) ever reach a context.

use std::collections::HashSet;

use octopus_core::procedure::{Decision, ProcedureSpec};
use octopus_engine::{EngineConfig, Octopus, ProcedureUpdate};
use proptest::prelude::*;
use serde_json::json;

const PATTERNS: [&str; 5] = ["(?i)refund", ".*", "^a", "(?i)order", "zzz"];
const MESSAGES: [&str; 4] = ["I want a refund", "a", "Where is my order?", ""];

#[derive(Clone, Debug)]
struct Case {
    pattern: usize,
    approved: bool,
    active: bool,
    shared: bool,
    /// Another agent's: never this agent's context, approved or not.
    foreign_agent: bool,
}

impl Case {
    /// Whether this procedure may reach the support agent's context.
    fn may_reach(&self) -> bool {
        self.approved && self.active && (self.shared || !self.foreign_agent)
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..PATTERNS.len(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(pattern, approved, active, shared, foreign_agent)| Case {
            pattern,
            approved,
            active,
            shared,
            foreign_agent,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn only_active_approved_procedures_of_the_agent_reach_a_context(
        cases in prop::collection::vec(case(), 1..7),
        message in prop::sample::select(MESSAGES.to_vec()),
        words in "[a-z ]{0,20}",
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let octopus = Octopus::open(&EngineConfig {
                data_dir: dir.path().to_owned(),
                limits: crate::fixture_limits(),
                ..EngineConfig::default()
            })
            .unwrap();
            let tenant = octopus.create_tenant("acme").await.unwrap().id;
            let agent_spec = |name: &str| {
                serde_json::from_value(json!({"name": name, "llm": {"provider": "openai", "model": "gpt-4o"},
                    "memory": {"procedures_top_k": 20, "procedure_min_score": -1.0}})).unwrap()
            };
            let agent = octopus.create_agent(tenant, agent_spec("support")).await.unwrap().id;
            let other = octopus.create_agent(tenant, agent_spec("sales")).await.unwrap().id;
            let mut allowed = HashSet::new();
            for (index, case) in cases.iter().enumerate() {
                let owner = match (case.shared, case.foreign_agent) {
                    (true, _) => None,
                    (false, true) => Some(other),
                    (false, false) => Some(agent),
                };
                let spec: ProcedureSpec = serde_json::from_value(json!({
                    "agent_id": owner, "name": format!("procedure {index}"),
                    "trigger_pattern": PATTERNS[case.pattern],
                    "steps": [{"instruction": format!("step of {index}")}]
                })).unwrap();
                let created = octopus.create_procedure(tenant, spec, None).await.unwrap();
                if case.approved {
                    octopus.decide_procedure(tenant, created.id, Decision::Approve, None).await.unwrap();
                }
                if !case.active {
                    let update = ProcedureUpdate { content: None, is_active: Some(false) };
                    octopus.update_procedure(tenant, created.id, update, None).await.unwrap();
                }
                if case.may_reach() {
                    allowed.insert(created.id);
                }
            }
            let spec = serde_json::from_value(json!({"agent_id": agent, "user_id": "u"})).unwrap();
            let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
            let text = format!("{message} {words}");
            let context = octopus.build_context(tenant, conversation, text.trim_start()).await;
            let Ok(context) = context else {
                // An empty message is refused before any matching.
                assert!(text.trim().is_empty() || text.is_empty());
                return;
            };
            let reached: HashSet<_> = context.trace.procedures.iter().map(|m| m.id).collect();
            assert!(reached.is_subset(&allowed), "reached {reached:?}, allowed {allowed:?}");
            // And with every threshold met, each allowed one is there: the
            // filter is on the flags, not on luck.
            assert_eq!(reached, allowed);
            let rendered = context.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
            for (index, case) in cases.iter().enumerate() {
                if !case.may_reach() {
                    assert!(!rendered.contains(&format!("step of {index}\n")) && !rendered.ends_with(&format!("step of {index}")),
                        "procedure {index} ({case:?}) reached the messages");
                }
            }
        });
    }
}
