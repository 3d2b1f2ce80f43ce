//! Facts learned from an episode (see [`octopus_core::fact`]): the key facts
//! of a model's summary, or the facts a learning during the session found
//! ([`super::learning`]), become facts of the user, each decided against the
//! user's current facts that look related, and the facts a user has, read
//! for the API and for a turn's context.
//!
//! The decision is the model's: it sees the related known facts and the new
//! ones, numbered, and answers per new fact `add`, `update` (naming the
//! known fact it replaces) or `none` ([`RECONCILE_INSTRUCTIONS`]). With no
//! related fact there is nothing to decide and no call. An answer that
//! cannot be read, or a model that fails, adds every new fact: a fact is
//! never lost to a decision, at worst kept twice.

use octopus_core::agent::Agent;
use octopus_core::chat::ChatPurpose;
use octopus_core::chat::{ChatError, ChatRequest, Fault};
use octopus_core::episode::EpisodeWithMessages;
use octopus_core::fact::{
    Fact, FactAddition, FactChange, FactCorrection, FactDeletion, FactDeletionReceipt, FactEdit,
    FactFilter, FactHistoryEntry, FactSource, MAX_FACTS_PER_CLOSE, MAX_RELATED_FACTS, NewFact,
    NewFactSpec, RECONCILE_INSTRUCTIONS, read_changes, reconcile_message, sources_by_words,
};
use octopus_core::memory_vectors::MemoryVectorQuery;
use octopus_core::message::Role;
use octopus_core::recall::MemoryKind;
use octopus_core::working_memory::ChatMessage;
use octopus_core::{AgentId, FactId, TenantId, now};

use crate::error::Result;
use crate::octopus::Octopus;

/// Known facts looked up per new fact, by meaning.
const RELATED_PER_FACT: u32 = 5;

impl Octopus {
    /// One user's facts of one agent, the newest first.
    pub async fn list_facts(&self, tenant: TenantId, filter: &FactFilter) -> Result<Vec<Fact>> {
        self.cached_agent(tenant, filter.agent_id).await?;
        octopus_core::conversation::validate_user_id(&filter.user_id)?;
        for category in &filter.categories {
            octopus_core::bounds::check_chars(
                "category",
                category,
                1,
                octopus_core::agent::MAX_FACT_CATEGORY_CHARS,
            )?;
        }
        if let Some(key) = &filter.key {
            octopus_core::bounds::check_chars("key", key, 1, octopus_core::fact::MAX_KEY_CHARS)?;
        }
        Ok(self.store.list_facts(tenant, filter).await?)
    }

    /// One fact, by id: any version, current or replaced.
    pub async fn get_fact(&self, tenant: TenantId, id: FactId) -> Result<Fact> {
        self.store
            .get_facts(tenant, &[id])
            .await?
            .pop()
            .ok_or_else(|| octopus_core::Error::not_found(FactId::KIND, id).into())
    }

    /// A person's correction of a fact that holds: a new version, written
    /// by `changed_by` (an API key's name), from `valid_from` (now when
    /// absent). Its vector follows from the memory worker; keywords find it
    /// at once.
    pub async fn correct_fact(
        &self,
        tenant: TenantId,
        id: FactId,
        edit: FactEdit,
        changed_by: &str,
    ) -> Result<Fact> {
        let at = now();
        let correction = FactCorrection {
            fact_id: id,
            new_id: FactId::new(),
            text: edit.text,
            valid_from: edit.valid_from.unwrap_or(at),
            changed_by: changed_by.to_owned(),
            reason: edit.reason,
            at,
        };
        correction.validate()?;
        let fact = self.store.correct_fact(tenant, &correction).await?;
        self.work_signal.poke();
        self.write_profile_summary_in_background(tenant, fact.agent_id, &fact.user_id);
        tracing::info!(tenant_id = %tenant, fact_id = %fact.id, corrected = %id, "corrected a fact");
        Ok(fact)
    }

    /// A fact a person adds about `user_id` of `agent_id`: of no episode,
    /// written by `changed_by` (an API key's name), true from `valid_from`
    /// (now when absent), filed under one of the agent's categories when
    /// it names one. Its vector follows from the memory worker; keywords
    /// find it at once.
    pub async fn add_fact(
        &self,
        tenant: TenantId,
        agent_id: AgentId,
        user_id: &str,
        spec: NewFactSpec,
        changed_by: &str,
    ) -> Result<Fact> {
        let agent = self.cached_agent(tenant, agent_id).await?;
        octopus_core::conversation::validate_user_id(user_id)?;
        if let Some(category) = &spec.category
            && !agent.memory.fact_categories.contains(category)
            && !octopus_core::standing_requests::is_standing(category)
        {
            let standing = octopus_core::standing_requests::CATEGORIES.join(", ");
            let known = match agent.memory.fact_categories.is_empty() {
                true => format!("the agent files facts under no category but {standing}"),
                false => format!(
                    "the agent's fact_categories are {}, besides {standing}",
                    agent.memory.fact_categories.join(", ")
                ),
            };
            return Err(octopus_core::Error::conflict(
                octopus_core::DomainCode::UnknownFactCategory,
                format!("category {category:?}: {known}"),
            )
            .into());
        }
        let at = now();
        let addition = FactAddition {
            fact: Fact {
                id: FactId::new(),
                tenant_id: tenant,
                agent_id,
                user_id: user_id.to_owned(),
                episode_id: None,
                message_ids: Vec::new(),
                text: spec.text,
                valid_from: spec.valid_from.unwrap_or(at),
                valid_to: None,
                superseded_by: None,
                created_at: at,
                source: FactSource::Manual,
                changed_by: changed_by.to_owned(),
                category: spec.category,
                key: spec.key,
            },
            reason: spec.reason,
        };
        addition.validate()?;
        let fact = self.store.add_fact(tenant, &addition).await?;
        self.work_signal.poke();
        self.write_profile_summary_in_background(tenant, fact.agent_id, &fact.user_id);
        tracing::info!(tenant_id = %tenant, fact_id = %fact.id, "added a fact");
        Ok(fact)
    }

    /// Deletes a fact, every version of it, from every store.
    pub async fn delete_fact(
        &self,
        tenant: TenantId,
        id: FactId,
        reason: Option<String>,
        changed_by: &str,
    ) -> Result<FactDeletionReceipt> {
        let deletion = FactDeletion {
            fact_id: id,
            changed_by: changed_by.to_owned(),
            reason,
            at: now(),
        };
        deletion.validate()?;
        // Its user's paragraph no longer stands once it is gone (see
        // `standing_profile_summary`): written again without it.
        let fact = self.store.get_facts(tenant, &[id]).await?.pop();
        let receipt = self.store.delete_fact(tenant, &deletion).await?;
        if let Some(fact) = fact {
            self.write_profile_summary_in_background(tenant, fact.agent_id, &fact.user_id);
        }
        tracing::info!(tenant_id = %tenant, fact_id = %receipt.fact_id, versions = receipt.versions, "deleted a fact");
        Ok(receipt)
    }

    /// A fact's history, by any of its versions' ids.
    pub async fn fact_history(
        &self,
        tenant: TenantId,
        id: FactId,
    ) -> Result<Vec<FactHistoryEntry>> {
        Ok(self.store.fact_history(tenant, id).await?)
    }

    /// The facts a model's summary of `episode` names (`key_facts`, filed
    /// under `categories` in the same order), as new facts with their
    /// vectors: those the model says are known already left out, those that
    /// replace a known fact naming it. A category the agent does not name is
    /// dropped.
    pub(crate) async fn learn_facts(
        &self,
        agent: &Agent,
        episode: &EpisodeWithMessages,
        key_facts: &[String],
        categories: &[Option<String>],
    ) -> std::result::Result<Vec<NewFact>, ChatError> {
        let texts: Vec<String> = key_facts
            .iter()
            .take(MAX_FACTS_PER_CLOSE)
            .cloned()
            .collect();
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // What leaves for the embedder is redacted where the agent says so.
        let outgoing: Vec<String> = match agent.memory.pii.redacts_outgoing() {
            true => texts
                .iter()
                .map(|text| octopus_core::pii::egress(text).into_owned())
                .collect(),
            false => texts.clone(),
        };
        let (_, vectors) = self
            .embed_in_background(&outgoing)
            .await
            .map_err(|e| ChatError::new("embedder", Fault::Provider, e.to_string()))?;
        let owner = &episode.episode;
        let known = self
            .related_facts(owner.tenant_id, owner.agent_id, &owner.user_id, &vectors)
            .await;
        let changes = match known.is_empty() {
            true => texts
                .iter()
                .map(|text| FactChange::Add { text: text.clone() })
                .collect(),
            false => self.reconcile(agent, &known, &texts).await,
        };
        let category = |index: usize| {
            categories.get(index).cloned().flatten().filter(|c| {
                agent.memory.fact_categories.contains(c)
                    || octopus_core::standing_requests::is_standing(c)
            })
        };
        Ok(changes
            .into_iter()
            .zip(vectors)
            .enumerate()
            .filter_map(|(index, (change, vector))| {
                let (text, replaces) = match change {
                    FactChange::Add { text } => (text, None),
                    FactChange::Replace { text, replaces } => (text, Some(replaces)),
                    FactChange::Keep { .. } => return None,
                };
                let message_ids = sources_by_words(&text, &episode.messages);
                // True from when it was first said, or from the episode's
                // end when no message shares its words.
                let valid_from = episode
                    .messages
                    .iter()
                    .filter(|m| message_ids.contains(&m.id))
                    .map(|m| m.timestamp)
                    .min()
                    .unwrap_or(owner.last_message_at);
                Some(NewFact {
                    id: FactId::new(),
                    text,
                    message_ids,
                    valid_from,
                    replaces,
                    vector,
                    category: category(index),
                })
            })
            .collect())
    }

    /// The user's current facts nearest each of `vectors`, once each.
    /// A search that fails (another embedding model's memory) finds none.
    async fn related_facts(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user: &str,
        vectors: &[Vec<f32>],
    ) -> Vec<Fact> {
        let mut ids: Vec<FactId> = Vec::new();
        for vector in vectors {
            let query = MemoryVectorQuery {
                agent_id: agent,
                user_id: user.to_owned(),
                vector: vector.clone(),
                top_k: RELATED_PER_FACT,
                kinds: vec![MemoryKind::Fact],
                from: None,
                to: None,
            };
            match self.store.search_memory(tenant, &query).await {
                Ok(hits) => ids.extend(hits.into_iter().filter_map(|hit| hit.fact_id)),
                Err(error) => {
                    tracing::warn!(%error, "related facts not found; the new facts are added");
                    return Vec::new();
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        ids.retain(|id| seen.insert(*id));
        match self.store.get_facts(tenant, &ids).await {
            Ok(facts) => {
                let mut known: Vec<Fact> = facts
                    .into_iter()
                    .filter(Fact::is_current)
                    .take(MAX_RELATED_FACTS)
                    .collect();
                // Numbered oldest first: the same facts get the same numbers
                // whatever order the search found them in.
                known.sort_by(|a, b| a.valid_from.cmp(&b.valid_from).then(a.text.cmp(&b.text)));
                known
            }
            Err(error) => {
                tracing::warn!(%error, "related facts not read; the new facts are added");
                Vec::new()
            }
        }
    }

    /// The model's decision for each new fact against the `known` ones.
    async fn reconcile(&self, agent: &Agent, known: &[Fact], new: &[String]) -> Vec<FactChange> {
        let every_one_added = || {
            new.iter()
                .map(|text| FactChange::Add { text: text.clone() })
                .collect()
        };
        let model = match self.chat.for_agent(agent, ChatPurpose::Summary) {
            Ok(model) => model,
            Err(error) => {
                tracing::warn!(%error, "no model to reconcile facts; the new facts are added");
                return every_one_added();
            }
        };
        let mut message = reconcile_message(known, new);
        if agent.memory.pii.redacts_outgoing() {
            message = octopus_core::pii::egress(&message).into_owned();
        }
        let request = ChatRequest {
            messages: vec![
                ChatMessage::new(Role::System, RECONCILE_INSTRUCTIONS),
                ChatMessage::new(Role::User, message),
            ],
            tools: Vec::new(),
        };
        match model.chat(&request, None).await {
            Ok(reply) => read_changes(&reply.text, known, new).unwrap_or_else(|| {
                tracing::warn!(answer = %octopus_core::excerpt(&reply.text),
                    "the model's fact decisions hold no JSON; the new facts are added");
                every_one_added()
            }),
            Err(error) => {
                tracing::warn!(%error, "facts not reconciled; the new facts are added");
                every_one_added()
            }
        }
    }
}
