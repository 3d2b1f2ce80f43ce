//! Working memory for one turn: retrieval for every block at
//! once, then assembly and pruning to the agent's budget, counted with the
//! agent's model's tokenizer. Nothing here is stored.
//!
//! Working memory (`service/context.rs`, `working_memory.rs`) reads the
//! history, embeds the user's message once while knowledge, recall, facts and
//! procedures are searched, makes each block's scores relative to its best, and
//! prunes the lowest-scored items, then the oldest history, to the agent's
//! budget. Past conversations enter as dated passages (`episodic_snippets`)
//! within their own token budget.

use std::sync::Arc;

use octopus_core::agent::Agent;
use octopus_core::appending::SeenTail;
use octopus_core::context_explanation::{ContextExplanation, RecalledCandidate, explain_context};
use octopus_core::conversation::Conversation;
use octopus_core::episode::EpisodeFilter;
use octopus_core::episodic_snippets::{Placement, passages_placing};
use octopus_core::fact::{Fact, FactFilter};
use octopus_core::knowledge::{ChunkFilter, KnowledgeHit, SearchMode};
use octopus_core::recall::RecallHit;
use octopus_core::recall::{RecallMode, RecallQuery};
use octopus_core::recall_explanation::RecallExplanation;
use octopus_core::store::Page;
use octopus_core::working_memory::{
    AssembledContext, ChatMessage, ContextParts, ContextTrace, Retrieved, assemble,
};
use octopus_core::{ConversationId, EpisodeId, Error as DomainError, TenantId};
use serde::Serialize;

use super::QueryVector;
use super::knowledge::KnowledgeQuery;
use crate::error::{Error, Result};
use crate::history::HistoryVersion;
use crate::octopus::Octopus;
use crate::token_counting::ModelTokenCounter;
use octopus_core::chat_history::History;

/// The service a search could not reach, when that is why it failed.
fn unreachable_service<T>(result: &Result<T>) -> Option<&'static str> {
    match result {
        Err(Error::Domain(DomainError::Unavailable { service, source })) => {
            tracing::warn!(service, error = %source, "vector search unavailable; context by words alone");
            Some(service)
        }
        _ => None,
    }
}

/// The trace's note when the vector backend could not be reached.
fn words_only(service: &str) -> String {
    format!("{service} is unreachable: knowledge and memories were found by their words alone")
}

/// The context of one turn, ready for a chat-completions API.
#[derive(Clone, Debug, Serialize)]
pub struct WorkingMemory {
    pub messages: Vec<ChatMessage>,
    pub trace: ContextTrace,
    /// The open episode whose history is included, if any.
    pub episode_id: Option<EpisodeId>,
    /// How tokens were counted: `o200k_base`, `cl100k_base`, or
    /// `cl100k_base+10%`.
    pub tokenizer: &'static str,
    /// Why each candidate was kept or left out, when asked.
    pub explanation: Option<ContextExplanation>,
}

impl Octopus {
    /// Assembles the context for the user's next message in a conversation.
    /// The message itself is not stored: append it (and the reply) as usual.
    pub async fn build_context(
        &self,
        tenant: TenantId,
        conversation_id: ConversationId,
        message: &str,
    ) -> Result<WorkingMemory> {
        self.context_for(tenant, conversation_id, message, false)
            .await
    }

    /// [`Self::build_context`], saying why each candidate was kept or left
    /// out, and why recall found each memory where it did.
    pub async fn build_context_explained(
        &self,
        tenant: TenantId,
        conversation_id: ConversationId,
        message: &str,
    ) -> Result<WorkingMemory> {
        self.context_for(tenant, conversation_id, message, true)
            .await
    }

    async fn context_for(
        &self,
        tenant: TenantId,
        conversation_id: ConversationId,
        message: &str,
        explain: bool,
    ) -> Result<WorkingMemory> {
        octopus_core::bounds::check_chars("message", message, 1, self.limits.max_message_bytes)?;
        let conversation = self.store.get_conversation(tenant, conversation_id).await?;
        let agent = self
            .conversation_active_agent(tenant, conversation.agent_id)
            .await?;
        // The history first: recall leaves out its episode. It is a cached read.
        let (seen, history) = self.history(tenant, conversation_id, &agent).await?;
        self.assemble_context(
            tenant,
            &conversation,
            &agent,
            message,
            (seen.map(|tail| tail.episode_id), history.messages.clone()),
            explain,
        )
        .await
    }

    /// Retrieval and assembly for `message`, after the open episode's
    /// turns before it (its `history`); with `explain`, why each candidate was
    /// kept or left out.
    pub(crate) async fn assemble_context(
        &self,
        tenant: TenantId,
        conversation: &Conversation,
        agent: &Agent,
        message: &str,
        (episode_id, history): (Option<EpisodeId>, Vec<ChatMessage>),
        explain: bool,
    ) -> Result<WorkingMemory> {
        let memory = &agent.memory;
        // The message is embedded once, for knowledge and recall alike; their
        // searches by words run while it is embedded.
        // When the agent's `pii` policy redacts outgoing text, the message leaves (for the embedder and the
        // model) redacted; its trigger patterns still see it as written.
        let written = message;
        let redacted = match memory.pii.redacts_outgoing() {
            true => octopus_core::pii::egress_for(message, memory.phone_region()),
            false => std::borrow::Cow::Borrowed(message),
        };
        let message: &str = &redacted;
        // A message may be longer than a search takes (a pasted document):
        // the searches ask with its opening.
        let query = octopus_core::bounds::query_of(message);
        let vector = QueryVector::new(tenant, query);
        let knowledge_query = KnowledgeQuery {
            text: query.to_owned(),
            top_k: Some(memory.knowledge_top_k),
            min_score: Some(memory.knowledge_min_score),
            mode: SearchMode::Hybrid,
            filter: ChunkFilter::default(),
        };
        let mut recall_query = RecallQuery::new(conversation.user_id.clone(), query);
        recall_query.top_k = memory
            .episodic_top_k
            .clamp(1, octopus_core::recall::MAX_RECALL_TOP_K);
        recall_query.neighbours = memory.episodic_neighbours;
        // The user's current facts have a block of their own.
        recall_query.include_facts = false;
        recall_query.explain = explain;
        let wants_recall = memory.episodic_top_k > 0;
        let wants_knowledge = memory.knowledge_top_k > 0;
        let facts_filter = FactFilter {
            agent_id: agent.id,
            user_id: conversation.user_id.clone(),
            include_replaced: false,
            categories: memory.context_fact_categories.clone(),
            key: None,
            page: Page {
                limit: memory.max_context_facts,
                offset: 0,
            },
        };
        let standing_filter = super::standing_requests::standing_filter(
            agent.id,
            &conversation.user_id,
            memory
                .max_context_facts
                .min(super::standing_requests::MAX_STANDING_IN_CONTEXT),
        );
        let (knowledge, episodic, procedures, (standing, facts), profile) = tokio::join!(
            async {
                if !wants_knowledge {
                    return Ok(Vec::new());
                }
                self.search_knowledge_with(tenant, agent.id, knowledge_query.clone(), &vector)
                    .await
            },
            async {
                if !wants_recall {
                    return Ok(Vec::new());
                }
                self.recall_with(tenant, agent.id, &recall_query, &vector, episode_id)
                    .await
            },
            self.match_procedures(tenant, agent, written, &vector),
            async {
                match memory.max_context_facts {
                    0 => (Ok(Vec::new()), Ok(Vec::new())),
                    _ => tokio::join!(
                        self.store.list_facts(tenant, &standing_filter),
                        self.store.list_facts(tenant, &facts_filter)
                    ),
                }
            },
            async {
                if memory.profile_max_tokens == 0 {
                    return Ok((None, Vec::new(), None));
                }
                let recent = super::profiles::recent_filter(agent.id, &conversation.user_id);
                tokio::try_join!(
                    self.store
                        .user_activity(tenant, agent.id, &conversation.user_id),
                    self.store.list_episodes(tenant, &recent),
                    self.standing_profile_summary(tenant, agent.id, &conversation.user_id),
                )
            }
        );
        let (activity, recent, summary) = profile?;
        let (procedures, procedure_matches) = procedures?;
        // A turn goes on while the vector backend is out of reach: what the
        // words find, with the trace saying why there is nothing by meaning.
        let mut vector_search_unavailable = None;
        let knowledge = match unreachable_service(&knowledge) {
            Some(service) => {
                vector_search_unavailable = Some(words_only(service));
                let by_words = KnowledgeQuery {
                    mode: SearchMode::Keyword,
                    ..knowledge_query
                };
                self.search_knowledge_with(tenant, agent.id, by_words, &vector)
                    .await
            }
            None => knowledge,
        };
        let episodic = match unreachable_service(&episodic) {
            Some(service) => {
                vector_search_unavailable = Some(words_only(service));
                recall_query.mode = RecallMode::Keyword;
                self.recall_with(tenant, agent.id, &recall_query, &vector, episode_id)
                    .await
            }
            None => episodic,
        };
        let mut recalled = Vec::new();
        let parts = ContextParts {
            system_prompt: agent.system_prompt.clone(),
            procedures,
            profile: profile_items(summary, activity, &recent, memory.pii.redacts_outgoing()),
            profile_max_tokens: Some(memory.profile_max_tokens),
            facts: fact_items(
                standing?,
                facts?,
                memory.max_context_facts,
                memory.pii.redacts_outgoing(),
            ),
            knowledge: relative(
                knowledge?
                    .into_iter()
                    .map(|hit| knowledge_item(hit, memory.pii.redacts_outgoing()))
                    .collect(),
            ),
            episodic: relative(placed_passages(
                episodic?,
                memory.pii.redacts_outgoing(),
                explain.then_some(&mut recalled),
            )),
            episodic_max_tokens: Some(memory.episodic_max_tokens),
            history,
            user_message: message.to_owned(),
        };
        let counter = counter_for(agent);
        let AssembledContext {
            messages,
            mut trace,
        } = assemble(parts, self.limits.bounded_memory(memory).0, &counter)?;
        trace.procedures = procedure_matches;
        trace.vector_search_unavailable = vector_search_unavailable;
        let explanation =
            explain.then(|| explain_context(&trace, recalled, memory.pii.redacts_outgoing()));
        Ok(WorkingMemory {
            messages,
            trace,
            episode_id,
            tokenizer: counter.tokenizer().name(),
            explanation,
        })
    }

    /// The conversation's open episode, if it has one.
    pub(crate) async fn open_episode(
        &self,
        tenant: TenantId,
        conversation: ConversationId,
    ) -> Result<Option<octopus_core::episode::Episode>> {
        let filter = EpisodeFilter {
            conversation_id: Some(conversation),
            page: Page {
                limit: 1,
                offset: 0,
            },
            ..EpisodeFilter::default()
        };
        let latest = self.store.list_episodes(tenant, &filter).await?.pop();
        Ok(latest.filter(|e| e.is_open()))
    }

    /// The open episode of a conversation, as the history was read from it,
    /// and its last messages as history (tool rounds whole), from the cache
    /// when it is current: no more than the agent's `history_max_messages`,
    /// and read back only as far as the agent's token budget can hold (see
    /// [`Self::episode_tail`]).
    pub(crate) async fn history(
        &self,
        tenant: TenantId,
        conversation: ConversationId,
        agent: &Agent,
    ) -> Result<(Option<SeenTail>, Arc<History>)> {
        let redact = agent.memory.pii.redacts_outgoing();
        let (budget, limit) = self.limits.bounded_memory(&agent.memory);
        let Some(open) = self.open_episode(tenant, conversation).await? else {
            // The next message opens a new episode: no history yet.
            return Ok((None, Arc::default()));
        };
        let key = (tenant, conversation);
        let version = HistoryVersion {
            episode: open.id,
            message_count: open.message_count,
            updated_at: open.updated_at,
            redacted: redact,
        };
        if let Some(cached) = self.history.get(key, version) {
            return Ok((Some(version.seen()), cached));
        }
        let (read, tail) = self
            .episode_tail(tenant, open.id, limit, budget, &counter_for(agent), false)
            .await?;
        // The version as the newest page was read with it.
        let version = HistoryVersion {
            episode: open.id,
            message_count: read.message_count,
            updated_at: read.updated_at,
            redacted: redact,
        };
        let history = Arc::new(octopus_core::chat_history::history(
            &tail,
            redact,
            limit as usize,
        ));
        self.history.put(key, version, Arc::clone(&history));
        Ok((Some(version.seen()), history))
    }

    /// The newest messages of an open episode, oldest first, read backwards
    /// a page at a time until there are `limit` of them (and a few more, as
    /// some are left out of a history), or more tokens than `budget`: older
    /// ones would be pruned from the context anyway, and those read past
    /// that point are dropped at once. So what a request holds
    /// is bounded by the budget and a page, however long the episode. The
    /// oldest message read is never a tool result (its round is read whole),
    /// and with `to_user`, the reading goes on to the newest user message.
    /// Returns the episode as the newest page was read with it.
    pub(crate) async fn episode_tail(
        &self,
        tenant: TenantId,
        episode: EpisodeId,
        limit: u32,
        budget: u32,
        counter: &ModelTokenCounter,
        to_user: bool,
    ) -> Result<(
        octopus_core::episode::Episode,
        Vec<octopus_core::message::Message>,
    )> {
        use octopus_core::message::Role;
        use octopus_core::tokens::TokenCounter;
        let wanted = limit.saturating_add(HISTORY_MARGIN);
        // Newest first while read; older messages of a page past what is
        // needed are dropped as soon as they are seen.
        let mut kept: Vec<octopus_core::message::Message> = Vec::new();
        let (mut chat, mut tokens, mut user_seen) = (0u32, 0u64, false);
        let (mut before, mut page_size) = (None, FIRST_HISTORY_PAGE);
        let mut newest_read_with = None;
        'pages: loop {
            let read = self
                .store
                .episode_messages_before(tenant, episode, before, page_size)
                .await?;
            newest_read_with.get_or_insert(read.episode);
            let read_all = read.messages.len() < page_size as usize;
            before = read.messages.first().map(|m| m.ordinal);
            for message in read.messages.into_iter().rev() {
                let enough = (chat >= wanted || tokens > u64::from(budget))
                    && kept.last().is_some_and(|oldest| oldest.role != Role::Tool)
                    && (user_seen || !to_user);
                if enough {
                    break 'pages;
                }
                if message.role != Role::System {
                    chat += 1;
                }
                user_seen |= message.role == Role::User;
                tokens += u64::from(counter.count(&message.search_text()));
                kept.push(message);
            }
            if read_all {
                break;
            }
            page_size = (page_size * 2).min(LAST_HISTORY_PAGE);
        }
        kept.reverse();
        // The loop reads at least one page, and with it the episode.
        let episode = newest_read_with
            .ok_or_else(|| Error::Config("no page of the episode was read".into()))?;
        Ok((episode, kept))
    }
}

/// Messages read beyond `history_max_messages`, for those a history leaves
/// out (system messages, empty ones, unanswered calls).
const HISTORY_MARGIN: u32 = 2;
/// The first page of history read, newest first; each next is twice as
/// large, up to the last size. Small first, so that a few long messages
/// are not read a page of them at a time.
const FIRST_HISTORY_PAGE: u32 = 4;
const LAST_HISTORY_PAGE: u32 = 64;

pub(super) fn counter_for(agent: &Agent) -> ModelTokenCounter {
    ModelTokenCounter::for_model(agent.llm.provider, &agent.llm.model)
}

/// The recall hits as passages ([`passages_placing`]); with `recalled`,
/// each hit noted there in rank order, with where it went and recall's
/// explanation of it.
fn placed_passages(
    mut hits: Vec<RecallHit>,
    redact: bool,
    recalled: Option<&mut Vec<RecalledCandidate>>,
) -> Vec<Retrieved> {
    let Some(recalled) = recalled else {
        return passages_placing(hits, redact, |_, _| {});
    };
    let mut explained: std::collections::HashMap<String, RecallExplanation> = hits
        .iter_mut()
        .filter_map(|hit| Some((hit_id(hit)?, hit.explanation.take()?)))
        .collect();
    passages_placing(hits, redact, |id: String, placement: Placement| {
        recalled.push(RecalledCandidate {
            recall: explained.remove(&id),
            id,
            placement,
        });
    })
}

/// The id a passage names a hit by: its message's, its fact's, its
/// summary's episode's.
fn hit_id(hit: &RecallHit) -> Option<String> {
    if let Some(window) = &hit.window {
        return Some(window.message.id.to_string());
    }
    if let Some(fact) = &hit.fact {
        return Some(fact.id.to_string());
    }
    hit.episode_id.map(|episode| episode.to_string())
}

/// Scores relative to the block's best, which scores 1. Pruning compares
/// knowledge with past conversations, and their searches score on scales of
/// their own (rank fusion, in hundredths; recall, up to about 2).
fn relative(mut items: Vec<Retrieved>) -> Vec<Retrieved> {
    let best = items.iter().map(|i| i.score).fold(0.0, f64::max);
    if best > 0.0 {
        items.iter_mut().for_each(|item| item.score /= best);
    }
    items
}

/// The user's standing requests, then their other current facts (each
/// list the newest first, `limit` in all), as the facts block's items,
/// each saying since when it holds. A standing request scores 1: short of
/// room, the other facts go first. Those score from just under 1 for the
/// newest down towards 0.5 for the oldest: the oldest goes first, and after
/// the weaker half of what was retrieved.
fn fact_items(standing: Vec<Fact>, facts: Vec<Fact>, limit: u32, redact: bool) -> Vec<Retrieved> {
    let item = |fact: Fact, label: String, score: f64| Retrieved {
        id: fact.id.to_string(),
        label,
        text: match redact {
            true => octopus_core::pii::egress(&fact.text).into_owned(),
            false => fact.text,
        },
        score,
    };
    let since = |fact: &Fact| fact.valid_from.format("%Y-%m-%d").to_string();
    let shown: std::collections::HashSet<_> = standing.iter().map(|fact| fact.id).collect();
    let rest: Vec<Fact> = facts
        .into_iter()
        .filter(|fact| !shown.contains(&fact.id))
        .take((limit as usize).saturating_sub(standing.len()))
        .collect();
    let count = rest.len().max(1) as f64;
    let mut items: Vec<Retrieved> = standing
        .into_iter()
        .map(|fact| {
            let kind = match fact.category.as_deref() {
                Some(octopus_core::standing_requests::INSTRUCTION) => "standing instruction",
                _ => "preference",
            };
            let label = format!("{kind}, since {}", since(&fact));
            item(fact, label, 1.0)
        })
        .collect();
    items.extend(rest.into_iter().enumerate().map(|(i, fact)| {
        let label = format!("since {}", since(&fact));
        item(fact, label, 0.99 - 0.49 * i as f64 / count)
    }));
    items
}

/// The profile block's lines: the paragraph written about the user, when
/// there is one that stands (scoring 0.61), how much they have talked with
/// the agent (0.6), then their newest past conversations a line each, from
/// just under that for the newest down to 0.3: short of room, the profile
/// goes before most of what was retrieved for the message, the oldest line
/// first.
fn profile_items(
    summary: Option<octopus_core::profile_summary::ProfileSummary>,
    activity: Option<octopus_core::conversation::UserActivity>,
    episodes: &[octopus_core::episode::Episode],
    redact: bool,
) -> Vec<Retrieved> {
    let date = |at: octopus_core::Timestamp| at.format("%Y-%m-%d").to_string();
    let mut items: Vec<Retrieved> = summary
        .map(|summary| Retrieved {
            id: "summary".into(),
            label: format!("as of {}", date(summary.written_at)),
            text: match redact {
                true => octopus_core::pii::egress(&summary.text).into_owned(),
                false => summary.text,
            },
            score: 0.61,
        })
        .into_iter()
        .collect();
    items.extend(activity.map(|activity| Retrieved {
        id: "activity".into(),
        label: format!("since {}", date(activity.first_seen_at)),
        text: format!(
            "{} conversations with you ({} messages), the last active on {}",
            activity.conversations,
            activity.messages,
            date(activity.last_active_at)
        ),
        score: 0.6,
    }));
    let lines = super::profiles::recent_lines(episodes);
    let count = lines.len().max(1) as f64;
    items.extend(lines.into_iter().enumerate().map(|(i, line)| Retrieved {
        id: line.episode_id.to_string(),
        label: format!("conversation of {}", date(line.started_at)),
        text: match redact {
            true => octopus_core::pii::egress(&line.summary).into_owned(),
            false => line.summary,
        },
        score: 0.59 - 0.29 * i as f64 / count,
    }));
    items
}

fn knowledge_item(hit: KnowledgeHit, redact: bool) -> Retrieved {
    let metadata = &hit.chunk.metadata;
    let label = match &metadata.heading {
        Some(heading) => format!("source: {} › {heading}", metadata.source),
        None => format!("source: {}", metadata.source),
    };
    Retrieved {
        id: hit.chunk.id.to_string(),
        label,
        text: match redact {
            true => octopus_core::pii::egress(&hit.chunk.content).into_owned(),
            false => hit.chunk.content,
        },
        score: f64::from(hit.score),
    }
}
