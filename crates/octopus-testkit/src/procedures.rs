//! The procedure-store contract, rule by rule: versions and approval, shared
//! and per-agent procedures, tenant isolation, unique names, activity.

use octopus_core::DomainCode;
use octopus_core::procedure::{
    Decision, NewVersion, ProcedureContent, ProcedureFilter, ProcedureStep, VersionStatus,
};
use octopus_core::{AgentId, Error, ProcedureId, now};

use crate::Backend;
use crate::fixtures::{self, World};

pub(crate) fn version(name: &str, instruction: &str, by: &str) -> NewVersion {
    NewVersion {
        content: ProcedureContent {
            name: name.into(),
            description: Some(format!("how to {name}")),
            trigger_pattern: Some(format!("(?i){name}")),
            steps: vec![ProcedureStep {
                instruction: instruction.into(),
                tool: None,
                arguments: None,
            }],
        },
        embedding: Some(vec![0.5; 4]),
        created_by: Some(by.into()),
    }
}

fn conflict<T: std::fmt::Debug>(outcome: octopus_core::Result<T>, expected: DomainCode) {
    match outcome {
        Err(Error::Conflict { code, .. }) if code == expected => {}
        other => panic!("expected conflict {expected:?}, got {other:?}"),
    }
}

pub async fn procedures_serve_only_approved_versions_and_keep_every_version(
    backend: &impl Backend,
) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let (tenant, agent) = (world.tenant, world.agent);
    let id = ProcedureId::new();
    let created = store
        .create_procedure(
            tenant,
            id,
            Some(agent),
            version("refund", "Check the receipt", "ana"),
            now(),
        )
        .await
        .unwrap();
    assert!(!created.is_approved && created.is_active);
    assert_eq!(
        (
            created.version,
            created.latest_version,
            created.pending_version
        ),
        (1, 1, Some(1))
    );
    assert_eq!(created.created_by.as_deref(), Some("ana"));
    assert!(
        store
            .serving_procedures(tenant, agent)
            .await
            .unwrap()
            .is_empty(),
        "not approved yet"
    );

    let approved = store
        .decide_procedure(tenant, id, Decision::Approve, Some("boss".into()), now())
        .await
        .unwrap();
    assert_eq!(
        (approved.serving_version, approved.pending_version),
        (Some(1), None)
    );
    assert_eq!(approved.approved_by.as_deref(), Some("boss"));
    let serving = store.serving_procedures(tenant, agent).await.unwrap();
    assert_eq!(serving.len(), 1);
    assert_eq!((serving[0].id, serving[0].version), (id, 1));
    assert_eq!(serving[0].embedding, Some(vec![0.5; 4]));

    // Version 2 waits while version 1 keeps serving.
    let updated = store
        .add_procedure_version(
            tenant,
            id,
            version("refund", "Check the receipt and the date", "ana"),
            now(),
        )
        .await
        .unwrap();
    assert_eq!(
        (
            updated.version,
            updated.serving_version,
            updated.pending_version
        ),
        (1, Some(1), Some(2))
    );
    assert_eq!(updated.steps[0].instruction, "Check the receipt");
    let serving = store.serving_procedures(tenant, agent).await.unwrap();
    assert_eq!(serving[0].content.steps[0].instruction, "Check the receipt");
    store
        .decide_procedure(tenant, id, Decision::Approve, Some("boss".into()), now())
        .await
        .unwrap();
    let serving = store.serving_procedures(tenant, agent).await.unwrap();
    assert_eq!(
        (
            serving[0].version,
            serving[0].content.steps[0].instruction.as_str()
        ),
        (2, "Check the receipt and the date")
    );

    // A rejected version never serves; rolling back brings version 1 back.
    store
        .add_procedure_version(
            tenant,
            id,
            version("refund", "Refund everything", "mallory"),
            now(),
        )
        .await
        .unwrap();
    let rejected = store
        .decide_procedure(tenant, id, Decision::Reject, Some("boss".into()), now())
        .await
        .unwrap();
    assert_eq!(
        (
            rejected.serving_version,
            rejected.pending_version,
            rejected.latest_version
        ),
        (Some(2), None, 3)
    );
    conflict(
        store
            .decide_procedure(tenant, id, Decision::Approve, None, now())
            .await,
        DomainCode::NoPendingVersion,
    );
    conflict(
        store.rollback_procedure(tenant, id, 3, now()).await,
        DomainCode::VersionNotApproved,
    );
    assert!(matches!(
        store.rollback_procedure(tenant, id, 9, now()).await,
        Err(Error::NotFound { .. })
    ));
    let rolled = store
        .rollback_procedure(tenant, id, 1, now())
        .await
        .unwrap();
    assert_eq!((rolled.serving_version, rolled.version), (Some(1), 1));
    assert_eq!(rolled.steps[0].instruction, "Check the receipt");
    let serving = store.serving_procedures(tenant, agent).await.unwrap();
    assert_eq!(serving[0].version, 1);

    let versions = store.procedure_versions(tenant, id).await.unwrap();
    let statuses: Vec<(u32, VersionStatus)> =
        versions.iter().map(|v| (v.version, v.status)).collect();
    assert_eq!(
        statuses,
        [
            (1, VersionStatus::Approved),
            (2, VersionStatus::Approved),
            (3, VersionStatus::Rejected)
        ]
    );
    assert_eq!(versions[2].created_by.as_deref(), Some("mallory"));
    assert_eq!(versions[2].decided_by.as_deref(), Some("boss"));

    // A newer draft supersedes an undecided one.
    store
        .add_procedure_version(tenant, id, version("refund", "Draft A", "ana"), now())
        .await
        .unwrap();
    let latest = store
        .add_procedure_version(tenant, id, version("refund", "Draft B", "ana"), now())
        .await
        .unwrap();
    assert_eq!(latest.pending_version, Some(5));
    let versions = store.procedure_versions(tenant, id).await.unwrap();
    assert_eq!(versions[3].status, VersionStatus::Superseded);
}

pub async fn shared_procedures_reach_every_agent_of_their_tenant_and_no_other(
    backend: &impl Backend,
) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let globex = World::create(&*store, "globex").await;
    let sales = fixtures::agent(acme.tenant, "sales");
    store.create_agent(&sales).await.unwrap();
    let mut ids = Vec::new();
    for (agent, name) in [
        (None, "greeting"),
        (Some(acme.agent), "refund"),
        (Some(sales.id), "upsell"),
    ] {
        let id = ProcedureId::new();
        store
            .create_procedure(acme.tenant, id, agent, version(name, "do it", "ana"), now())
            .await
            .unwrap();
        store
            .decide_procedure(acme.tenant, id, Decision::Approve, None, now())
            .await
            .unwrap();
        ids.push(id);
    }
    let names = |serving: Vec<octopus_core::procedure::ServingProcedure>| {
        let mut names: Vec<String> = serving.into_iter().map(|p| p.content.name).collect();
        names.sort();
        names
    };
    assert_eq!(
        names(
            store
                .serving_procedures(acme.tenant, acme.agent)
                .await
                .unwrap()
        ),
        ["greeting", "refund"]
    );
    assert_eq!(
        names(
            store
                .serving_procedures(acme.tenant, sales.id)
                .await
                .unwrap()
        ),
        ["greeting", "upsell"]
    );
    assert!(
        store
            .serving_procedures(globex.tenant, globex.agent)
            .await
            .unwrap()
            .is_empty()
    );
    // Another tenant's agent id does not reach them either.
    assert!(
        store
            .serving_procedures(globex.tenant, acme.agent)
            .await
            .unwrap()
            .is_empty()
    );
    for id in &ids {
        assert!(matches!(
            store.get_procedure(globex.tenant, *id).await,
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            store
                .decide_procedure(globex.tenant, *id, Decision::Reject, None, now())
                .await,
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            store.procedure_versions(globex.tenant, *id).await,
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            store.delete_procedure(globex.tenant, *id).await,
            Err(Error::NotFound { .. })
        ));
    }
    assert!(
        store
            .list_procedures(globex.tenant, &ProcedureFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.procedures_revision(globex.tenant).await.unwrap(), 0);

    let all = store
        .list_procedures(acme.tenant, &ProcedureFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 3);
    let shared = ProcedureFilter {
        shared: Some(true),
        ..Default::default()
    };
    assert_eq!(
        store
            .list_procedures(acme.tenant, &shared)
            .await
            .unwrap()
            .len(),
        1
    );
    let agent_and_shared = ProcedureFilter {
        agent_id: Some(sales.id),
        shared: Some(true),
        ..Default::default()
    };
    assert_eq!(
        store
            .list_procedures(acme.tenant, &agent_and_shared)
            .await
            .unwrap()
            .len(),
        2
    );
    let by_text = ProcedureFilter {
        text: Some("UPSE".into()),
        ..Default::default()
    };
    assert_eq!(
        store.list_procedures(acme.tenant, &by_text).await.unwrap()[0].name,
        "upsell"
    );
}

pub async fn names_are_unique_among_active_procedures_of_one_scope(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let other = fixtures::agent(world.tenant, "sales");
    store.create_agent(&other).await.unwrap();
    let first = ProcedureId::new();
    store
        .create_procedure(
            world.tenant,
            first,
            Some(world.agent),
            version("refund", "a", "x"),
            now(),
        )
        .await
        .unwrap();
    conflict(
        store
            .create_procedure(
                world.tenant,
                ProcedureId::new(),
                Some(world.agent),
                version("refund", "b", "x"),
                now(),
            )
            .await,
        DomainCode::ProcedureNameTaken,
    );
    for agent in [Some(other.id), None::<AgentId>] {
        store
            .create_procedure(
                world.tenant,
                ProcedureId::new(),
                agent,
                version("refund", "c", "x"),
                now(),
            )
            .await
            .unwrap();
    }
    let before = store.procedures_revision(world.tenant).await.unwrap();
    let inactive = store
        .set_procedure_active(world.tenant, first, false, now())
        .await
        .unwrap();
    assert!(!inactive.is_active);
    assert!(
        store.procedures_revision(world.tenant).await.unwrap() > before,
        "every write bumps the revision"
    );
    let second = ProcedureId::new();
    store
        .create_procedure(
            world.tenant,
            second,
            Some(world.agent),
            version("refund", "d", "x"),
            now(),
        )
        .await
        .unwrap();
    conflict(
        store
            .set_procedure_active(world.tenant, first, true, now())
            .await,
        DomainCode::ProcedureNameTaken,
    );

    // An inactive procedure never serves, approved or not.
    store
        .decide_procedure(world.tenant, first, Decision::Approve, None, now())
        .await
        .unwrap();
    assert!(
        store
            .serving_procedures(world.tenant, world.agent)
            .await
            .unwrap()
            .iter()
            .all(|p| p.id != first)
    );
    // Deleting removes it and its versions.
    store.delete_procedure(world.tenant, second).await.unwrap();
    assert!(matches!(
        store.get_procedure(world.tenant, second).await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        store.procedure_versions(world.tenant, second).await,
        Err(Error::NotFound { .. })
    ));
    let reopened = backend.open().await;
    let kept = reopened
        .procedure_versions(world.tenant, first)
        .await
        .unwrap();
    assert_eq!(kept.len(), 1, "versions survive reopening");
}
