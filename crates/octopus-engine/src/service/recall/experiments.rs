//! Retrieval methods that lost under cross-validation on the LoCoMo dev
//! split (the recall benchmark page has each fold), kept behind their
//! `[recall]` switches, all off by default, so that the quality
//! benchmarks can measure them again on other conversations:
//!
//! - `names_searched`: each person, place or thing the question names is
//!   searched for by words on its own;
//! - `feedback`: the words the best keyword hits share are searched for
//!   again with the query's;
//! - `meaning_feedback`: the same from the best hits by meaning;
//! - `sub_questions`: the agent's summary model splits the question into
//!   simpler ones, each searched by meaning and by words;
//! - `session_keys`: summaries are searched as keys to their episodes, and
//!   leave the hits unless they were asked for ([`Octopus::summaries_as_keys`]).
//!
//! Each answers nothing when its switch is off.

use std::borrow::Cow;

use octopus_core::agent::Agent;
use octopus_core::chat::{ChatPurpose, ChatRequest};
use octopus_core::feedback::{FEEDBACK_HITS, feedback_terms};
use octopus_core::memory_vectors::MemoryVectorHit;
use octopus_core::message::Role;
use octopus_core::pii::egress_for;
use octopus_core::recall::MemoryKind;
use octopus_core::recall::RecallQuery;
use octopus_core::recall_explanation::{RecallSearch, SearchList};
use octopus_core::recall_ranking::Memory;
use octopus_core::search::{MessageHit, MessageSearchQuery, topic_terms};
use octopus_core::speakers::speaker_of;
use octopus_core::sub_questions::{SUB_QUESTION_INSTRUCTIONS, read_sub_questions};
use octopus_core::things_named::things_named;
use octopus_core::working_memory::ChatMessage;
use octopus_core::{MessageId, TenantId};

use crate::error::Result;
use crate::octopus::Octopus;

use super::retrieve::users_turns;

impl Octopus {
    /// The turns that mention each person, place or thing `question` names
    /// ([`things_named`]), a search for each; a name that is a speaker of
    /// what it finds is left out (every turn a transcript labels with it
    /// would match, and the named speaker's turns are put first anyway).
    pub(super) async fn search_names(
        &self,
        tenant: TenantId,
        question: &str,
        search: &MessageSearchQuery,
    ) -> Result<Vec<(SearchList, Vec<MessageHit>)>> {
        if !self.recall_weights.names_searched {
            return Ok(Vec::new());
        }
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
                lists.push((SearchList::looking_for(RecallSearch::Name, name), hits));
            }
        }
        Ok(lists)
    }

    /// The simpler questions the agent's summary model splits `question`
    /// into ([`read_sub_questions`]); none when it cannot answer (no key,
    /// the provider down, no questions in its answer), and the recall goes
    /// on with the question alone. When the agent's `pii` policy redacts outgoing text, the question leaves
    /// redacted, as a turn's message does.
    pub(super) async fn sub_questions(&self, agent: &Agent, question: &str) -> Vec<String> {
        if !self.recall_weights.sub_questions {
            return Vec::new();
        }
        let question = match agent.memory.pii.redacts_outgoing() {
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
    pub(super) async fn search_sub_questions(
        &self,
        tenant: TenantId,
        sub_questions: &[String],
        search: &MessageSearchQuery,
    ) -> Result<Vec<(SearchList, Vec<MessageHit>)>> {
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
            let hits = self.store.search_messages(tenant, &by_words).await?;
            lists.push((
                SearchList::looking_for(RecallSearch::SubQuestionKeyword, sub_question.clone()),
                hits,
            ));
        }
        Ok(lists)
    }

    /// `search` again with the words its best hits share added
    /// ([`feedback_terms`]); nothing when they share none or it finds
    /// nothing.
    pub(super) async fn search_fed_back(
        &self,
        tenant: TenantId,
        search: &MessageSearchQuery,
        best: &[MessageHit],
    ) -> Result<Vec<(SearchList, Vec<MessageHit>)>> {
        if !self.recall_weights.feedback {
            return Ok(Vec::new());
        }
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
        let hits = self.store.search_messages(tenant, &expanded).await?;
        Ok(match hits.is_empty() {
            true => Vec::new(),
            false => vec![(
                SearchList::looking_for(RecallSearch::KeywordFeedback, expanded.text),
                hits,
            )],
        })
    }

    /// The query's topic words searched again with those its best turns
    /// by meaning share ([`feedback_terms`]): the user's own words for what
    /// the question asks. Nothing when the switch is off, when fewer than
    /// two turns were found by meaning, or when they share no word.
    pub(super) async fn search_meaning_fed_back(
        &self,
        tenant: TenantId,
        agent: &Agent,
        query: &RecallQuery,
        depth: u32,
        by_meaning: &[Vec<MemoryVectorHit>],
    ) -> Result<Vec<(SearchList, Vec<MessageHit>)>> {
        if !self.recall_weights.meaning_feedback {
            return Ok(Vec::new());
        }
        let terms = topic_terms(&query.query).join(" ");
        let best: Vec<MessageId> = by_meaning
            .first()
            .into_iter()
            .flatten()
            .filter(|hit| hit.kind == MemoryKind::Message)
            .filter_map(|hit| hit.message_id)
            .take(FEEDBACK_HITS)
            .collect();
        if terms.is_empty() || best.len() < 2 {
            return Ok(Vec::new());
        }
        let windows = self.store.message_windows(tenant, &best, 0).await?;
        let texts: Vec<String> = windows
            .iter()
            .filter_map(|window| window.message.content.as_ref().map(|c| c.text()))
            .collect();
        let added = feedback_terms(&terms, texts.iter().map(String::as_str));
        if added.is_empty() {
            return Ok(Vec::new());
        }
        let search = users_turns(agent, query, format!("{terms} {}", added.join(" ")), depth);
        let hits = self.store.search_messages(tenant, &search).await?;
        Ok(match hits.is_empty() {
            true => Vec::new(),
            false => vec![(
                SearchList::looking_for(RecallSearch::MeaningFeedback, search.text),
                hits,
            )],
        })
    }

    /// Summaries searched only as keys to their episodes leave the hits.
    pub(super) fn summaries_as_keys(&self, query: &RecallQuery, ranked: &mut Vec<(Memory, f64)>) {
        if self.recall_weights.session_keys && !query.include_summaries {
            ranked.retain(|(memory, _)| !matches!(memory, Memory::Summary(_)));
        }
    }
}
