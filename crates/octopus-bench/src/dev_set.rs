//! The quality benches' common ground: a chat of one user with an agent
//! (LoCoMo's two-person dialogues and BEAM's user–assistant projects both
//! read into it), imported through the engine, each question recalled and
//! scored by evidence recall at 5, 10 and 20, and, for a question about a
//! value that changed, whether the message stating the new value ranks above
//! the one it replaced.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use octopus_core::conversation::{ConversationImport, ImportedSession};
use octopus_core::message::{NewMessage, Role};
use octopus_core::recall::{RecallHit, RecallMode, RecallQuery};
use octopus_core::{AgentId, EpisodeId, TenantId};
use octopus_engine::Octopus;

/// The depths recall is measured at.
pub const DEPTHS: [usize; 3] = [5, 10, 20];
/// Index of recall@10 in [`DEPTHS`]: what methods are chosen by.
pub const AT_10: usize = 1;

/// Which published set a chat comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    Locomo,
    Beam,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Locomo => "LoCoMo",
            Source::Beam => "BEAM",
        }
    }
}

/// One user's history with one agent, and the questions asked of it.
pub struct Chat {
    /// Unique within its source: LoCoMo's file stem, BEAM's `100K/1`.
    pub id: String,
    pub source: Source,
    /// What the chat's results are grouped under beside its source (BEAM's
    /// size: `100K`, `500K`).
    pub group: String,
    pub user: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
}

pub struct Session {
    pub at: DateTime<Utc>,
    pub lines: Vec<Line>,
}

/// One message as stored, with the id the questions' evidence names.
pub struct Line {
    pub source_id: String,
    pub role: Role,
    pub text: String,
}

pub struct Question {
    /// The kind of question (LoCoMo's category, BEAM's ability).
    pub ability: &'static str,
    pub question: String,
    /// Ids of the messages holding the answer; empty for a question without.
    pub evidence: Vec<String>,
    /// For a question about a value that changed: the messages stating the
    /// old value and those stating the new one.
    pub update: Option<Update>,
}

pub struct Update {
    pub original: Vec<String>,
    pub updated: Vec<String>,
}

/// One question's outcome.
#[derive(Clone, Copy, Debug)]
pub struct Scored {
    /// Index of its chat in the run.
    pub chat: usize,
    pub ability: &'static str,
    /// Evidence recall at each of [`DEPTHS`].
    pub recall: [f64; 3],
    /// For an update question: whether a message stating the new value was
    /// recalled (in the top 20) above every message stating the old one.
    pub updated_first: Option<bool>,
}

/// Where one chat went in the engine, and how to name its messages.
pub struct Imported {
    pub agent: AgentId,
    /// Source ids by (episode, ordinal).
    pub ids: HashMap<(EpisodeId, u32), String>,
}

impl Imported {
    /// The source ids of the message hits in rank order, without repeats.
    pub fn ranked_ids(&self, hits: &[RecallHit]) -> Vec<String> {
        let mut seen = HashSet::new();
        hits.iter()
            .filter_map(|h| h.window.as_ref())
            .filter_map(|w| self.ids.get(&(w.message.episode_id, w.message.ordinal)))
            .filter(|id| seen.insert((*id).clone()))
            .cloned()
            .collect()
    }
}

/// Imports `chat` as its user's history with a new agent of its own: each
/// session an episode at its time, a minute between messages.
pub async fn import(octopus: &Octopus, tenant: TenantId, chat: &Chat) -> anyhow::Result<Imported> {
    let name: String = format!("{}-{}", chat.source.name(), chat.id)
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    let agent = crate::setup::agent(octopus, tenant, &name).await?;
    let sessions = chat
        .sessions
        .iter()
        .map(|session| ImportedSession {
            messages: session
                .lines
                .iter()
                .enumerate()
                .map(|(i, line)| NewMessage {
                    timestamp: Some(session.at + chrono::Duration::minutes(i as i64)),
                    ..NewMessage::text(line.role, line.text.clone())
                })
                .collect(),
        })
        .collect();
    let report = octopus
        .import_conversation(
            tenant,
            ConversationImport {
                agent_id: agent.id,
                user_id: chat.user.clone(),
                title: Some(format!("{} {}", chat.source.name(), chat.id)),
                metadata: Default::default(),
                sessions,
            },
        )
        .await?;
    let mut ids = HashMap::new();
    for (episode, session) in report.episodes.iter().zip(&chat.sessions) {
        for (ordinal, line) in session.lines.iter().enumerate() {
            ids.insert((*episode, ordinal as u32), line.source_id.clone());
        }
    }
    Ok(Imported {
        agent: agent.id,
        ids,
    })
}

/// Imports `chats` into a new tenant named `tenant` and embeds them, or,
/// when `keep` holds a record of an import of these chats (and perhaps
/// others: a store opened in the same folder by an earlier run), reads
/// theirs back: importing and embedding BEAM's larger chats takes most of
/// an hour, choosing among methods seconds.
pub async fn import_all(
    octopus: &Octopus,
    tenant: &str,
    chats: &[Chat],
    keep: Option<&std::path::Path>,
) -> anyhow::Result<(TenantId, Vec<Imported>)> {
    let names: Vec<String> = chats
        .iter()
        .map(|chat| format!("{} {}", chat.source.name(), chat.id))
        .collect();
    let record_path = keep.map(|dir| dir.join("imported.json"));
    if let Some(path) = record_path.as_deref().filter(|path| path.is_file()) {
        let record: Record = serde_json::from_slice(&std::fs::read(path)?)?;
        let mut kept: HashMap<String, Imported> = record
            .chats
            .into_iter()
            .zip(record.imported)
            .map(|(name, (agent, ids))| {
                let ids = ids
                    .into_iter()
                    .map(|(episode, ordinal, source)| ((episode, ordinal), source))
                    .collect();
                (name, Imported { agent, ids })
            })
            .collect();
        let imported = names
            .iter()
            .map(|name| kept.remove(name))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} was kept for other chats: start with an empty folder",
                    path.display()
                )
            })?;
        return Ok((record.tenant, imported));
    }
    let tenant = octopus.create_tenant(tenant).await?.id;
    let mut imported = Vec::new();
    for chat in chats {
        imported.push(import(octopus, tenant, chat).await?);
    }
    octopus.run_memory_jobs().await?;
    if let Some(path) = record_path {
        let record = Record {
            chats: names,
            tenant,
            imported: imported
                .iter()
                .map(|one| {
                    let ids = one
                        .ids
                        .iter()
                        .map(|((episode, ordinal), source)| (*episode, *ordinal, source.clone()))
                        .collect();
                    (one.agent, ids)
                })
                .collect(),
        };
        std::fs::write(path, serde_json::to_vec(&record)?)?;
    }
    Ok((tenant, imported))
}

/// What [`import_all`] keeps of an import beside its store.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    chats: Vec<String>,
    tenant: TenantId,
    #[allow(clippy::type_complexity)]
    imported: Vec<(AgentId, Vec<(EpisodeId, u32, String)>)>,
}

/// Scores one question against the source ids recalled for it, best first;
/// `None` for a question without evidence.
pub fn score(chat: usize, question: &Question, ranked: &[String]) -> Option<Scored> {
    if question.evidence.is_empty() {
        return None;
    }
    let recall = DEPTHS.map(|k| {
        let top = &ranked[..k.min(ranked.len())];
        let found = question
            .evidence
            .iter()
            .filter(|id| top.contains(id))
            .count();
        found as f64 / question.evidence.len() as f64
    });
    Some(Scored {
        chat,
        ability: question.ability,
        recall,
        updated_first: question.update.as_ref().map(|u| updated_first(u, ranked)),
    })
}

/// Whether a message stating the new value is recalled above every message
/// stating the old one (an old one not recalled at all is below it).
pub fn updated_first(update: &Update, ranked: &[String]) -> bool {
    let rank = |ids: &[String]| ranked.iter().position(|r| ids.contains(r));
    match (rank(&update.updated), rank(&update.original)) {
        (Some(new), Some(old)) => new < old,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Every question with evidence of every chat, recalled in `mode`, top 20,
/// over messages only; each one's outcome and its recall's latency in
/// milliseconds (the question's embedding included unless cached).
pub async fn recall_all(
    octopus: &Octopus,
    tenant: TenantId,
    chats: &[Chat],
    imported: &[Imported],
    mode: RecallMode,
) -> anyhow::Result<(Vec<Scored>, Vec<f64>)> {
    let mut scored = Vec::new();
    let mut latencies = Vec::new();
    for (c, (chat, scope)) in chats.iter().zip(imported).enumerate() {
        for question in chat.questions.iter().filter(|q| !q.evidence.is_empty()) {
            let mut query = RecallQuery::new(chat.user.clone(), question.question.clone());
            query.mode = mode;
            query.top_k = 20;
            query.include_summaries = false;
            query.include_facts = false;
            let started = std::time::Instant::now();
            let hits = octopus.recall(tenant, scope.agent, &query).await?;
            latencies.push(started.elapsed().as_secs_f64() * 1e3);
            scored.extend(score(c, question, &scope.ranked_ids(&hits)));
        }
    }
    Ok((scored, latencies))
}

/// One question's assembled context: the share of its evidence there, and
/// its size.
#[derive(Clone, Copy, Debug)]
pub struct InContext {
    pub ability: &'static str,
    pub evidence: f64,
    pub total_tokens: u32,
}

/// How much of a message must be in the context for it to count as there:
/// its first characters (a long message may be shortened to fit).
const SHOWN_PREFIX_CHARS: usize = 120;

/// Whether `text` (a stored message) shows in `context`.
pub fn shown_in(text: &str, context: &str) -> bool {
    let text = text.trim();
    let end = text
        .char_indices()
        .nth(SHOWN_PREFIX_CHARS)
        .map_or(text.len(), |(at, _)| at);
    context.contains(&text[..end])
}

/// `question`'s evidence in a context whose messages read `shown`, taking
/// `total_tokens`; `None` when none of its evidence is a known message. A
/// message is there when its opening is (see [`shown_in`]), or a fact
/// learned from it (`learned`: by source id, the facts' texts).
pub fn in_context(
    question: &Question,
    (texts, learned): (&HashMap<&str, &str>, &HashMap<String, Vec<String>>),
    shown: &str,
    total_tokens: u32,
) -> Option<InContext> {
    let known: Vec<&str> = question
        .evidence
        .iter()
        .map(String::as_str)
        .filter(|id| texts.contains_key(id))
        .collect();
    if known.is_empty() {
        return None;
    }
    let found = known
        .iter()
        .filter(|id| {
            shown_in(texts[*id], shown)
                || learned
                    .get(**id)
                    .is_some_and(|facts| facts.iter().any(|fact| shown.contains(fact.as_str())))
        })
        .count();
    Some(InContext {
        ability: question.ability,
        evidence: found as f64 / known.len() as f64,
        total_tokens,
    })
}

/// The texts of the chat user's current facts by the source id of each
/// message they were learned from.
async fn learned_from(
    octopus: &Octopus,
    tenant: TenantId,
    chat: &Chat,
    scope: &Imported,
) -> anyhow::Result<HashMap<String, Vec<String>>> {
    let filter = octopus_core::fact::FactFilter {
        agent_id: scope.agent,
        user_id: chat.user.clone(),
        include_replaced: false,
        categories: Vec::new(),
        key: None,
        page: octopus_core::page::Page {
            limit: octopus_core::page::Page::MAX_LIMIT,
            offset: 0,
        },
    };
    let mut ordinals = HashMap::new();
    let mut learned: HashMap<String, Vec<String>> = HashMap::new();
    for fact in octopus.list_facts(tenant, &filter).await? {
        let Some(episode) = fact.episode_id else {
            continue;
        };
        if let std::collections::hash_map::Entry::Vacant(entry) = ordinals.entry(episode) {
            let read = octopus.get_episode(tenant, episode).await?;
            entry.insert(
                read.messages
                    .into_iter()
                    .map(|m| (m.id, m.ordinal))
                    .collect::<HashMap<_, _>>(),
            );
        }
        for message in &fact.message_ids {
            let source = ordinals[&episode]
                .get(message)
                .and_then(|ordinal| scope.ids.get(&(episode, *ordinal)));
            if let Some(source) = source {
                learned
                    .entry(source.clone())
                    .or_default()
                    .push(fact.text.clone());
            }
        }
    }
    Ok(learned)
}

/// Every question with evidence, each asked as the next message of a fresh
/// conversation of the chat's user with its agent (default memory
/// settings): the share of its evidence messages in the context.
pub async fn contexts(
    octopus: &Octopus,
    tenant: TenantId,
    chats: &[Chat],
    imported: &[Imported],
) -> anyhow::Result<Vec<InContext>> {
    let mut scores = Vec::new();
    for (chat, scope) in chats.iter().zip(imported) {
        let texts: HashMap<&str, &str> = chat
            .sessions
            .iter()
            .flat_map(|s| &s.lines)
            .map(|l| (l.source_id.as_str(), l.text.as_str()))
            .collect();
        let spec = serde_json::from_value(serde_json::json!({
            "agent_id": scope.agent, "user_id": chat.user,
        }))?;
        let fresh = octopus.create_conversation(tenant, spec).await?;
        let learned = learned_from(octopus, tenant, chat, scope).await?;
        for question in chat.questions.iter().filter(|q| !q.evidence.is_empty()) {
            let context = octopus
                .build_context(tenant, fresh.id, &question.question)
                .await?;
            let shown: Vec<&str> = context
                .messages
                .iter()
                .map(|m| m.content.as_str())
                .collect();
            scores.extend(in_context(
                question,
                (&texts, &learned),
                &shown.join("\n"),
                context.trace.total_tokens,
            ));
        }
    }
    Ok(scores)
}

/// The mean of `values`, 0 when there are none.
pub fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The abilities of `scored`, in the order first seen.
pub fn abilities<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

/// The recall table: per ability and overall, questions, R@5, R@10, R@20,
/// and for update questions the share with the new value first.
pub fn print_recall(mode: &str, scored: &[Scored]) {
    let row = |name: &str, of: Vec<&Scored>| {
        let updates: Vec<bool> = of.iter().filter_map(|s| s.updated_first).collect();
        let first = match updates.is_empty() {
            true => "".to_owned(),
            false => format!(
                "{} of {}",
                updates.iter().filter(|u| **u).count(),
                updates.len()
            ),
        };
        println!(
            "| {mode} | {name} | {} | {:.3} | {:.3} | {:.3} | {first} |",
            of.len(),
            mean(of.iter().map(|s| s.recall[0])),
            mean(of.iter().map(|s| s.recall[1])),
            mean(of.iter().map(|s| s.recall[2])),
        );
    };
    row("all", scored.iter().collect());
    let mut names = abilities(scored.iter().map(|s| s.ability));
    names.sort();
    for name in names {
        row(name, scored.iter().filter(|s| s.ability == name).collect());
    }
}

pub const RECALL_HEADER: &str = "| mode | ability | questions | R@5 | R@10 | R@20 | new value first |\n|---|---|---|---|---|---|---|";

/// The context table: per ability and overall, evidence in context and the
/// mean tokens of the whole context.
pub fn print_contexts(how: &str, scores: &[InContext]) {
    println!(
        "\n### Evidence in context ({how})\n\n| ability | questions | evidence in context | mean tokens |\n|---|---|---|---|"
    );
    let row = |name: &str, of: Vec<&InContext>| {
        println!(
            "| {name} | {} | {:.3} | {:.0} |",
            of.len(),
            mean(of.iter().map(|s| s.evidence)),
            mean(of.iter().map(|s| f64::from(s.total_tokens))),
        );
    };
    row("all", scores.iter().collect());
    let mut names = abilities(scores.iter().map(|s| s.ability));
    names.sort();
    for name in names {
        row(name, scores.iter().filter(|s| s.ability == name).collect());
    }
}

/// A LoCoMo conversation as a chat: its first speaker the user, each turn
/// stored as `Speaker: words` (as the LoCoMo bench stores it by default);
/// the questions of categories 1–4.
pub fn from_locomo(conversation: &crate::locomo::Conversation) -> Chat {
    let sessions = conversation
        .sessions
        .iter()
        .map(|session| Session {
            at: session.at,
            lines: session
                .turns
                .iter()
                .map(|turn| {
                    let said = match &turn.image_caption {
                        Some(caption) => format!("{} [shared an image: {caption}]", turn.text),
                        None => turn.text.clone(),
                    };
                    Line {
                        source_id: turn.dia_id.clone(),
                        role: if turn.speaker == conversation.speaker_a {
                            Role::User
                        } else {
                            Role::Assistant
                        },
                        text: format!("{}: {said}", turn.speaker),
                    }
                })
                .collect(),
        })
        .collect();
    let questions = conversation
        .questions
        .iter()
        .filter(|q| (1..=4).contains(&q.category))
        .map(|q| Question {
            ability: crate::locomo::category_name(q.category),
            question: q.question.clone(),
            evidence: q.evidence.clone(),
            update: None,
        })
        .collect();
    Chat {
        id: conversation.id.clone(),
        source: Source::Locomo,
        group: "LoCoMo".to_owned(),
        user: conversation.speaker_a.clone(),
        sessions,
        questions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn recall_counts_evidence_in_each_depth_and_the_update_order_is_judged() {
        let question = Question {
            ability: "knowledge_update",
            question: "How fast is the API now?".into(),
            evidence: ids(&["86", "114"]),
            update: Some(Update {
                original: ids(&["86"]),
                updated: ids(&["114"]),
            }),
        };
        let mut ranked: Vec<String> = (0..30).map(|i| format!("x{i}")).collect();
        ranked[2] = "86".into();
        ranked[7] = "114".into();
        let scored = score(3, &question, &ranked).unwrap();
        assert_eq!(scored.recall, [0.5, 1.0, 1.0]);
        assert_eq!(
            scored.updated_first,
            Some(false),
            "the old value ranks above"
        );
        ranked.swap(2, 7);
        assert_eq!(
            score(3, &question, &ranked).unwrap().updated_first,
            Some(true)
        );
        // The new value alone recalled is first; neither recalled is not.
        let update = question.update.as_ref().unwrap();
        assert!(updated_first(update, &ids(&["114"])));
        assert!(!updated_first(update, &ids(&["86"])));
        assert!(!updated_first(update, &ids(&["1"])));
        let without = Question {
            evidence: Vec::new(),
            update: None,
            ..question
        };
        assert!(score(0, &without, &ranked).is_none());
    }

    #[test]
    fn a_message_shows_in_a_context_by_its_opening_words() {
        let long = format!(
            "Always format code with syntax highlighting. {}",
            "x".repeat(500)
        );
        let context = format!("user: {}…", &long[..200]);
        assert!(shown_in(&long, &context));
        assert!(!shown_in("I prefer minimal dependencies", &context));
    }
}
