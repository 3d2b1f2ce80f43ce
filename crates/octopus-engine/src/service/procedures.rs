//! Procedural memory: procedures and their versions, and which of them a
//! turn's message triggers.

use octopus_core::DomainCode;
use std::sync::Arc;

use octopus_core::agent::Agent;
use octopus_core::procedure::{
    Decision, NewVersion, Procedure, ProcedureContent, ProcedureFilter, ProcedureMatch,
    ProcedureSpec, ProcedureStep, ProcedureVersion,
};
use octopus_core::working_memory::Retrieved;
use octopus_core::{Error as DomainError, ProcedureId, TenantId, now};
use serde_json::Value;

use super::QueryVector;
use crate::error::Result;
use crate::octopus::Octopus;
use crate::procedure_matching::{ProcedureMatcher, best, check_pattern, compiled_size};

/// The conflict a tenant at one of its holding quotas meets.
const TENANT_LIMIT: DomainCode = DomainCode::TenantLimitReached;

/// What a caller changes in a procedure: its content makes a new version;
/// `is_active` alone does not.
#[derive(Clone, Debug, Default)]
pub struct ProcedureUpdate {
    /// A JSON merge patch of `name`, `description`, `trigger_pattern`, `steps`.
    pub content: Option<Value>,
    pub is_active: Option<bool>,
}

impl Octopus {
    /// Stores a procedure, its first version pending approval. `author` is the
    /// API key's name.
    pub async fn create_procedure(
        &self,
        tenant: TenantId,
        spec: ProcedureSpec,
        author: Option<String>,
    ) -> Result<Procedure> {
        let content = spec.content();
        self.check_agent(tenant, spec.agent_id).await?;
        self.ensure_room_for_a_procedure(tenant).await?;
        self.ensure_room_for_a_pattern(tenant, None, content.trigger_pattern.as_deref())
            .await?;
        let version = self.new_version(tenant, content, author).await?;
        Ok(self
            .store
            .create_procedure(tenant, ProcedureId::new(), spec.agent_id, version, now())
            .await?)
    }

    pub async fn get_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<Procedure> {
        Ok(self.store.get_procedure(tenant, id).await?)
    }

    pub async fn list_procedures(
        &self,
        tenant: TenantId,
        filter: &ProcedureFilter,
    ) -> Result<Vec<Procedure>> {
        self.check_agent(tenant, filter.agent_id).await?;
        Ok(self.store.list_procedures(tenant, filter).await?)
    }

    /// Changes a procedure. New content is the next version, pending: an
    /// approved version keeps serving until it is approved.
    pub async fn update_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        update: ProcedureUpdate,
        author: Option<String>,
    ) -> Result<Procedure> {
        let mut procedure = self.store.get_procedure(tenant, id).await?;
        if let Some(patch) = update.content {
            // The newest version is what the change starts from.
            let versions = self.store.procedure_versions(tenant, id).await?;
            let base = versions
                .last()
                .map(ProcedureVersion::content)
                .unwrap_or_else(|| procedure.content());
            let content = patched(base, &patch)?;
            self.ensure_room_for_a_pattern(tenant, Some(id), content.trigger_pattern.as_deref())
                .await?;
            let version = self.new_version(tenant, content, author).await?;
            procedure = self
                .store
                .add_procedure_version(tenant, id, version, now())
                .await?;
        }
        if let Some(active) = update.is_active
            && active != procedure.is_active
        {
            if active && procedure.is_approved {
                self.ensure_room_for_a_pattern(
                    tenant,
                    Some(id),
                    procedure.trigger_pattern.as_deref(),
                )
                .await?;
            }
            procedure = self
                .store
                .set_procedure_active(tenant, id, active, now())
                .await?;
        }
        Ok(procedure)
    }

    pub async fn decide_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        decision: Decision,
        by: Option<String>,
    ) -> Result<Procedure> {
        if decision == Decision::Approve {
            let pending = self
                .store
                .procedure_versions(tenant, id)
                .await?
                .into_iter()
                .find(|v| v.status == octopus_core::procedure::VersionStatus::Pending);
            if let Some(pending) = pending {
                self.ensure_room_for_a_pattern(
                    tenant,
                    Some(id),
                    pending.trigger_pattern.as_deref(),
                )
                .await?;
            }
        }
        Ok(self
            .store
            .decide_procedure(tenant, id, decision, by, now())
            .await?)
    }

    pub async fn rollback_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        version: u32,
    ) -> Result<Procedure> {
        let target = self
            .store
            .procedure_versions(tenant, id)
            .await?
            .into_iter()
            .find(|v| v.version == version);
        if let Some(target) = target {
            self.ensure_room_for_a_pattern(tenant, Some(id), target.trigger_pattern.as_deref())
                .await?;
        }
        Ok(self
            .store
            .rollback_procedure(tenant, id, version, now())
            .await?)
    }

    pub async fn delete_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<()> {
        Ok(self.store.delete_procedure(tenant, id).await?)
    }

    pub async fn procedure_versions(
        &self,
        tenant: TenantId,
        id: ProcedureId,
    ) -> Result<Vec<ProcedureVersion>> {
        Ok(self.store.procedure_versions(tenant, id).await?)
    }

    /// Refuses one more procedure past the tenant's quota on them.
    async fn ensure_room_for_a_procedure(&self, tenant: TenantId) -> Result<()> {
        let quota = self.quotas.quotas().procedures(tenant);
        let held = self.all_procedures(tenant, None).await?.len() as u64;
        if held >= quota {
            return Err(DomainError::conflict(
                TENANT_LIMIT,
                format!(
                    "the tenant holds {held} procedures, its quota ([quotas] max_procedures); delete one first"
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Refuses `pattern` serving (in place of `procedure`'s, if named) when
    /// the tenant's serving trigger patterns would pass their quota of
    /// compiled bytes.
    async fn ensure_room_for_a_pattern(
        &self,
        tenant: TenantId,
        procedure: Option<ProcedureId>,
        pattern: Option<&str>,
    ) -> Result<()> {
        let Some(pattern) = pattern else {
            return Ok(());
        };
        let quota = self.quotas.quotas().trigger_pattern_bytes(tenant);
        let serving = self.all_procedures(tenant, Some(true)).await?;
        let mut total = self.pattern_size(pattern).await? as u64;
        for other in &serving {
            if Some(other.id) == procedure {
                continue;
            }
            if let Some(pattern) = &other.trigger_pattern {
                // A pattern that no longer compiles matches nothing: it costs nothing.
                total += self.pattern_size(pattern).await.unwrap_or(0) as u64;
            }
        }
        if total > quota {
            return Err(DomainError::conflict(
                TENANT_LIMIT,
                format!(
                    "the tenant's serving trigger patterns would take {total} bytes compiled; its quota is {quota} ([quotas] max_trigger_pattern_bytes): simplify or remove patterns first"
                ),
            )
            .into());
        }
        Ok(())
    }

    /// A trigger pattern's compiled size, measured once.
    async fn pattern_size(&self, pattern: &str) -> Result<usize> {
        if let Some(size) = self.pattern_sizes.get(&pattern.to_owned()) {
            return Ok(size);
        }
        let owned = pattern.to_owned();
        let size = tokio::task::spawn_blocking(move || compiled_size(&owned))
            .await
            .map_err(|e| DomainError::backend(std::io::Error::other(e.to_string())))??;
        self.pattern_sizes.insert(pattern.to_owned(), size);
        Ok(size)
    }

    /// Every procedure of the tenant; with `serving`, only the active ones
    /// with an approved version (their serving content shown).
    async fn all_procedures(
        &self,
        tenant: TenantId,
        serving: Option<bool>,
    ) -> Result<Vec<Procedure>> {
        let mut all = Vec::new();
        loop {
            let filter = ProcedureFilter {
                active: serving,
                approved: serving,
                page: octopus_core::store::Page {
                    limit: octopus_core::store::Page::MAX_LIMIT,
                    offset: all.len() as u32,
                },
                ..ProcedureFilter::default()
            };
            let page = self.store.list_procedures(tenant, &filter).await?;
            let full = page.len() as u32 == octopus_core::store::Page::MAX_LIMIT;
            all.extend(page);
            if !full {
                return Ok(all);
            }
        }
    }

    /// Validates a version's content and embeds it for matching by meaning.
    async fn new_version(
        &self,
        tenant: TenantId,
        content: ProcedureContent,
        author: Option<String>,
    ) -> Result<NewVersion> {
        content.validate()?;
        if let Some(pattern) = &content.trigger_pattern {
            check_pattern(pattern)?;
        }
        let embedder = self.embedder().await?;
        let text = [content.semantic_text()];
        let embedding = self
            .embed_for_request(tenant, embedder.as_ref(), &text)
            .await?
            .pop();
        Ok(NewVersion {
            content,
            embedding,
            created_by: author,
        })
    }

    /// The procedures `message` triggers for `agent`, best first, and how
    /// each matched. Only active procedures with an approved version, the
    /// agent's own or the tenant's shared ones, are ever considered.
    pub(crate) async fn match_procedures(
        &self,
        tenant: TenantId,
        agent: &Agent,
        message: &str,
        vector: &QueryVector,
    ) -> Result<(Vec<Retrieved>, Vec<ProcedureMatch>)> {
        let top_k = agent.memory.procedures_top_k as usize;
        if top_k == 0 {
            return Ok(Default::default());
        }
        let matcher = self.procedure_matcher(tenant, agent).await?;
        if matcher.procedures.is_empty() {
            return Ok(Default::default());
        }
        let mut found = matcher.by_pattern(message);
        if matcher.has_vectors() {
            let vector = vector.get(self).await?;
            found.extend(matcher.by_meaning(&vector, agent.memory.procedure_min_score));
        }
        let found = best(found, top_k);
        let matches = found
            .iter()
            .map(|f| {
                let procedure = &matcher.procedures[f.index];
                ProcedureMatch {
                    id: procedure.id,
                    name: procedure.content.name.clone(),
                    version: procedure.version,
                    matched_by: f.matched_by,
                    score: f.score,
                }
            })
            .collect();
        let items = found
            .iter()
            .map(|f| {
                let procedure = &matcher.procedures[f.index];
                Retrieved {
                    id: procedure.id.to_string(),
                    label: procedure.content.name.clone(),
                    text: numbered_steps(&procedure.content.steps),
                    score: f.score,
                }
            })
            .collect();
        Ok((items, matches))
    }

    /// The agent's matcher, rebuilt when the tenant's procedures changed.
    async fn procedure_matcher(
        &self,
        tenant: TenantId,
        agent: &Agent,
    ) -> Result<Arc<ProcedureMatcher>> {
        let revision = self.store.procedures_revision(tenant).await?;
        let key = (tenant, agent.id);
        if let Some(matcher) = self.procedure_matchers.get(key, revision) {
            return Ok(matcher);
        }
        let serving = match revision {
            0 => Vec::new(),
            _ => self.store.serving_procedures(tenant, agent.id).await?,
        };
        let matcher = Arc::new(
            tokio::task::spawn_blocking(move || ProcedureMatcher::build(serving))
                .await
                .map_err(|e| DomainError::backend(std::io::Error::other(e.to_string())))?,
        );
        self.procedure_matchers
            .put(key, revision, Arc::clone(&matcher));
        Ok(matcher)
    }
}

/// `base` with a JSON merge patch of its fields applied.
fn patched(base: ProcedureContent, patch: &Value) -> Result<ProcedureContent> {
    let mut document = serde_json::json!({
        "name": base.name,
        "description": base.description,
        "trigger_pattern": base.trigger_pattern,
        "steps": base.steps,
    });
    crate::merge_patch::apply(&mut document, patch);
    let field = |name: &str| document.get(name).cloned().unwrap_or(Value::Null);
    let text = |name: &str| -> Result<Option<String>> {
        match field(name) {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            _ => Err(DomainError::invalid(name, "must be a string").into()),
        }
    };
    let steps: Vec<ProcedureStep> = serde_json::from_value(field("steps"))
        .map_err(|e| DomainError::invalid("steps", e.to_string()))?;
    Ok(ProcedureContent {
        name: text("name")?.ok_or_else(|| DomainError::invalid("name", "is required"))?,
        description: text("description")?,
        trigger_pattern: text("trigger_pattern")?,
        steps,
    })
}

/// Steps as the model reads them: numbered, with their tool.
fn numbered_steps(steps: &[ProcedureStep]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let mut line = format!("{}. {}", i + 1, step.instruction.trim());
            if let Some(tool) = &step.tool {
                line.push_str(&format!(" (tool: {tool}"));
                if let Some(arguments) = &step.arguments {
                    line.push_str(&format!(", arguments: {arguments}"));
                }
                line.push(')');
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const PROPOSE_INSTRUCTIONS: &str = "You turn a conversation in which an assistant used tools \
into a reusable procedure for the next time the same kind of request comes. Answer with one JSON \
object and nothing else: {\"name\": \"...\", \"description\": \"...\", \"trigger_pattern\": \"...\" \
or null, \"steps\": [{\"instruction\": \"...\", \"tool\": \"...\" or null}]}. name: a few words. \
description: when the procedure applies. trigger_pattern: a case-insensitive regular expression \
(Rust regex syntax, e.g. (?i)\\\\brefund\\\\b) matching users' messages that need it, or null. \
steps: what to do, in order, naming the tool each step calls; generalise away this \
conversation's particular values.";

impl Octopus {
    /// Asks the agent's model to turn an episode's tool calls into a draft
    /// procedure of that agent, stored pending approval with `created_by`
    /// `learned:{episode}`. `Conflict` (`no_tool_calls`) for an episode that
    /// called no tool; a `Chat` error when no model can answer.
    pub async fn propose_procedure(
        &self,
        tenant: TenantId,
        episode: octopus_core::EpisodeId,
    ) -> Result<Procedure> {
        let episode = self
            .store
            .get_episode_with_messages(tenant, episode)
            .await?;
        if !episode.messages.iter().any(|m| !m.tool_calls.is_empty()) {
            return Err(DomainError::conflict(
                DomainCode::NoToolCalls,
                format!(
                    "episode {} called no tool: there is no procedure to learn",
                    episode.episode.id
                ),
            )
            .into());
        }
        let agent = self.cached_agent(tenant, episode.episode.agent_id).await?;
        let model = self
            .chat
            .for_agent(&agent, octopus_core::chat::ChatPurpose::Summary)?;
        let request = proposal_request(&episode, agent.memory.pii.redacts_outgoing());
        let reply = model.chat(&request, None).await?;
        let mut content = parse_proposal(&reply.text).ok_or_else(|| {
            octopus_core::chat::ChatError::new(
                model.provider(),
                octopus_core::chat::Fault::Provider,
                format!(
                    "{} answered without the JSON procedure asked for: {}",
                    model.model(),
                    octopus_core::excerpt(&reply.text)
                ),
            )
        })?;
        // A pattern the model got wrong is dropped, not the whole proposal:
        // a person reviews it before it can match.
        if content
            .trigger_pattern
            .as_deref()
            .is_some_and(|p| check_pattern(p).is_err())
        {
            content.trigger_pattern = None;
        }
        let author = Some(format!("learned:{}", episode.episode.id));
        self.ensure_room_for_a_procedure(tenant).await?;
        let version = self
            .new_version(tenant, content.clone(), author.clone())
            .await?;
        let created = self
            .store
            .create_procedure(tenant, ProcedureId::new(), Some(agent.id), version, now())
            .await;
        match created {
            Err(DomainError::Conflict {
                code: DomainCode::ProcedureNameTaken,
                ..
            }) => {
                // The agent has one of that name: this one says where it came from.
                let mut renamed = content;
                renamed.name = format!("{} (learned from {})", renamed.name, episode.episode.id);
                let version = self.new_version(tenant, renamed, author).await?;
                Ok(self
                    .store
                    .create_procedure(tenant, ProcedureId::new(), Some(agent.id), version, now())
                    .await?)
            }
            other => Ok(other?),
        }
    }
}

impl Octopus {
    /// When the agent learns procedures (`memory.learn_procedures`), proposes
    /// one from a closed episode's tool calls, off the worker's path. Once per
    /// episode; a failure is logged and not retried.
    pub(crate) fn learn_procedure_in_background(
        &self,
        tenant: TenantId,
        agent: octopus_core::AgentId,
        episode: octopus_core::EpisodeId,
    ) {
        let octopus = self.clone();
        tokio::spawn(async move {
            let learns = octopus
                .cached_agent(tenant, agent)
                .await
                .is_ok_and(|agent| agent.memory.learn_procedures);
            if !learns {
                return;
            }
            let author = format!("learned:{episode}");
            let filter = ProcedureFilter {
                agent_id: Some(agent),
                page: octopus_core::store::Page {
                    limit: octopus_core::store::Page::MAX_LIMIT,
                    offset: 0,
                },
                ..ProcedureFilter::default()
            };
            let learned_before = octopus
                .store
                .list_procedures(tenant, &filter)
                .await
                .is_ok_and(|all| all.iter().any(|p| p.created_by.as_deref() == Some(&author)));
            if learned_before {
                return;
            }
            match octopus.propose_procedure(tenant, episode).await {
                Ok(procedure) => {
                    tracing::info!(procedure = %procedure.id, %episode, "procedure proposed from a closed episode")
                }
                Err(error) => {
                    tracing::warn!(%error, %episode, "no procedure proposed from the episode")
                }
            }
        });
    }
}

/// The instructions, then the conversation with its tool calls.
fn proposal_request(
    episode: &octopus_core::episode::EpisodeWithMessages,
    redact: bool,
) -> octopus_core::chat::ChatRequest {
    use octopus_core::message::Role;
    use octopus_core::working_memory::ChatMessage;
    let transcript = super::transcript::transcript(episode, redact);
    octopus_core::chat::ChatRequest {
        messages: vec![
            ChatMessage::new(Role::System, PROPOSE_INSTRUCTIONS),
            ChatMessage::new(Role::User, format!("Conversation:\n{transcript}")),
        ],
        tools: Vec::new(),
    }
}

/// The procedure in a model's answer, or `None` when there is none usable.
fn parse_proposal(text: &str) -> Option<ProcedureContent> {
    #[derive(serde::Deserialize)]
    struct Proposal {
        name: String,
        description: Option<String>,
        trigger_pattern: Option<String>,
        steps: Vec<ProposedStep>,
    }
    #[derive(serde::Deserialize)]
    struct ProposedStep {
        instruction: String,
        tool: Option<String>,
    }
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let proposal: Proposal = serde_json::from_str(text.get(start..=end)?).ok()?;
    let content = ProcedureContent {
        name: proposal.name.trim().to_owned(),
        description: proposal.description.filter(|d| !d.trim().is_empty()),
        trigger_pattern: proposal.trigger_pattern.filter(|p| !p.trim().is_empty()),
        steps: proposal
            .steps
            .into_iter()
            .map(|step| ProcedureStep {
                instruction: step.instruction,
                tool: step.tool.filter(|t| !t.trim().is_empty()),
                arguments: None,
            })
            .collect(),
    };
    content.validate().ok().map(|()| content)
}
