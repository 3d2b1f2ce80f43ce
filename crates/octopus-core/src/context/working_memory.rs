//! Working memory: the context of one turn (system prompt, procedures, facts,
//! knowledge, past conversations, history, the message), assembled in that
//! order and pruned to the agent's token budget. Pure: the retrieval
//! happens before, in the engine; nothing here is stored.
//!
//! Order: system prompt (left out when empty); procedures; the user's
//! current facts; `[Retrieved Knowledge]`; episodic snippets; the current
//! episode's history; the user message. Over budget, the oldest history
//! goes first, then the lowest-scored fact, knowledge chunk or episodic
//! snippet, one at a time, and the latest exchange (history from the user's previous message on) last of
//! all. History goes in whole units: an assistant's tool calls go with their
//! results. The system prompt and the user message are never dropped: when
//! they alone exceed the budget the assembly fails. The trace says why each
//! item went ([`PruneReason`]).
//!
//! Counting follows OpenAI's chat format: each message costs its content's
//! tokens plus [`MESSAGE_OVERHEAD`] (one more with a `name`), and every reply
//! is primed with [`REPLY_PRIMING`] tokens.

use serde::{Deserialize, Serialize};

use crate::message::Role;
use crate::tokens::TokenCounter;
use crate::{Error, Result};

/// Tokens of a chat message beyond its content (role and separators).
pub const MESSAGE_OVERHEAD: u32 = 3;
/// Tokens every chat completion's prompt carries for the reply's start.
pub const REPLY_PRIMING: u32 = 3;

/// A message in the chat-completions shape, ready to send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An assistant message's calls of tools (within the turn that made them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<crate::message::ToolCall>,
    /// A `tool` message's call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A retrieved item offered to the context: a knowledge chunk or an episodic
/// snippet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Retrieved {
    /// What the trace calls it: a chunk id, a message id, an episode id.
    pub id: String,
    /// Where it came from, shown to the model: a document source and heading,
    /// or a date and speaker.
    pub label: String,
    pub text: String,
    /// The retrieval score, on one scale for every block (the engine gives
    /// each block's best 1); the lowest is pruned first.
    pub score: f64,
}

/// Everything a turn's context is made of.
#[derive(Clone, Debug, Default)]
pub struct ContextParts {
    pub system_prompt: String,
    /// Matched procedures: `label` is the name, `text` the numbered steps.
    pub procedures: Vec<Retrieved>,
    /// The user's profile: how long and how often they have talked with the
    /// agent, and their newest past conversations a line each.
    pub profile: Vec<Retrieved>,
    /// Most tokens the profile block may take: past it, its lowest-scored
    /// lines are pruned first.
    pub profile_max_tokens: Option<u32>,
    /// The user's current facts: `label` says since when each holds.
    pub facts: Vec<Retrieved>,
    pub knowledge: Vec<Retrieved>,
    pub episodic: Vec<Retrieved>,
    /// Most tokens the episodic block may take, whatever the budget leaves:
    /// past it, its lowest-scored snippets are pruned first.
    pub episodic_max_tokens: Option<u32>,
    /// The current episode's messages, oldest first.
    pub history: Vec<ChatMessage>,
    pub user_message: String,
}

/// The blocks of a context, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    SystemPrompt,
    Procedures,
    Profile,
    Facts,
    Knowledge,
    Episodic,
    History,
    UserMessage,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BlockTokens {
    pub block: Block,
    /// Tokens of the block's messages, overhead included.
    pub tokens: u32,
    /// Items kept: messages of history, chunks, snippets.
    pub items: usize,
}

/// Why an item was left out of a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PruneReason {
    /// Its block was over its own limit: the procedures' share of the
    /// budget, or `episodic_max_tokens`; the lowest-scored went first.
    BlockLimit,
    /// The context was over budget: the oldest history goes first.
    OldestHistory,
    /// Over budget with no older history left: the lowest-scored fact,
    /// knowledge chunk or past-conversation snippet.
    LowestScore,
    /// Over budget with nothing else left to drop: the latest exchange (the
    /// user's previous message and what answered it), oldest first.
    LatestExchange,
}

/// Something left out to fit the budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Pruned {
    pub block: Block,
    /// The item's id; for history, its position among the history messages.
    pub id: String,
    pub score: Option<f64>,
    /// What it cost before it was dropped.
    pub tokens: u32,
    pub reason: PruneReason,
}

/// How a context came to be what it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContextTrace {
    pub budget: u32,
    /// Tokens of the whole prompt, reply priming included.
    pub total_tokens: u32,
    pub blocks: Vec<BlockTokens>,
    /// The profile's lines offered, kept or not.
    #[serde(default)]
    pub profile: Vec<Retrieved>,
    /// Every fact, knowledge chunk and episodic snippet offered, kept or not.
    #[serde(default)]
    pub facts: Vec<Retrieved>,
    pub knowledge: Vec<Retrieved>,
    pub episodic: Vec<Retrieved>,
    /// In the order they were dropped.
    pub pruned: Vec<Pruned>,
    /// The procedures that matched the message, and why (kept or pruned).
    #[serde(default)]
    pub procedures: Vec<crate::procedure::ProcedureMatch>,
    /// Set when the vector backend could not be reached (a Qdrant server
    /// down, say): knowledge and memories were then found by their words
    /// alone. Says which service, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_search_unavailable: Option<String>,
}

#[derive(Clone, Debug)]
pub struct AssembledContext {
    pub messages: Vec<ChatMessage>,
    pub trace: ContextTrace,
}

/// A message's tokens: its content, its tool calls' names and arguments
/// (as the provider sends them, JSON) and the chat format's overhead.
fn message_tokens(message: &ChatMessage, counter: &dyn TokenCounter) -> u32 {
    let calls: u32 = message
        .tool_calls
        .iter()
        .map(|call| {
            MESSAGE_OVERHEAD
                + counter.count(&call.name)
                + counter.count(&call.arguments.to_string())
        })
        .sum();
    MESSAGE_OVERHEAD + u32::from(message.name.is_some()) + counter.count(&message.content) + calls
}

/// The history's units, as index ranges in order: a message, or an
/// assistant's tool calls with the results that follow them. Pruning takes
/// whole units, so what remains is a history a chat API accepts.
fn history_units(history: &[ChatMessage]) -> Vec<std::ops::Range<usize>> {
    let mut units: Vec<std::ops::Range<usize>> = Vec::new();
    for (index, message) in history.iter().enumerate() {
        match units.last_mut() {
            Some(unit) if message.role == Role::Tool => unit.end = index + 1,
            _ => units.push(index..index + 1),
        }
    }
    units
}

fn render_block(header: &str, items: &[Retrieved]) -> Option<ChatMessage> {
    if items.is_empty() {
        return None;
    }
    let mut text = String::from(header);
    for (i, item) in items.iter().enumerate() {
        text.push_str(&format!("\n[{}] ({}) {}", i + 1, item.label, item.text));
    }
    Some(ChatMessage::new(Role::System, text))
}

pub const PROCEDURES_HEADER: &str = "[Procedures]";

/// Procedures may take at most this share of the budget; past it, the
/// lowest-scored are pruned first.
pub const PROCEDURES_BUDGET_SHARE: f64 = 0.25;

fn render_procedures(procedures: &[Retrieved]) -> Option<ChatMessage> {
    (!procedures.is_empty()).then(|| {
        let mut text =
            format!("{PROCEDURES_HEADER}\nFollow the steps of a procedure that applies.");
        for procedure in procedures {
            text.push_str(&format!("\n\n{}:\n{}", procedure.label, procedure.text));
        }
        ChatMessage::new(Role::System, text)
    })
}

pub const PROFILE_HEADER: &str = "[About the User]";
pub const FACTS_HEADER: &str = "[Known Facts About the User]";
pub const KNOWLEDGE_HEADER: &str = "[Retrieved Knowledge]";
pub const EPISODIC_HEADER: &str = "[Relevant Past Conversations]";

/// A block's message and its exact cost, recounted when its items change.
struct CountedBlock {
    message: Option<ChatMessage>,
    tokens: u32,
}

impl CountedBlock {
    fn new(message: Option<ChatMessage>, counter: &dyn TokenCounter) -> Self {
        let tokens = message.as_ref().map_or(0, |m| message_tokens(m, counter));
        Self { message, tokens }
    }
}

/// A block of retrieved items (facts, knowledge, episodic snippets) as it
/// is pruned.
struct RetrievedBlock {
    block: Block,
    header: &'static str,
    items: Vec<Retrieved>,
    counted: CountedBlock,
}

impl RetrievedBlock {
    fn new(
        block: Block,
        header: &'static str,
        items: Vec<Retrieved>,
        counter: &dyn TokenCounter,
    ) -> Self {
        let counted = CountedBlock::new(render_block(header, &items), counter);
        Self {
            block,
            header,
            items,
            counted,
        }
    }

    /// Its lowest-scored item: where it is, and its score.
    fn lowest(&self) -> Option<(usize, f64)> {
        self.items
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.score.total_cmp(&b.1.score))
            .map(|(i, item)| (i, item.score))
    }

    /// Drops item `index` for the budget; what the trace says of it.
    fn remove(&mut self, index: usize, counter: &dyn TokenCounter) -> Pruned {
        let before = self.counted.tokens;
        let item = self.items.remove(index);
        self.counted = CountedBlock::new(render_block(self.header, &self.items), counter);
        Pruned {
            block: self.block,
            id: item.id,
            score: Some(item.score),
            tokens: before - self.counted.tokens,
            reason: PruneReason::LowestScore,
        }
    }

    fn tokens(&self) -> BlockTokens {
        BlockTokens {
            block: self.block,
            tokens: self.counted.tokens,
            items: self.items.len(),
        }
    }
}

/// The block `render` makes of `items` once its lowest-scored items are
/// pruned (noted in `pruned`, lowest first) until it takes at most `limit`
/// tokens. How many must go is found by halving, so a block of n items is
/// counted about log2(n) times, not once per item pruned; a pruned item's
/// `tokens` is what its text costs.
fn keep_within(
    items: &mut Vec<Retrieved>,
    limit: u32,
    block: Block,
    render: &dyn Fn(&[Retrieved]) -> Option<ChatMessage>,
    counter: &dyn TokenCounter,
    pruned: &mut Vec<Pruned>,
) -> CountedBlock {
    let counted = CountedBlock::new(render(items), counter);
    if counted.tokens <= limit {
        return counted;
    }
    // Lowest score first, ties in their order (a stable sort).
    let mut lowest_first: Vec<usize> = (0..items.len()).collect();
    lowest_first.sort_by(|&a, &b| items[a].score.total_cmp(&items[b].score));
    let without = |dropped: usize| -> Vec<Retrieved> {
        let gone: std::collections::HashSet<usize> =
            lowest_first[..dropped].iter().copied().collect();
        (0..items.len())
            .filter(|i| !gone.contains(i))
            .map(|i| items[i].clone())
            .collect()
    };
    let fits =
        |dropped: usize| CountedBlock::new(render(&without(dropped)), counter).tokens <= limit;
    // Dropping none is over the limit and dropping all is within it.
    let (mut over, mut within) = (0, items.len());
    while within - over > 1 {
        let middle = (over + within) / 2;
        match fits(middle) {
            true => within = middle,
            false => over = middle,
        }
    }
    for &i in &lowest_first[..within] {
        let item = &items[i];
        pruned.push(Pruned {
            block,
            id: item.id.clone(),
            score: Some(item.score),
            tokens: counter.count(&item.text),
            reason: PruneReason::BlockLimit,
        });
    }
    *items = without(within);
    CountedBlock::new(render(items), counter)
}

/// Assembles the context and prunes it to `budget` tokens.
pub fn assemble(
    parts: ContextParts,
    budget: u32,
    counter: &dyn TokenCounter,
) -> Result<AssembledContext> {
    // An empty system prompt is not sent: providers would get an empty
    // system message (OpenAI) or an empty `system` field (Anthropic).
    let system = (!parts.system_prompt.trim().is_empty())
        .then(|| ChatMessage::new(Role::System, parts.system_prompt));
    let system_tokens = system.as_ref().map_or(0, |m| message_tokens(m, counter));
    let user = ChatMessage::new(Role::User, parts.user_message);
    let fixed = REPLY_PRIMING + system_tokens + message_tokens(&user, counter);
    if fixed > budget {
        return Err(Error::invalid(
            "max_working_memory_tokens",
            format!(
                "the system prompt and the message alone take {fixed} tokens, over the budget of {budget}"
            ),
        ));
    }
    // Procedures first, within their share; then snippets of past
    // conversations within theirs. The lowest-scored go first.
    let mut pruned = Vec::new();
    let share = (f64::from(budget) * PROCEDURES_BUDGET_SHARE) as u32;
    let mut procedure_items = parts.procedures.clone();
    let procedures = keep_within(
        &mut procedure_items,
        share,
        Block::Procedures,
        &|items| render_procedures(items),
        counter,
        &mut pruned,
    );
    let trace_profile = parts.profile.clone();
    let trace_facts = parts.facts.clone();
    let trace_knowledge = parts.knowledge.clone();
    let trace_episodic = parts.episodic.clone();
    // The blocks of retrieved items, in the order a tie in score prunes them.
    let mut retrieved = [
        RetrievedBlock::new(Block::Profile, PROFILE_HEADER, parts.profile, counter),
        RetrievedBlock::new(Block::Knowledge, KNOWLEDGE_HEADER, parts.knowledge, counter),
        RetrievedBlock::new(Block::Episodic, EPISODIC_HEADER, parts.episodic, counter),
        RetrievedBlock::new(Block::Facts, FACTS_HEADER, parts.facts, counter),
    ];
    {
        let profile = &mut retrieved[0];
        profile.counted = keep_within(
            &mut profile.items,
            parts.profile_max_tokens.unwrap_or(u32::MAX),
            Block::Profile,
            &|items| render_block(PROFILE_HEADER, items),
            counter,
            &mut pruned,
        );
    }
    {
        let episodic = &mut retrieved[2];
        episodic.counted = keep_within(
            &mut episodic.items,
            parts.episodic_max_tokens.unwrap_or(u32::MAX),
            Block::Episodic,
            &|items| render_block(EPISODIC_HEADER, items),
            counter,
            &mut pruned,
        );
    }
    let history_costs: Vec<u32> = parts
        .history
        .iter()
        .map(|m| message_tokens(m, counter))
        .collect();
    let mut history_total: u32 = history_costs.iter().sum();
    let units = history_units(&parts.history);
    // The latest exchange: the units from the last user message on.
    let latest = units
        .iter()
        .rposition(|unit| parts.history[unit.start].role == Role::User)
        .unwrap_or(units.len());
    let mut units_dropped = 0;
    // Prunes the oldest unit left, noting each of its messages; returns its tokens.
    let drop_unit = |units_dropped: &mut usize, reason: PruneReason, pruned: &mut Vec<Pruned>| {
        let unit = units[*units_dropped].clone();
        *units_dropped += 1;
        for index in unit.clone() {
            pruned.push(Pruned {
                block: Block::History,
                id: index.to_string(),
                score: None,
                tokens: history_costs[index],
                reason,
            });
        }
        history_costs[unit].iter().sum::<u32>()
    };

    let total = |history_total: u32, retrieved: &[RetrievedBlock]| {
        fixed
            + procedures.tokens
            + retrieved.iter().map(|b| b.counted.tokens).sum::<u32>()
            + history_total
    };
    while total(history_total, &retrieved) > budget {
        if units_dropped < latest {
            history_total -= drop_unit(&mut units_dropped, PruneReason::OldestHistory, &mut pruned);
            continue;
        }
        // The lowest score of any block; the earlier block on a tie.
        let lowest = retrieved
            .iter()
            .enumerate()
            .filter_map(|(b, block)| block.lowest().map(|(i, score)| (b, i, score)))
            .min_by(|x, y| x.2.total_cmp(&y.2).then(x.0.cmp(&y.0)));
        let Some((b, index, _)) = lowest else {
            if units_dropped < units.len() {
                history_total -=
                    drop_unit(&mut units_dropped, PruneReason::LatestExchange, &mut pruned);
                continue;
            }
            break; // only procedures left, within their share
        };
        pruned.push(retrieved[b].remove(index, counter));
    }
    let first_kept = units
        .get(units_dropped)
        .map_or(parts.history.len(), |u| u.start);

    let history = &parts.history[first_kept..];
    let mut messages: Vec<ChatMessage> = system.iter().cloned().collect();
    let [profile, knowledge, episodic, facts] = retrieved;
    messages.extend(procedures.message.clone());
    messages.extend(profile.counted.message.clone());
    messages.extend(facts.counted.message.clone());
    messages.extend(knowledge.counted.message.clone());
    messages.extend(episodic.counted.message.clone());
    messages.extend(history.iter().cloned());
    messages.push(user.clone());
    let blocks = vec![
        BlockTokens {
            block: Block::SystemPrompt,
            tokens: system_tokens,
            items: usize::from(system.is_some()),
        },
        BlockTokens {
            block: Block::Procedures,
            tokens: procedures.tokens,
            items: procedure_items.len(),
        },
        profile.tokens(),
        facts.tokens(),
        knowledge.tokens(),
        episodic.tokens(),
        BlockTokens {
            block: Block::History,
            tokens: history_total,
            items: history.len(),
        },
        BlockTokens {
            block: Block::UserMessage,
            tokens: message_tokens(&user, counter),
            items: 1,
        },
    ];
    Ok(AssembledContext {
        trace: ContextTrace {
            budget,
            total_tokens: count_prompt(&messages, counter),
            blocks,
            profile: trace_profile,
            facts: trace_facts,
            knowledge: trace_knowledge,
            episodic: trace_episodic,
            pruned,
            procedures: Vec::new(),
            vector_search_unavailable: None,
        },
        messages,
    })
}

/// Tokens of a whole prompt: every message, and the reply priming.
pub fn count_prompt(messages: &[ChatMessage], counter: &dyn TokenCounter) -> u32 {
    REPLY_PRIMING
        + messages
            .iter()
            .map(|m| message_tokens(m, counter))
            .sum::<u32>()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tokens::ApproximateTokenCounter;

    fn item(id: &str, text: &str, score: f64) -> Retrieved {
        Retrieved {
            id: id.into(),
            label: "faq.md".into(),
            text: text.into(),
            score,
        }
    }

    fn parts(
        history: usize,
        knowledge: &[(f64, usize)],
        episodic: &[(f64, usize)],
    ) -> ContextParts {
        ContextParts {
            system_prompt: "You are a helpful support agent.".into(),
            procedures: vec![],
            profile: vec![],
            profile_max_tokens: None,
            facts: vec![],
            knowledge: knowledge
                .iter()
                .enumerate()
                .map(|(i, (score, len))| item(&format!("k{i}"), &"fact ".repeat(*len), *score))
                .collect(),
            episodic: episodic
                .iter()
                .enumerate()
                .map(|(i, (score, len))| item(&format!("e{i}"), &"memory ".repeat(*len), *score))
                .collect(),
            episodic_max_tokens: None,
            history: (0..history)
                .map(|i| {
                    ChatMessage::new(
                        if i % 2 == 0 {
                            Role::User
                        } else {
                            Role::Assistant
                        },
                        format!("turn {i} ").repeat(5),
                    )
                })
                .collect(),
            user_message: "Where is my order?".into(),
        }
    }

    #[test]
    fn blocks_come_in_the_designed_order() {
        let context = assemble(
            parts(2, &[(0.9, 3)], &[(0.5, 3)]),
            10_000,
            &ApproximateTokenCounter,
        )
        .unwrap();
        let m = &context.messages;
        assert_eq!(m.len(), 6);
        assert_eq!(m[0].content, "You are a helpful support agent.");
        assert!(m[1].content.starts_with(KNOWLEDGE_HEADER));
        assert!(m[1].content.contains("[1] (faq.md) fact"));
        assert!(m[2].content.starts_with(EPISODIC_HEADER));
        assert!(m[3].content.starts_with("turn 0"));
        assert_eq!(m[5], ChatMessage::new(Role::User, "Where is my order?"));
        assert!(context.trace.pruned.is_empty());
        assert_eq!(
            context.trace.total_tokens,
            count_prompt(m, &ApproximateTokenCounter)
        );
    }

    #[test]
    fn procedures_keep_to_their_share_and_the_lowest_scored_go_first() {
        let mut input = parts(0, &[], &[]);
        input.procedures = (0..4)
            .map(|i| item(&format!("p{i}"), &"step ".repeat(100), f64::from(i)))
            .collect();
        let context = assemble(input, 1000, &ApproximateTokenCounter).unwrap();
        let block = |b| {
            context
                .trace
                .blocks
                .iter()
                .find(|t| t.block == b)
                .unwrap()
                .clone()
        };
        let procedures = block(Block::Procedures);
        assert!(procedures.tokens <= 250, "{procedures:?}");
        assert!(procedures.items >= 1);
        let pruned: Vec<&str> = context.trace.pruned.iter().map(|p| p.id.as_str()).collect();
        let expected: Vec<String> = (0..4 - procedures.items).map(|i| format!("p{i}")).collect();
        assert_eq!(pruned, expected, "lowest score first");
        assert!(context.messages[1].content.starts_with(PROCEDURES_HEADER));
        assert!(context.messages[1].content.contains("faq.md:\nstep"));
    }

    #[test]
    fn snippets_keep_to_their_own_limit_whatever_the_budget_leaves() {
        let mut input = parts(
            0,
            &[(0.9, 50)],
            &[(0.9, 40), (0.2, 40), (0.6, 40), (0.4, 40)],
        );
        input.episodic_max_tokens = Some(100);
        let context = assemble(input, 100_000, &ApproximateTokenCounter).unwrap();
        let episodic = context
            .trace
            .blocks
            .iter()
            .find(|b| b.block == Block::Episodic)
            .unwrap();
        assert!(episodic.tokens <= 100, "{episodic:?}");
        assert!(episodic.items >= 1, "{episodic:?}");
        let pruned: Vec<&str> = context.trace.pruned.iter().map(|p| p.id.as_str()).collect();
        let expected = ["e1", "e3", "e2", "e0"][..4 - episodic.items].to_vec();
        assert_eq!(pruned, expected, "lowest score first, knowledge untouched");
        assert_eq!(context.trace.episodic.len(), 4, "the trace lists them all");
    }

    #[test]
    fn the_profile_comes_before_the_facts_within_its_own_limit() {
        let mut input = parts(0, &[(0.9, 10)], &[]);
        input.facts = vec![item("f0", "Dana lives in Paris", 1.0)];
        input.profile = vec![
            item("activity", "12 conversations since 2024-01-05", 0.6),
            item("e1", &"they planned the move ".repeat(4), 0.55),
            item("e0", &"they talked about tea ".repeat(4), 0.4),
        ];
        let all = assemble(input.clone(), 100_000, &ApproximateTokenCounter).unwrap();
        let sent: Vec<&str> = all.messages.iter().map(|m| m.content.as_str()).collect();
        assert!(
            sent[1].starts_with(PROFILE_HEADER) && sent[1].contains("12 conversations"),
            "{sent:?}"
        );
        assert!(sent[2].starts_with(FACTS_HEADER), "{sent:?}");
        let tokens = |trace: &ContextTrace| {
            trace
                .blocks
                .iter()
                .find(|b| b.block == Block::Profile)
                .unwrap()
                .tokens
        };
        let whole = tokens(&all.trace);
        assert_eq!(all.trace.profile.len(), 3);

        // Its own limit drops its lowest-scored lines first, whatever the budget.
        input.profile_max_tokens = Some(whole - 1);
        let limited = assemble(input.clone(), 100_000, &ApproximateTokenCounter).unwrap();
        let pruned: Vec<(&str, PruneReason)> = limited
            .trace
            .pruned
            .iter()
            .map(|p| (p.id.as_str(), p.reason))
            .collect();
        assert_eq!(pruned, [("e0", PruneReason::BlockLimit)]);
        assert!(tokens(&limited.trace) < whole);
    }

    #[test]
    fn facts_come_after_procedures_and_go_by_score_with_retrieved_items() {
        let mut input = parts(0, &[(0.9, 40), (0.3, 40)], &[]);
        input.facts = vec![
            Retrieved {
                label: "since 2024-03-02".into(),
                ..item("f0", "Dana lives in Paris", 1.0)
            },
            Retrieved {
                label: "since 2023-01-10".into(),
                ..item("f1", &"Dana likes tea ".repeat(8), 0.5)
            },
        ];
        input.procedures = vec![item("p0", "1. Ask", 1.0)];
        let all = assemble(input.clone(), 100_000, &ApproximateTokenCounter).unwrap();
        let sent: Vec<&str> = all.messages.iter().map(|m| m.content.as_str()).collect();
        assert!(sent[1].starts_with(PROCEDURES_HEADER), "{sent:?}");
        assert!(sent[2].starts_with(FACTS_HEADER), "{sent:?}");
        assert!(sent[2].contains("[1] (since 2024-03-02) Dana lives in Paris"));
        assert!(sent[3].starts_with(KNOWLEDGE_HEADER));
        let facts = all
            .trace
            .blocks
            .iter()
            .find(|b| b.block == Block::Facts)
            .unwrap();
        assert_eq!(facts.items, 2);
        assert!(facts.tokens > 0);
        assert_eq!(all.trace.facts.len(), 2);

        // Short of room: the knowledge chunk scored 0.3 goes, then the
        // fact scored 0.5, before the chunk scored 0.9 or the newest fact.
        let budget = all.trace.total_tokens - 60;
        let tight = assemble(input, budget, &ApproximateTokenCounter).unwrap();
        let pruned: Vec<&str> = tight.trace.pruned.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(pruned, ["k1", "f1"], "lowest score first, across blocks");
        assert!(tight.trace.total_tokens <= budget);
    }

    #[test]
    fn the_latest_exchange_outlasts_retrieved_items() {
        // A small budget: two long knowledge chunks, two snippets, and a
        // history whose last exchange is what the message follows up on.
        let input = parts(4, &[(0.9, 40), (0.8, 40)], &[(0.7, 40), (0.6, 40)]);
        let context = assemble(input.clone(), 300, &ApproximateTokenCounter).unwrap();
        let sent: Vec<&str> = context
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        assert!(
            sent.contains(&input.history[2].content.as_str()),
            "the previous user message is kept: {sent:?}"
        );
        assert!(
            sent.contains(&input.history[3].content.as_str()),
            "and its answer"
        );
        let reasons: Vec<(Block, PruneReason)> = context
            .trace
            .pruned
            .iter()
            .map(|p| (p.block, p.reason))
            .collect();
        assert_eq!(
            reasons[..2],
            [
                (Block::History, PruneReason::OldestHistory),
                (Block::History, PruneReason::OldestHistory)
            ]
        );
        assert!(
            reasons[2..]
                .iter()
                .all(|(_, reason)| *reason == PruneReason::LowestScore),
            "{reasons:?}"
        );
    }

    #[test]
    fn a_tool_round_is_pruned_whole_and_its_calls_are_counted() {
        let call = crate::message::ToolCall {
            id: "call_1".into(),
            name: "get_order_status".into(),
            arguments: serde_json::json!({"order": "ORD-8821", "detail": "full ".repeat(50)}),
        };
        let mut input = parts(0, &[], &[]);
        input.history = vec![
            ChatMessage::new(Role::User, "Where is order 8821?"),
            ChatMessage {
                tool_calls: vec![call],
                ..ChatMessage::new(Role::Assistant, "")
            },
            ChatMessage {
                tool_call_id: Some("call_1".into()),
                ..ChatMessage::new(Role::Tool, "shipped with FedEx")
            },
            ChatMessage::new(Role::Assistant, "It shipped with FedEx."),
            ChatMessage::new(Role::User, "And the other one?"),
            ChatMessage::new(Role::Assistant, "Which one?"),
        ];
        let all = assemble(input.clone(), 100_000, &ApproximateTokenCounter).unwrap();
        let calls_cost = message_tokens(&input.history[1], &ApproximateTokenCounter);
        assert!(calls_cost > 50, "the arguments count: {calls_cost}");
        // Room for all but the first two messages: the round cannot stay
        // without its call, so it goes whole.
        let first_two: u32 = input.history[..2]
            .iter()
            .map(|m| message_tokens(m, &ApproximateTokenCounter))
            .sum();
        let context = assemble(
            input.clone(),
            all.trace.total_tokens - first_two,
            &ApproximateTokenCounter,
        )
        .unwrap();
        let pruned: Vec<&str> = context.trace.pruned.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(pruned, ["0", "1", "2"]);
        assert!(
            context.messages.iter().all(|m| m.role != Role::Tool),
            "no result without its call"
        );
    }

    #[test]
    fn an_empty_system_prompt_is_not_sent() {
        let mut input = parts(1, &[], &[]);
        input.system_prompt = "  ".into();
        let context = assemble(input, 10_000, &ApproximateTokenCounter).unwrap();
        assert_eq!(context.messages[0].role, Role::User);
        assert_eq!(context.trace.blocks[0].tokens, 0);
        assert_eq!(
            context.trace.total_tokens,
            count_prompt(&context.messages, &ApproximateTokenCounter)
        );
    }

    #[test]
    fn a_budget_below_the_fixed_parts_is_refused() {
        let error = assemble(parts(0, &[], &[]), 10, &ApproximateTokenCounter).unwrap_err();
        assert!(
            error.to_string().contains("max_working_memory_tokens"),
            "{error}"
        );
    }

    proptest! {
        #[test]
        fn context_fits_keeps_the_essentials_and_prunes_in_order(
            history in 0usize..30,
            knowledge in prop::collection::vec((0.0f64..1.0, 1usize..80), 0..8),
            episodic in prop::collection::vec((0.0f64..1.0, 1usize..80), 0..5),
            slack in 0u32..3000,
        ) {
            let counter = ApproximateTokenCounter;
            let input = parts(history, &knowledge, &episodic);
            let floor = assemble(ContextParts { knowledge: vec![], episodic: vec![], history: vec![], ..input.clone() }, u32::MAX, &counter)
                .unwrap().trace.total_tokens;
            let budget = floor + slack;
            let context = assemble(input.clone(), budget, &counter).unwrap();
            let trace = &context.trace;

            // Never over budget, counted exactly over what is sent.
            prop_assert_eq!(trace.total_tokens, count_prompt(&context.messages, &counter));
            prop_assert!(trace.total_tokens <= budget);
            // The system prompt first and the user message last, always.
            prop_assert_eq!(&context.messages[0].content, &input.system_prompt);
            prop_assert_eq!(&context.messages.last().unwrap().content, &input.user_message);

            // History goes first, oldest first, but for the latest exchange
            // (from the last user message on, the last one or two messages
            // here): no chunk or snippet is pruned while older history
            // remains, and the latest exchange goes only when no retrieved
            // item is left.
            let latest = match history {
                0 => 0,
                n => (n - 1) % 2 + 1,
            };
            let first_retrieved = trace.pruned.iter().position(|p| p.block != Block::History);
            let history_pruned = trace.pruned.iter().filter(|p| p.block == Block::History).count();
            if let Some(first) = first_retrieved {
                prop_assert_eq!(history_pruned.min(history - latest), history - latest, "older history went before any retrieval");
                prop_assert!(trace.pruned[first..].iter().filter(|p| p.block == Block::History).all(|p| p.reason == PruneReason::LatestExchange));
            }
            for p in &trace.pruned {
                let expected = match p.block {
                    Block::History if p.id.parse::<usize>().unwrap() < history - latest => PruneReason::OldestHistory,
                    Block::History => PruneReason::LatestExchange,
                    _ => PruneReason::LowestScore,
                };
                prop_assert_eq!(p.reason, expected, "{:?}", p);
            }
            if trace.pruned.iter().any(|p| p.reason == PruneReason::LatestExchange) {
                let kept_retrieved = trace.blocks.iter().filter(|b| matches!(b.block, Block::Knowledge | Block::Episodic)).map(|b| b.items).sum::<usize>();
                prop_assert_eq!(kept_retrieved, 0, "the latest exchange went last");
            }
            let ids: Vec<String> = trace.pruned.iter().filter(|p| p.block == Block::History).map(|p| p.id.clone()).collect();
            let expected: Vec<String> = (0..history_pruned).map(|i| i.to_string()).collect();
            prop_assert_eq!(ids, expected);
            // Retrieved items go lowest score first: every pruned item scores at
            // most every item kept.
            let kept = trace.blocks.iter().find(|b| b.block == Block::Knowledge).unwrap().items
                + trace.blocks.iter().find(|b| b.block == Block::Episodic).unwrap().items;
            prop_assert_eq!(kept + trace.pruned.len() - history_pruned, knowledge.len() + episodic.len());
            let pruned_scores: Vec<f64> = trace.pruned.iter().filter_map(|p| p.score).collect();
            let pruned_ids: Vec<&str> = trace.pruned.iter().filter(|p| p.score.is_some()).map(|p| p.id.as_str()).collect();
            let kept_scores: Vec<f64> = input.knowledge.iter().chain(&input.episodic)
                .filter(|i| !pruned_ids.contains(&i.id.as_str())).map(|i| i.score).collect();
            for pruned in &pruned_scores {
                for kept in &kept_scores {
                    prop_assert!(pruned <= kept, "pruned {} while keeping {}", pruned, kept);
                }
            }
            prop_assert!(pruned_scores.windows(2).all(|w| w[0] <= w[1]), "pruned lowest first");
            // Nothing is pruned that did not have to be.
            if trace.pruned.is_empty() {
                prop_assert_eq!(context.messages.len(), 2 + usize::from(!knowledge.is_empty()) + usize::from(!episodic.is_empty()) + history);
            }
        }
    }
}
