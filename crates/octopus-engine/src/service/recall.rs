//! Recall: what an agent remembers of a user, by meaning and by words.
//!
//! The query is embedded and searched in the agent's memory vectors (messages,
//! episode summaries and facts) while the full-text indexes (of messages and
//! of facts) are searched for its topic words. The two lists' scores are fused, each candidate is ranked in its
//! context (its neighbouring turns and its episode, see
//! [`octopus_core::recall_ranking`]), optionally weighted by recency, the
//! named speaker's and dates' turns and the facts that held at the time asked
//! about put first, and the winners' text is read from SQL. Where the operator
//! turns them on, the names the query holds, the words its best hits share and
//! the sub-questions the agent's model splits it into are searched too.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use octopus_core::agent::Agent;
use octopus_core::chat::ChatPurpose;
use octopus_core::chat::ChatRequest;
use octopus_core::dates_named::dates_named;
use octopus_core::episode::Episode;
use octopus_core::fact::{Fact, FactHit, FactSearchQuery};
use octopus_core::feedback::{FEEDBACK_HITS, feedback_terms};
use octopus_core::fusion::ScoredList;
use octopus_core::memory_vectors::{MemoryVectorHit, MemoryVectorQuery};
use octopus_core::message::{Message, Role};
use octopus_core::pii::egress_for;
use octopus_core::recall::{
    MemoryKind, MessagePosition, MessageWindow, RecallHit, RecallMode, RecallQuery,
};
use octopus_core::recall_ranking::{Memory, rank_in_context};
use octopus_core::search::{MAX_SEARCH_LIMIT, MessageHit, MessageSearchQuery, topic_terms};
use octopus_core::speakers::{speaker_of, the_one_named};
use octopus_core::sub_questions::{SUB_QUESTION_INSTRUCTIONS, read_sub_questions};
use octopus_core::things_named::things_named;
use octopus_core::time_asked::{TimeAsked, put_what_held_first};
use octopus_core::working_memory::ChatMessage;
use octopus_core::{AgentId, EpisodeId, FactId, MessageId, TenantId, Timestamp};

use super::QueryVector;
use crate::error::Result;
use crate::octopus::Octopus;

/// Candidates each retriever contributes to the fusion, per hit asked for.
/// Fusion can only promote what some list found; deeper lists let agreement
/// between retrievers surface items neither ranked first.
const CANDIDATES_PER_HIT: u32 = 4;
const MIN_CANDIDATES: u32 = 40;
/// Ranked memories read to learn who said them and when, per hit asked for:
/// in a dialogue about half are the named speaker's, enough to fill the hits.
/// Each is a read of the message; the rest keep their places.
const SPEAKER_HEAD_PER_HIT: u32 = 2;

/// What the retrievers said about one memory.
#[derive(Default)]
struct Evidence {
    vector_score: Option<f32>,
    keyword_score: Option<f64>,
    at: Option<Timestamp>,
}

impl Octopus {
    /// The memories of `query.user_id` with this agent most relevant to
    /// `query.query`, best first.
    pub async fn recall(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &RecallQuery,
    ) -> Result<Vec<RecallHit>> {
        self.recall_with(tenant, agent, query, &QueryVector::new(&query.query), None)
            .await
    }

    /// [`Self::recall`], with the query's vector shared with the caller's
    /// other searches, and leaving out one episode (the current one, whose
    /// turns are in the history).
    pub(crate) async fn recall_with(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &RecallQuery,
        vector: &QueryVector,
        skip_episode: Option<EpisodeId>,
    ) -> Result<Vec<RecallHit>> {
        query.validate()?;
        let agent_row = self.cached_agent(tenant, agent).await?;
        // Both retrievers go as deep, within what a full-text search may return.
        let depth = (query.top_k * CANDIDATES_PER_HIT).clamp(MIN_CANDIDATES, MAX_SEARCH_LIMIT);
        let weights = &self.recall_weights;
        let sub_questions = match weights.sub_questions {
            true => self.sub_questions(&agent_row, &query.query).await,
            false => Vec::new(),
        };

        let vector_search = async {
            if query.mode == RecallMode::Keyword {
                return Ok(Vec::new());
            }
            let mut kinds = Vec::new();
            if query.include_messages {
                kinds.push(MemoryKind::Message);
            }
            if query.include_summaries || weights.session_keys {
                kinds.push(MemoryKind::Summary);
            }
            if query.include_facts {
                kinds.push(MemoryKind::Fact);
            }
            let mut search = MemoryVectorQuery {
                agent_id: agent,
                user_id: query.user_id.clone(),
                vector: vector.get(self).await?,
                top_k: depth,
                kinds,
                from: query.from,
                to: query.to,
            };
            // The query's own hits first, then each sub-question's.
            let mut lists = vec![self.store.search_memory(tenant, &search).await?];
            for sub_question in &sub_questions {
                search.vector = self.embed_query(sub_question).await?;
                lists.push(self.store.search_memory(tenant, &search).await?);
            }
            Ok::<_, crate::error::Error>(lists)
        };
        let keyword_search = async {
            let terms = topic_terms(&query.query);
            if query.mode == RecallMode::Vector || terms.is_empty() {
                return Ok(KeywordHits::default());
            }
            let search = MessageSearchQuery {
                text: terms.join(" "),
                agent_id: Some(agent),
                user_id: Some(query.user_id.clone()),
                conversation_id: None,
                from: query.from,
                to: query.to,
                limit: depth,
            };
            let facts = FactSearchQuery {
                agent_id: agent,
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
                    match weights.names_searched && query.include_messages {
                        true => self.search_names(tenant, &query.query, &search).await,
                        false => Ok(Vec::new()),
                    }
                }
            )?;
            if query.include_messages {
                further.extend(
                    self.search_sub_questions(tenant, &sub_questions, &search)
                        .await?,
                );
            }
            // The search again with the words its best hits share: after the
            // first, while the query's vector is still being searched.
            let fed_back = match weights.feedback {
                true => self.search_fed_back(tenant, &search, &messages).await?,
                false => Vec::new(),
            };
            Ok::<_, crate::error::Error>(KeywordHits {
                messages,
                facts,
                further,
                fed_back,
            })
        };
        let (vector_hits, keyword_hits) = tokio::try_join!(vector_search, keyword_search)?;

        let Scored {
            lists,
            mut evidence,
            mut read,
        } = scored_lists(
            vector_hits,
            keyword_hits,
            query,
            depth,
            self.recall_weights.vector,
            |episode| Some(episode) != skip_episode,
        );
        let fused = self.recall_weights.fusion.fuse(&lists);
        let positions = self
            .store
            .message_positions(tenant, &messages_among(&fused))
            .await?;
        let positions = within_range(positions, query, &mut evidence);
        let mut ranked = rank_in_context(&fused, &positions, weights);
        if weights.session_keys && !query.include_summaries {
            // Searched as keys to their episodes only.
            ranked.retain(|(memory, _)| !matches!(memory, Memory::Summary(_)));
        }
        if let Some(half_life) = query.recency_half_life_days {
            weigh_recency(&mut ranked, &evidence, half_life);
        }
        self.put_the_named_first(tenant, &mut ranked, query, &mut read)
            .await?;
        self.put_what_held_first(tenant, &mut ranked, query).await?;
        if let Some(category) = &query.fact_category {
            self.keep_facts_of(tenant, category, &mut ranked).await?;
        }
        ranked.truncate(query.top_k as usize);
        self.read_hits(tenant, ranked, evidence, query.neighbours, read)
            .await
    }

    /// The turns that mention each person, place or thing `question` names
    /// ([`things_named`]), a search for each; a name that is a speaker of
    /// what it finds is left out (every turn a transcript labels with it
    /// would match, and the named speaker's turns are put first anyway).
    async fn search_names(
        &self,
        tenant: TenantId,
        question: &str,
        search: &MessageSearchQuery,
    ) -> Result<Vec<Vec<MessageHit>>> {
        let mut lists = Vec::new();
        for name in things_named(question) {
            let by_name = MessageSearchQuery {
                text: name.clone(),
                ..search.clone()
            };
            let hits = self.store.search_messages(tenant, &by_name).await?;
            let user = search.user_id.as_deref().unwrap_or_default();
            let a_speaker = hits.iter().any(|hit| {
                speaker_of(&hit.message, user).is_some_and(|s| s.eq_ignore_ascii_case(&name))
            });
            if !a_speaker && !hits.is_empty() {
                lists.push(hits);
            }
        }
        Ok(lists)
    }

    /// The simpler questions the agent's summary model splits `question`
    /// into ([`read_sub_questions`]); none when it cannot answer (no key,
    /// the provider down, no questions in its answer), and the recall goes
    /// on with the question alone. With `redact_pii`, the question leaves
    /// redacted, as a turn's message does.
    async fn sub_questions(&self, agent: &Agent, question: &str) -> Vec<String> {
        let question = match agent.memory.redact_pii {
            true => egress_for(question, agent.memory.phone_region()),
            false => Cow::Borrowed(question),
        };
        let request = ChatRequest {
            messages: vec![
                ChatMessage::new(Role::System, SUB_QUESTION_INSTRUCTIONS),
                ChatMessage::new(Role::User, &*question),
            ],
            tools: Vec::new(),
        };
        let reply = match self.chat.for_agent(agent, ChatPurpose::SubQuestions) {
            Ok(model) => model.chat(&request, None).await,
            Err(error) => Err(error),
        };
        match reply {
            Ok(reply) => read_sub_questions(&question, &reply.text),
            Err(error) => {
                tracing::warn!(agent_id = %agent.id, %error, "no sub-questions; recall by the question alone");
                Vec::new()
            }
        }
    }

    /// The turns that mention each sub-question's topic words, a search for
    /// each.
    async fn search_sub_questions(
        &self,
        tenant: TenantId,
        sub_questions: &[String],
        search: &MessageSearchQuery,
    ) -> Result<Vec<Vec<MessageHit>>> {
        let mut lists = Vec::new();
        for sub_question in sub_questions {
            let terms = topic_terms(sub_question);
            if terms.is_empty() {
                continue;
            }
            let by_words = MessageSearchQuery {
                text: terms.join(" "),
                ..search.clone()
            };
            lists.push(self.store.search_messages(tenant, &by_words).await?);
        }
        Ok(lists)
    }

    /// `search` again with the words its best hits share added
    /// ([`feedback_terms`]); nothing when they share none.
    async fn search_fed_back(
        &self,
        tenant: TenantId,
        search: &MessageSearchQuery,
        best: &[MessageHit],
    ) -> Result<Vec<MessageHit>> {
        let texts: Vec<String> = best
            .iter()
            .take(FEEDBACK_HITS)
            .filter_map(|hit| hit.message.content.as_ref().map(|c| c.text()))
            .collect();
        let added = feedback_terms(&search.text, texts.iter().map(String::as_str));
        if added.is_empty() {
            return Ok(Vec::new());
        }
        let expanded = MessageSearchQuery {
            text: format!("{} {}", search.text, added.join(" ")),
            ..search.clone()
        };
        Ok(self.store.search_messages(tenant, &expanded).await?)
    }

    /// Reads the messages among `memories` that `read` lacks into it.
    async fn read_messages(
        &self,
        tenant: TenantId,
        memories: &[(Memory, f64)],
        read: &mut HashMap<MessageId, Message>,
    ) -> Result<()> {
        let unread: Vec<MessageId> = messages_among(memories)
            .into_iter()
            .filter(|id| !read.contains_key(id))
            .collect();
        if !unread.is_empty() {
            let windows = self.store.message_windows(tenant, &unread, 0).await?;
            read.extend(windows.into_iter().map(|w| (w.message.id, w.message)));
        }
        Ok(())
    }

    /// When the query names one of the people whose turns lead the ranking
    /// (see [`octopus_core::speakers`]), moves that person's turns ahead of
    /// everyone else's; when it names a day or a month (see
    /// [`octopus_core::dates_named`]), moves the turns said then ahead of the
    /// others on each side. Each side keeps its order, and scores are
    /// lowered to match it. Summaries and facts keep their places. The
    /// messages it reads join `read`.
    async fn put_the_named_first(
        &self,
        tenant: TenantId,
        ranked: &mut [(Memory, f64)],
        query: &RecallQuery,
        read: &mut HashMap<MessageId, Message>,
    ) -> Result<()> {
        let weights = &self.recall_weights;
        let dates = match weights.date_first {
            true => dates_named(&query.query),
            false => Vec::new(),
        };
        if !weights.speaker_first && dates.is_empty() {
            return Ok(());
        }
        let head = ranked
            .len()
            .min((query.top_k * SPEAKER_HEAD_PER_HIT) as usize);
        self.read_messages(tenant, &ranked[..head], read).await?;
        let messages = &*read;
        let message = |memory: &Memory| match memory {
            Memory::Message(id) => messages.get(id),
            Memory::Summary(_) | Memory::Fact(..) => None,
        };
        let speaker = |memory: &Memory| message(memory).and_then(|m| speaker_of(m, &query.user_id));
        let named = match weights.speaker_first {
            true => the_one_named(
                &query.query,
                ranked[..head]
                    .iter()
                    .filter_map(|(m, _)| speaker(m))
                    .collect::<BTreeSet<_>>(),
            ),
            false => None,
        };
        if named.is_none() && dates.is_empty() {
            return Ok(());
        }
        let by_someone_else = |memory: &Memory| {
            named.is_some_and(|named| speaker(memory).is_some_and(|s| s != named))
        };
        let said_another_time = |memory: &Memory| {
            !dates.is_empty()
                && message(memory).is_some_and(|m| {
                    let day = m.timestamp.date_naive();
                    !dates.iter().any(|span| span.holds(day))
                })
        };
        ranked[..head]
            .sort_by_key(|(memory, _)| (by_someone_else(memory), said_another_time(memory)));
        for i in 1..ranked.len() {
            ranked[i].1 = ranked[i].1.min(ranked[i - 1].1);
        }
        Ok(())
    }

    /// When facts lead the ranking, puts those that held at the time the
    /// query asks about ([`TimeAsked`]), and the turns they were learned
    /// from, ahead of the facts that did not and the turns that stated
    /// those; within the places those take, the rest keeping theirs. A turn
    /// is judged by the best-ranked of the leading facts learned from it:
    /// "I live in Lyon with my cat" is about Lyon to "where does she live?"
    /// and about the cat to "does she have pets?".
    async fn put_what_held_first(
        &self,
        tenant: TenantId,
        ranked: &mut [(Memory, f64)],
        query: &RecallQuery,
    ) -> Result<()> {
        let head = ranked
            .len()
            .min((query.top_k * SPEAKER_HEAD_PER_HIT) as usize);
        let ranked = &mut ranked[..head];
        let fact_ids = facts_among(ranked);
        if fact_ids.is_empty() {
            return Ok(());
        }
        // In the order of `fact_ids`: best-ranked first.
        let facts = self.store.get_facts(tenant, &fact_ids).await?;
        let asked = TimeAsked::of(&query.query, query.from, query.to);
        let mut fact_held = HashMap::new();
        let mut turn_held: HashMap<MessageId, bool> = HashMap::new();
        for fact in &facts {
            let held = asked.holds(fact);
            fact_held.insert(fact.id, held);
            for id in &fact.message_ids {
                turn_held.entry(*id).or_insert(held);
            }
        }
        put_what_held_first(ranked, |memory| match memory {
            Memory::Fact(id, _) => fact_held.get(id).copied(),
            Memory::Message(id) => turn_held.get(id).copied(),
            Memory::Summary(_) => None,
        });
        Ok(())
    }

    /// Leaves out the facts not filed under `category`.
    async fn keep_facts_of(
        &self,
        tenant: TenantId,
        category: &str,
        ranked: &mut Vec<(Memory, f64)>,
    ) -> Result<()> {
        let ids = facts_among(ranked);
        let filed: std::collections::HashSet<FactId> = self
            .store
            .get_facts(tenant, &ids)
            .await?
            .into_iter()
            .filter(|fact| fact.category.as_deref() == Some(category))
            .map(|fact| fact.id)
            .collect();
        ranked.retain(|(memory, _)| match memory {
            Memory::Fact(id, _) => filed.contains(id),
            _ => true,
        });
        Ok(())
    }

    /// Reads the text of the ranked memories: messages with their neighbours
    /// (without neighbours, those in `read` are not read again), summaries
    /// from their episodes. A memory deleted meanwhile is left out.
    async fn read_hits(
        &self,
        tenant: TenantId,
        ranked: Vec<(Memory, f64)>,
        mut evidence: HashMap<Memory, Evidence>,
        neighbours: u32,
        mut read: HashMap<MessageId, Message>,
    ) -> Result<Vec<RecallHit>> {
        let mut windows: HashMap<MessageId, MessageWindow> = HashMap::new();
        let mut unread = Vec::new();
        for id in messages_among(&ranked) {
            match read.remove(&id) {
                Some(message) if neighbours == 0 => {
                    windows.insert(id, MessageWindow::alone(message));
                }
                _ => unread.push(id),
            }
        }
        if !unread.is_empty() {
            let found = self
                .store
                .message_windows(tenant, &unread, neighbours)
                .await?;
            windows.extend(found.into_iter().map(|w| (w.message.id, w)));
        }
        let fact_ids = facts_among(&ranked);
        let mut facts: HashMap<FactId, Fact> = self
            .store
            .get_facts(tenant, &fact_ids)
            .await?
            .into_iter()
            .map(|fact| (fact.id, fact))
            .collect();
        let mut hits = Vec::with_capacity(ranked.len());
        for (memory, score) in ranked {
            let found = evidence.remove(&memory).unwrap_or_default();
            let hit = match memory {
                Memory::Message(id) => windows.remove(&id).map(|window| RecallHit {
                    kind: MemoryKind::Message,
                    score,
                    vector_score: found.vector_score,
                    keyword_score: found.keyword_score,
                    episode_id: Some(window.message.episode_id),
                    conversation_id: Some(window.message.conversation_id),
                    at: window.message.timestamp,
                    window: Some(window),
                    summary: None,
                    fact: None,
                }),
                Memory::Fact(id, _) => match facts.remove(&id) {
                    Some(fact) => {
                        // A fact a person added has no episode to hold it back.
                        let from = match fact.episode_id {
                            Some(episode) => match self.live_episode(tenant, episode).await? {
                                Some(episode) => Some((episode.id, episode.conversation_id)),
                                None => continue,
                            },
                            None => None,
                        };
                        Some(RecallHit {
                            kind: MemoryKind::Fact,
                            score,
                            vector_score: found.vector_score,
                            keyword_score: found.keyword_score,
                            episode_id: from.map(|(episode, _)| episode),
                            conversation_id: from.map(|(_, conversation)| conversation),
                            at: fact.valid_from,
                            window: None,
                            summary: None,
                            fact: Some(fact),
                        })
                    }
                    None => None,
                },
                Memory::Summary(id) => self.live_episode(tenant, id).await?.and_then(|episode| {
                    Some(RecallHit {
                        kind: MemoryKind::Summary,
                        score,
                        vector_score: found.vector_score,
                        keyword_score: None,
                        episode_id: Some(episode.id),
                        conversation_id: Some(episode.conversation_id),
                        at: episode.last_message_at,
                        window: None,
                        summary: Some(episode.summary?),
                        fact: None,
                    })
                }),
            };
            hits.extend(hit);
        }
        Ok(hits)
    }

    async fn live_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Option<Episode>> {
        match self.store.get_episode(tenant, id).await {
            Ok(episode) => Ok(Some(episode)),
            Err(octopus_core::Error::NotFound { .. }) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }
}

/// What the searches by words found: messages, and facts; with the
/// methods that search again, the messages found by each name the query
/// holds and by the words its best hits add.
#[derive(Default)]
struct KeywordHits {
    messages: Vec<MessageHit>,
    facts: Vec<FactHit>,
    /// A search for each name the question holds, and each sub-question.
    further: Vec<Vec<MessageHit>>,
    fed_back: Vec<MessageHit>,
}

/// The retrievers' lists, what they said of each memory, and the messages
/// the searches read whole (by id, so that they are not read again).
struct Scored {
    lists: Vec<ScoredList<Memory>>,
    evidence: HashMap<Memory, Evidence>,
    read: HashMap<MessageId, Message>,
}

/// The two retrievers' hits as lists for fusion, with what each
/// said of every memory; hits below `min_score` or in a left-out episode
/// dropped. The first of `vector_hits` is the query's own search; each
/// further one (a sub-question's) weighs half.
fn scored_lists(
    vector_hits: Vec<Vec<MemoryVectorHit>>,
    keyword_hits: KeywordHits,
    query: &RecallQuery,
    depth: u32,
    vector_weight: f64,
    elsewhere: impl Fn(EpisodeId) -> bool,
) -> Scored {
    let mut read = HashMap::new();
    let mut evidence: HashMap<Memory, Evidence> = HashMap::new();
    let scored = |items: Vec<(Memory, f64)>, weight: f64, complete: bool| ScoredList {
        items,
        weight,
        floor: complete.then_some(0.0),
    };
    let mut vector_lists = Vec::new();
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
        let weight = match nth {
            0 => vector_weight,
            _ => vector_weight / 2.0,
        };
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
    // Each further search by words weighs half what the query's own does:
    // it found what a part of the question, or a guess at it, names.
    let further = keyword_hits
        .further
        .into_iter()
        .chain(Some(keyword_hits.fed_back).filter(|hits| !hits.is_empty()));
    for hits in further {
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
    }
    Scored {
        lists,
        evidence,
        read,
    }
}

fn facts_among(memories: &[(Memory, f64)]) -> Vec<FactId> {
    memories
        .iter()
        .filter_map(|(memory, _)| match memory {
            Memory::Fact(id, _) => Some(*id),
            Memory::Message(_) | Memory::Summary(_) => None,
        })
        .collect()
}

fn messages_among(memories: &[(Memory, f64)]) -> Vec<MessageId> {
    memories
        .iter()
        .filter_map(|(memory, _)| match memory {
            Memory::Message(id) => Some(*id),
            Memory::Summary(_) | Memory::Fact(..) => None,
        })
        .collect()
}

/// The positions, with neighbours outside the query's time range forgotten,
/// and the time of each neighbour that stays noted for recency weighting.
fn within_range(
    mut positions: Vec<MessagePosition>,
    query: &RecallQuery,
    evidence: &mut HashMap<Memory, Evidence>,
) -> Vec<MessagePosition> {
    let in_range = |at: Timestamp| {
        query.from.is_none_or(|from| at >= from) && query.to.is_none_or(|to| at < to)
    };
    for position in &mut positions {
        for adjacent in [&mut position.before, &mut position.after] {
            match adjacent {
                Some(next_to) if in_range(next_to.at) => {
                    evidence
                        .entry(Memory::Message(next_to.id))
                        .or_default()
                        .at
                        .get_or_insert(next_to.at);
                }
                _ => *adjacent = None,
            }
        }
    }
    positions
}

/// Multiplies each score by `0.5^(age / half-life)`, age counted back from the
/// newest candidate, and re-sorts.
fn weigh_recency(
    ranked: &mut [(Memory, f64)],
    evidence: &HashMap<Memory, Evidence>,
    half_life_days: f64,
) {
    let at = |memory: &Memory| evidence.get(memory).and_then(|e| e.at);
    let Some(newest) = ranked.iter().filter_map(|(m, _)| at(m)).max() else {
        return;
    };
    for (memory, score) in ranked.iter_mut() {
        if let Some(when) = at(memory) {
            let age_days = (newest - when).num_seconds() as f64 / 86_400.0;
            *score *= 0.5f64.powf(age_days / half_life_days);
        }
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recency_halves_a_score_per_half_life() {
        let newest = chrono::Utc::now();
        let old = Memory::Message(MessageId::new());
        let new = Memory::Message(MessageId::new());
        let mut evidence = HashMap::new();
        evidence.insert(
            old,
            Evidence {
                at: Some(newest - chrono::Duration::days(10)),
                ..Default::default()
            },
        );
        evidence.insert(
            new,
            Evidence {
                at: Some(newest),
                ..Default::default()
            },
        );
        let mut ranked = vec![(old, 1.0), (new, 0.6)];
        weigh_recency(&mut ranked, &evidence, 10.0);
        assert_eq!(ranked[0], (new, 0.6));
        assert!((ranked[1].1 - 0.5).abs() < 1e-9, "{:?}", ranked[1]);
    }
}
