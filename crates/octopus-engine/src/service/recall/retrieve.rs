//! The first stage: the searches by meaning and by words, their hits
//! turned into scored lists for fusion, with what each retriever said of
//! every memory.

use std::collections::HashMap;

use octopus_core::agent::Agent;
use octopus_core::fact::{Fact, FactHit, FactSearchQuery};
use octopus_core::fusion::ScoredList;
use octopus_core::memory_vectors::{MemoryVectorHit, MemoryVectorQuery};
use octopus_core::message::Message;
use octopus_core::recall::{MemoryKind, RecallMode, RecallQuery};
use octopus_core::recall_explanation::{RecallSearch, SearchList};
use octopus_core::recall_ranking::Memory;
use octopus_core::search::{MAX_SEARCH_LIMIT, MessageHit, MessageSearchQuery, topic_terms};
use octopus_core::{EpisodeId, MessageId, TenantId, Timestamp};

use super::super::QueryVector;
use crate::error::{Error, Result};
use crate::octopus::Octopus;

/// Candidates each retriever contributes to the fusion, per hit asked for.
/// Fusion can only promote what some list found; deeper lists let agreement
/// between retrievers surface items neither ranked first.
const CANDIDATES_PER_HIT: u32 = 4;
const MIN_CANDIDATES: u32 = 40;

/// What the retrievers said about one memory.
#[derive(Default)]
pub(super) struct Evidence {
    pub vector_score: Option<f32>,
    pub keyword_score: Option<f64>,
    pub at: Option<Timestamp>,
}

/// What the first stage hands the second: the retrievers' lists (each
/// named by the search that made it, in the same order), what they said of
/// each memory, and the messages the searches read whole (by id, so that
/// they are not read again).
pub(super) struct Retrieved {
    pub lists: Vec<ScoredList<Memory>>,
    pub searches: Vec<SearchList>,
    pub evidence: HashMap<Memory, Evidence>,
    pub messages: HashMap<MessageId, Message>,
}

/// What the searches by words found: messages, and facts; with the
/// experiments that search again, the messages each of those found.
#[derive(Default)]
struct KeywordHits {
    messages: Vec<MessageHit>,
    facts: Vec<FactHit>,
    /// Further searches by words, each weighing half the query's own.
    further: Vec<(SearchList, Vec<MessageHit>)>,
}

impl Octopus {
    /// Searches `query` by meaning and by words at once, leaving out
    /// `skip_episode`.
    pub(super) async fn retrieve(
        &self,
        tenant: TenantId,
        agent: &Agent,
        query: &RecallQuery,
        vector: &QueryVector,
        skip_episode: Option<EpisodeId>,
    ) -> Result<Retrieved> {
        // Both retrievers go as deep, within what a full-text search may return.
        let depth = (query.top_k * CANDIDATES_PER_HIT).clamp(MIN_CANDIDATES, MAX_SEARCH_LIMIT);
        let sub_questions = self.sub_questions(agent, &query.query).await;
        let by_meaning =
            self.search_by_meaning(tenant, agent, query, vector, depth, &sub_questions);
        let by_words = self.search_by_words(tenant, agent, query, depth, &sub_questions);
        let (vector_hits, mut keyword_hits) = tokio::try_join!(by_meaning, by_words)?;
        if query.mode == RecallMode::Hybrid && query.include_messages {
            let fed_back = self
                .search_meaning_fed_back(tenant, agent, query, depth, &vector_hits)
                .await?;
            keyword_hits.further.extend(fed_back);
        }
        Ok(scored_lists(
            vector_hits,
            keyword_hits,
            (query, &sub_questions),
            depth,
            self.recall_weights.vector,
            |episode| Some(episode) != skip_episode,
        ))
    }

    /// The memory vectors nearest the query's, then each sub-question's.
    async fn search_by_meaning(
        &self,
        tenant: TenantId,
        agent: &Agent,
        query: &RecallQuery,
        vector: &QueryVector,
        depth: u32,
        sub_questions: &[String],
    ) -> Result<Vec<Vec<MemoryVectorHit>>> {
        if query.mode == RecallMode::Keyword {
            return Ok(Vec::new());
        }
        let mut kinds = Vec::new();
        if query.include_messages {
            kinds.push(MemoryKind::Message);
        }
        if query.include_summaries || self.recall_weights.session_keys {
            kinds.push(MemoryKind::Summary);
        }
        if query.include_facts {
            kinds.push(MemoryKind::Fact);
        }
        let mut search = MemoryVectorQuery {
            agent_id: agent.id,
            user_id: query.user_id.clone(),
            vector: vector.get(self).await?,
            top_k: depth,
            kinds,
            from: query.from,
            to: query.to,
        };
        let mut lists = vec![self.store.search_memory(tenant, &search).await?];
        for sub_question in sub_questions {
            search.vector = self.embed_query(tenant, sub_question).await?;
            lists.push(self.store.search_memory(tenant, &search).await?);
        }
        Ok(lists)
    }

    /// The messages and facts that hold the query's topic words, and what
    /// the experiments that are on search besides.
    async fn search_by_words(
        &self,
        tenant: TenantId,
        agent: &Agent,
        query: &RecallQuery,
        depth: u32,
        sub_questions: &[String],
    ) -> Result<KeywordHits> {
        let terms = topic_terms(&query.query);
        if query.mode == RecallMode::Vector || terms.is_empty() {
            return Ok(KeywordHits::default());
        }
        let search = users_turns(agent, query, terms.join(" "), depth);
        let facts = FactSearchQuery {
            agent_id: agent.id,
            user_id: query.user_id.clone(),
            text: search.text.clone(),
            limit: depth,
        };
        let (messages, facts, mut further) = tokio::try_join!(
            async {
                match query.include_messages {
                    true => Ok(self.store.search_messages(tenant, &search).await?),
                    false => Ok(Vec::new()),
                }
            },
            async {
                match query.include_facts {
                    true => Ok(self.store.search_facts(tenant, &facts).await?),
                    false => Ok(Vec::new()),
                }
            },
            async {
                match query.include_messages {
                    true => self.search_names(tenant, &query.query, &search).await,
                    false => Ok(Vec::new()),
                }
            }
        )?;
        if query.include_messages {
            further.extend(
                self.search_sub_questions(tenant, sub_questions, &search)
                    .await?,
            );
        }
        further.extend(self.search_fed_back(tenant, &search, &messages).await?);
        Ok::<_, Error>(KeywordHits {
            messages,
            facts,
            further,
        })
    }
}

/// The two retrievers' hits as lists for fusion, with what each
/// said of every memory; hits below `min_score` or in a left-out episode
/// dropped. The first of `vector_hits` is the query's own search; each
/// further one (a sub-question's, in order) weighs half.
fn scored_lists(
    vector_hits: Vec<Vec<MemoryVectorHit>>,
    keyword_hits: KeywordHits,
    (query, sub_questions): (&RecallQuery, &[String]),
    depth: u32,
    vector_weight: f64,
    elsewhere: impl Fn(EpisodeId) -> bool,
) -> Retrieved {
    let mut read = HashMap::new();
    let mut evidence: HashMap<Memory, Evidence> = HashMap::new();
    let scored = |items: Vec<(Memory, f64)>, weight: f64, complete: bool| ScoredList {
        items,
        weight,
        floor: complete.then_some(0.0),
    };
    let mut vector_lists = Vec::new();
    let mut searches = Vec::new();
    for (nth, hits) in vector_hits.into_iter().enumerate() {
        // A list shorter than asked for holds every match: its worst is a
        // weak match, not zero (cosine and BM25 both mean "unrelated" at 0).
        let complete = (hits.len() as u32) < depth;
        let mut items = Vec::new();
        for hit in hits
            .into_iter()
            .filter(|h| f64::from(h.score) >= query.min_score && elsewhere(h.episode_id))
        {
            let memory = match (hit.kind, hit.message_id, hit.fact_id) {
                (MemoryKind::Message, Some(id), _) => Memory::Message(id),
                (MemoryKind::Fact, _, Some(id)) => Memory::Fact(id, hit.episode_id),
                _ => Memory::Summary(hit.episode_id),
            };
            let entry = evidence.entry(memory).or_default();
            if nth == 0 {
                entry.vector_score = Some(hit.score);
            }
            entry.at = Some(hit.at);
            items.push((memory, f64::from(hit.score)));
        }
        let (weight, search) = match nth {
            0 => (vector_weight, SearchList::of(RecallSearch::Vector)),
            _ => (
                vector_weight / 2.0,
                SearchList {
                    search: RecallSearch::SubQuestionVector,
                    looked_for: sub_questions.get(nth - 1).cloned(),
                },
            ),
        };
        searches.push(search);
        vector_lists.push(scored(items, weight, complete));
    }
    let keyword_complete =
        (keyword_hits.messages.len() as u32) < depth && (keyword_hits.facts.len() as u32) < depth;
    let mut keyword_list = Vec::new();
    for hit in keyword_hits
        .messages
        .into_iter()
        .filter(|h| elsewhere(h.message.episode_id))
    {
        let memory = Memory::Message(hit.message.id);
        let entry = evidence.entry(memory).or_default();
        entry.keyword_score = Some(hit.score);
        entry.at = Some(hit.message.timestamp);
        keyword_list.push((memory, hit.score));
        read.insert(hit.message.id, hit.message);
    }
    // A fact's words are scored over the user's facts; it joins the list
    // by its score, and is held to the query's time bounds by when it held.
    let held = |fact: &Fact| {
        query.to.is_none_or(|to| fact.valid_from < to)
            && query
                .from
                .is_none_or(|from| fact.valid_to.is_none_or(|end| end > from))
    };
    for hit in keyword_hits
        .facts
        .into_iter()
        .filter(|h| elsewhere(h.fact.vector_episode()) && held(&h.fact))
    {
        let memory = Memory::Fact(hit.fact.id, hit.fact.vector_episode());
        let entry = evidence.entry(memory).or_default();
        entry.keyword_score = Some(hit.score);
        entry.at = Some(hit.fact.valid_from);
        keyword_list.push((memory, hit.score));
    }
    keyword_list.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut lists = vector_lists;
    lists.push(scored(keyword_list, 1.0 - vector_weight, keyword_complete));
    searches.push(SearchList::of(RecallSearch::Keyword));
    // Each further search by words weighs half what the query's own does:
    // it found what a part of the question, or a guess at it, names.
    for (search, hits) in keyword_hits.further {
        let complete = (hits.len() as u32) < depth;
        let mut items = Vec::with_capacity(hits.len());
        for hit in hits.into_iter().filter(|h| elsewhere(h.message.episode_id)) {
            let memory = Memory::Message(hit.message.id);
            let entry = evidence.entry(memory).or_default();
            entry.at = Some(hit.message.timestamp);
            items.push((memory, hit.score));
            read.entry(hit.message.id).or_insert(hit.message);
        }
        lists.push(scored(items, (1.0 - vector_weight) / 2.0, complete));
        searches.push(search);
    }
    Retrieved {
        lists,
        searches,
        evidence,
        messages: read,
    }
}

/// A search of `text` among the user's turns with this agent, within the
/// query's time range.
pub(super) fn users_turns(
    agent: &Agent,
    query: &RecallQuery,
    text: String,
    depth: u32,
) -> MessageSearchQuery {
    MessageSearchQuery {
        text,
        agent_id: Some(agent.id),
        user_id: Some(query.user_id.clone()),
        conversation_id: None,
        from: query.from,
        to: query.to,
        limit: depth,
    }
}
