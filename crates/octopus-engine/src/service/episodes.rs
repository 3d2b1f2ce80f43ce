//! Messages and episodes: appends (which open and continue episodes), reads,
//! closes, summaries, soft delete, restore and purge, and message search.

use octopus_core::DomainCode;
use octopus_core::appending::SeenTail;
use std::collections::BTreeSet;

use chrono::Duration;
use octopus_core::appending::{AppendMessages, MessageRecord};
use octopus_core::episode::{
    CloseEpisode, Episode, EpisodeFilter, EpisodeSummary, EpisodeWithMessages,
};
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::{Message, NewMessage};
use octopus_core::search::{MessageHit, MessageSearchQuery, search_terms};
use octopus_core::{
    ConversationId, EpisodeId, Error as DomainError, MessageId, TenantId, Timestamp, now,
    to_stored_precision,
};

use crate::config::MessageOrigin;
use crate::error::Result;
use crate::octopus::Octopus;

impl Octopus {
    /// Appends messages to a conversation, in order, all or none. Opens an episode
    /// when none is open; a message later than the open episode's last by more
    /// than the agent's idle timeout closes it (`timeout`) and opens another.
    pub async fn append_messages(
        &self,
        tenant: TenantId,
        conversation_id: ConversationId,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<Message>> {
        if messages.is_empty() {
            return Err(DomainError::invalid("messages", "must not be empty").into());
        }
        if messages.len() > self.limits.max_batch_messages {
            return Err(DomainError::invalid(
                "messages",
                format!(
                    "{} messages in one batch; the limit is {}",
                    messages.len(),
                    self.limits.max_batch_messages
                ),
            )
            .into());
        }
        let agent_id = self.conversation_agent(tenant, conversation_id).await?;
        let agent = self.conversation_active_agent(tenant, agent_id).await?;
        let records = self
            .message_records(
                tenant,
                messages,
                "messages",
                MessageOrigin::Live,
                &agent.memory,
            )
            .await?;
        self.append_records(tenant, conversation_id, &agent, records, None)
            .await
    }

    /// Appends validated messages of a live conversation of `agent`.
    pub(crate) async fn append_records(
        &self,
        tenant: TenantId,
        conversation_id: ConversationId,
        agent: &octopus_core::agent::Agent,
        records: Vec<MessageRecord>,
        follows: Option<SeenTail>,
    ) -> Result<Vec<Message>> {
        self.check_memory_quota(tenant, records.len() as u64)
            .await?;
        let idle = i64::try_from(agent.memory.episode_idle_timeout_secs).unwrap_or(i64::MAX);
        let batch = AppendMessages {
            conversation_id,
            messages: records,
            idle_timeout: Duration::try_seconds(idle).unwrap_or(Duration::MAX),
            now: now(),
            work_class: WorkClass::Live,
            follows,
            // Learning asks the agent's model, as a summary does.
            learn_every: match self.summaries.ask_models {
                true => agent.memory.learn_every_messages,
                false => 0,
            },
        };
        let stored = self.store.append_messages(tenant, batch).await?;
        self.quotas.queued_more(tenant, stored.len() as u64);
        self.work_signal.poke();
        Ok(stored)
    }

    /// Validates messages and decides their ids, token counts, timestamps
    /// and, by the agent's policy (`memory`), what PII they hold.
    /// `field` names the list in errors.
    pub(crate) async fn message_records(
        &self,
        tenant: TenantId,
        messages: Vec<NewMessage>,
        field: &str,
        origin: MessageOrigin,
        memory: &octopus_core::agent::MemoryConfig,
    ) -> Result<Vec<MessageRecord>> {
        let limits = self.limits.message_limits();
        let at = now();
        for (index, message) in messages.iter().enumerate() {
            message
                .validate(&limits)
                .map_err(|e| e.within(&format!("{field}[{index}]")))?;
            if let Some(timestamp) = message.timestamp {
                let field = format!("{field}[{index}].timestamp");
                self.limits.check_timestamp(&field, timestamp, origin, at)?;
            }
        }
        let speakers: BTreeSet<_> = messages.iter().filter_map(|m| m.agent_id).collect();
        for speaker in speakers {
            if let Err(error) = self.cached_agent(tenant, speaker).await {
                let index = messages
                    .iter()
                    .position(|m| m.agent_id == Some(speaker))
                    .unwrap_or(0);
                // The conversation addressed exists, so this is not its 404:
                // the body names an agent the tenant does not have (missing
                // or another tenant's, alike), a conflict with what is stored.
                let error = match error {
                    crate::error::Error::Domain(DomainError::NotFound { kind, id }) => {
                        DomainError::conflict(
                            DomainCode::SpeakerNotFound,
                            format!("{field}[{index}].agent_id: no {kind} {id}"),
                        )
                    }
                    crate::error::Error::Domain(domain) => {
                        domain.within(&format!("{field}[{index}].agent_id"))
                    }
                    other => return Err(other),
                };
                return Err(error.into());
            }
        }
        Ok(messages
            .into_iter()
            .map(|message| MessageRecord {
                id: MessageId::new(),
                token_count: message
                    .token_count
                    .unwrap_or_else(|| self.tokens.count_message(&message)),
                timestamp: message.timestamp.map(to_stored_precision).unwrap_or(at),
                role: message.role,
                content: message.content,
                name: message.name,
                tool_call_id: message.tool_call_id,
                tool_calls: message.tool_calls,
                agent_id: message.agent_id,
                contains_pii: message.contains_pii,
                redacted_content: message.redacted_content,
                accounting: Default::default(),
            })
            .map(|record| with_pii_policy(record, memory))
            .collect())
    }

    pub async fn get_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
    ) -> Result<EpisodeWithMessages> {
        Ok(self.store.get_episode_with_messages(tenant, id).await?)
    }

    /// Lists episodes; an agent or conversation named in the filter must be the
    /// tenant's.
    pub async fn list_episodes(
        &self,
        tenant: TenantId,
        filter: &EpisodeFilter,
    ) -> Result<Vec<Episode>> {
        octopus_core::bounds::check_window(filter.from, filter.to)?;
        self.check_agent(tenant, filter.agent_id).await?;
        if let Some(conversation) = filter.conversation_id {
            self.store.get_conversation(tenant, conversation).await?;
        }
        Ok(self.store.list_episodes(tenant, filter).await?)
    }

    pub async fn close_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        close: CloseEpisode,
    ) -> Result<Episode> {
        if let Some(summary) = &close.summary {
            summary.validate()?;
        }
        if let Some(ended_at) = close.ended_at {
            self.limits
                .check_timestamp("ended_at", ended_at, MessageOrigin::Import, now())?;
        }
        let close = CloseEpisode {
            ended_at: close.ended_at.map(to_stored_precision),
            ..close
        };
        let closed = self.store.close_episode(tenant, id, close, now()).await?;
        self.work_signal.poke();
        Ok(closed)
    }

    /// Closes the episodes whose agent's idle timeout has passed since their
    /// last message (`timeout`, ended at that message), and queues their
    /// summaries. Returns how many this call closed.
    pub async fn sweep_idle_episodes(&self) -> Result<usize> {
        const SWEEP_BATCH: u32 = 500;
        let mut total = 0;
        loop {
            let closed = self.store.close_idle_episodes(now(), SWEEP_BATCH).await?;
            total += closed.len();
            if !closed.is_empty() {
                self.work_signal.poke();
            }
            if closed.len() < SWEEP_BATCH as usize {
                return Ok(total);
            }
        }
    }

    /// Archives the episodes closed (or restored) longer ago than their
    /// agent's `retention_days` at `now`. Returns how many this call archived.
    pub async fn archive_expired_episodes(&self, now: Timestamp) -> Result<usize> {
        const SWEEP_BATCH: u32 = 500;
        let mut total = 0;
        loop {
            let archived = self
                .store
                .archive_expired_episodes(now, SWEEP_BATCH)
                .await?;
            total += archived.len();
            if archived.len() < SWEEP_BATCH as usize {
                return Ok(total);
            }
        }
    }

    /// Sweeps idle episodes every `every` until the runtime shuts down. Any
    /// number of processes may sweep the same data: each episode closes once.
    pub fn start_idle_sweeper(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let octopus = self.clone();
        repeat(every, "idle sweep", move || {
            let octopus = octopus.clone();
            async move {
                let closed = octopus.sweep_idle_episodes().await?;
                if closed > 0 {
                    tracing::info!(closed, "idle episodes closed");
                }
                Ok(())
            }
        })
    }

    /// Archives expired episodes every `every` until the runtime shuts down.
    /// Any number of processes may sweep the same data: each episode is
    /// archived once.
    pub fn start_retention_sweeper(
        &self,
        every: std::time::Duration,
    ) -> tokio::task::JoinHandle<()> {
        let octopus = self.clone();
        repeat(every, "retention sweep", move || {
            let octopus = octopus.clone();
            async move {
                let archived = octopus.archive_expired_episodes(now()).await?;
                if archived > 0 {
                    tracing::info!(archived, "expired episodes archived");
                }
                Ok(())
            }
        })
    }

    pub async fn set_episode_summary(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        summary: EpisodeSummary,
    ) -> Result<Episode> {
        summary.validate()?;
        let episode = self
            .store
            .set_episode_summary(tenant, id, summary, now())
            .await?;
        self.work_signal.poke();
        Ok(episode)
    }

    pub async fn delete_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Episode> {
        Ok(self.store.soft_delete_episode(tenant, id, now()).await?)
    }

    pub async fn restore_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Episode> {
        Ok(self.store.restore_episode(tenant, id, now()).await?)
    }

    pub async fn purge_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<()> {
        self.store.purge_episode(tenant, id).await?;
        tracing::info!(tenant_id = %tenant, episode_id = %id, "purged episode");
        Ok(())
    }

    pub async fn search_messages(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
    ) -> Result<Vec<MessageHit>> {
        query.validate()?;
        self.check_agent(tenant, query.agent_id).await?;
        if let Some(conversation) = query.conversation_id {
            self.store.get_conversation(tenant, conversation).await?;
        }
        // A query of punctuation alone has no word to match: nothing is found.
        if search_terms(&query.text).is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.store.search_messages(tenant, query).await?)
    }
}

/// Finds the PII of a message its caller did not mark, as the agent's policy
/// says, and with `redacted_only` stores the redacted text in place of the
/// original.
fn with_pii_policy(
    mut record: MessageRecord,
    memory: &octopus_core::agent::MemoryConfig,
) -> MessageRecord {
    use octopus_core::message::MessageContent;
    use octopus_core::pii::{detect_for, redact};
    let marked = record.contains_pii || record.redacted_content.is_some();
    if memory.pii.detects() && !marked {
        let text = record
            .content
            .as_ref()
            .map(MessageContent::text)
            .unwrap_or_default();
        let findings = detect_for(&text, memory.phone_region());
        if !findings.is_empty() {
            record.contains_pii = true;
            if memory.pii.keeps_redacted_copy() {
                record.redacted_content = Some(redact(&text, &findings));
            }
        }
    }
    if memory.pii.stores_redacted_only()
        && let Some(redacted) = &record.redacted_content
    {
        record.content = Some(MessageContent::Text(redacted.clone()));
    }
    record
}

/// Runs `pass` every `every` until the runtime shuts down; a failed pass is
/// logged and tried again at the next tick.
fn repeat<F, Fut>(
    every: std::time::Duration,
    what: &'static str,
    pass: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if let Err(error) = pass().await {
                tracing::warn!(%error, what, "background pass failed; trying again");
            }
        }
    })
}
