//! Procedures in the context, as a property: whatever the procedures' flags
//! and patterns and whatever the message, only active procedures with an
//! approved version of this agent (or shared) ever reach a context.

use octopus_core::DomainCode;
use std::collections::HashSet;

use octopus_core::procedure::{Decision, ProcedureSpec};
use octopus_engine::{EngineConfig, ProcedureUpdate};
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
            let octopus = crate::open_in(dir.path(), EngineConfig {
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

/// A tenant holds at most its quota of procedures, and of trigger-pattern
/// bytes among those that serve; past either, creating or approving is a
/// `tenant_limit_reached` conflict and nothing changes; another tenant is
/// not held to the first's count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_is_held_to_its_quotas_on_procedures_and_their_patterns() {
    use octopus_core::Error as DomainError;
    use octopus_engine::Error;

    // Two of these fit in the byte quota, not three.
    let hostile = |i: usize| format!("(?i)N{i}[a-z]{{150}}[0-9]");
    let one = octopus_engine::procedure_matching::compiled_size(&hostile(0)).unwrap() as u64;
    let dir = tempfile::tempdir().unwrap();
    let octopus = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            quotas: octopus_engine::Quotas {
                max_procedures: 4,
                max_trigger_pattern_bytes: one * 5 / 2,
                ..octopus_engine::Quotas::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let limited = |result: Result<octopus_core::procedure::Procedure, Error>| {
        matches!(
            result,
            Err(Error::Domain(DomainError::Conflict {
                code: DomainCode::TenantLimitReached,
                ..
            }))
        )
    };
    let spec = |name: &str, pattern: &str| -> ProcedureSpec {
        serde_json::from_value(json!({"name": name, "trigger_pattern": pattern,
            "steps": [{"instruction": "do it"}]}))
        .unwrap()
    };
    let acme = octopus.create_tenant("acme").await.unwrap().id;
    let mut created = Vec::new();
    for i in 0..3 {
        let procedure = octopus
            .create_procedure(acme, spec(&format!("p{i}"), &hostile(i)), None)
            .await
            .unwrap();
        created.push(procedure.id);
    }
    // Pending, they cost nothing yet; two approvals fit, the third does not.
    for id in &created[..2] {
        octopus
            .decide_procedure(acme, *id, Decision::Approve, None)
            .await
            .unwrap();
    }
    assert!(limited(
        octopus
            .decide_procedure(acme, created[2], Decision::Approve, None)
            .await
    ));
    assert!(
        !octopus
            .get_procedure(acme, created[2])
            .await
            .unwrap()
            .is_approved
    );
    // A fourth with another such pattern is refused outright.
    assert!(limited(
        octopus
            .create_procedure(acme, spec("p3", &hostile(3)), None)
            .await
    ));
    // A small one fits; then the count is reached.
    octopus
        .create_procedure(acme, spec("small", r"(?i)\brefund\b"), None)
        .await
        .unwrap();
    assert!(limited(
        octopus
            .create_procedure(acme, spec("fifth", "(?i)order"), None)
            .await
    ));
    // Deleting one makes room again.
    octopus.delete_procedure(acme, created[2]).await.unwrap();
    octopus
        .create_procedure(acme, spec("fifth", "(?i)order"), None)
        .await
        .unwrap();
    // Another tenant has quotas of its own.
    let globex = octopus.create_tenant("globex").await.unwrap().id;
    octopus
        .create_procedure(globex, spec("p0", &hostile(0)), None)
        .await
        .unwrap();
}
