//! The tools: what each takes (its JSON schema, from the argument type
//! below), the engine operation it calls, and the text a model reads back,
//! ids included so that a later call can name what an earlier one found.

use std::fmt::Write as _;

use octopus_core::chunking::Format;
use octopus_core::fact::FactEdit;
use octopus_core::forget::ForgetUser;
use octopus_core::knowledge::{ChunkFilter, SearchMode};
use octopus_core::message::NewMessage;
use octopus_core::page::Page;
use octopus_core::procedure::ProcedureFilter;
use octopus_core::recall::{MemoryKind, RecallQuery};
use octopus_core::{Error as DomainError, FactId, TenantId};
use octopus_engine::{IngestDocument, KnowledgeQuery, Octopus};
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::McpOptions;
use crate::auth::TenantAuthor;
use crate::error::ApiError;
use crate::routes::knowledge::is_markdown;

/// Who said a remembered message.
#[derive(Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Speaker {
    #[default]
    User,
    Assistant,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    /// The agent: its name or id.
    agent: String,
    /// The user the conversation is with.
    user: String,
    /// What was said.
    content: String,
    /// Who said it: `user` (default) or `assistant`.
    #[serde(default)]
    role: Speaker,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// The agent: its name or id.
    agent: String,
    /// Whose past conversations to search.
    user: String,
    /// What to look for, in plain words.
    query: String,
    /// How many memories to return (1 to 100; default 10).
    top_k: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchKnowledgeArgs {
    /// The agent: its name or id.
    agent: String,
    /// What to look for, in plain words.
    query: String,
    /// How many passages to return; default the agent's setting.
    top_k: Option<u32>,
    /// Only passages of this document.
    source: Option<String>,
    /// Only passages of documents of this category.
    category: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetContextArgs {
    /// The agent: its name or id.
    agent: String,
    /// The user the conversation is with.
    user: String,
    /// The user's next message, which the context is assembled for.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListProceduresArgs {
    /// Only this agent's procedures (its name or id), with the shared ones.
    agent: Option<String>,
    /// Only procedures whose name or description contains this text.
    text: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddDocumentArgs {
    /// The agent: its name or id.
    agent: String,
    /// Names the document (a path, a URL); adding the same source again
    /// replaces it.
    source: String,
    /// The document's text; Markdown when the source ends in `.md`.
    text: String,
    /// e.g. "policy", "manual", "faq".
    category: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ForgetUserArgs {
    /// The user to forget.
    user: String,
    /// Forget only what the user said to this agent (name or id); every
    /// agent when absent.
    agent: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateMemoryArgs {
    /// The fact's id, as `recall` shows it.
    fact_id: String,
    /// The fact as it should read.
    text: String,
    /// Why it changed; kept in the fact's history.
    reason: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteMemoryArgs {
    /// The fact's id, as `recall` shows it.
    fact_id: String,
    /// Why; kept in the fact's history.
    reason: Option<String>,
}

/// The tools offered: every one; those that erase or rewrite memory
/// (`forget_user`, `update_memory`, `delete_memory`) only where the
/// operator allows it.
pub(super) fn list(options: McpOptions) -> Vec<Tool> {
    let read_only = || ToolAnnotations::new().read_only(true);
    let mut tools = vec![
        tool::<RememberArgs>(
            "remember",
            "Store a message in the user's current conversation with the agent (a new one is started when \
             there is none). Remember what the user tells you and what you answer, so that later \
             conversations can recall it.",
            ToolAnnotations::new().read_only(false).destructive(false),
        ),
        tool::<RecallArgs>(
            "recall",
            "Find what the user said in past conversations with the agent, by meaning and by words: \
             messages, episode summaries and key facts, best first, each with its date and ids.",
            read_only(),
        ),
        tool::<SearchKnowledgeArgs>(
            "search_knowledge",
            "Search the agent's documents by meaning and by words; returns the best passages with their \
             source and score.",
            read_only(),
        ),
        tool::<GetContextArgs>(
            "get_context",
            "Assemble the agent's working memory for the user's next message: system prompt, relevant \
             procedures, knowledge, past conversations and recent history, within the agent's token budget.",
            read_only(),
        ),
        tool::<ListProceduresArgs>(
            "list_procedures",
            "List the step-by-step procedures the agent follows, with their triggers and steps.",
            read_only(),
        ),
        tool::<AddDocumentArgs>(
            "add_document",
            "Add a document to the agent's knowledge (chunked and embedded for search); a document of \
             the same source is replaced.",
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(true),
        ),
    ];
    if options.allow_forget_user {
        tools.push(tool::<ForgetUserArgs>(
            "forget_user",
            "Erase everything about a user: conversations, messages, summaries, facts and vectors. \
             Cannot be undone.",
            ToolAnnotations::new().read_only(false).destructive(true),
        ));
        tools.push(tool::<UpdateMemoryArgs>(
            "update_memory",
            "Correct a fact remembered about a user (its id as recall shows it): the corrected words \
             replace it from now on, and the old version is kept in its history.",
            ToolAnnotations::new().read_only(false).destructive(false),
        ));
        tools.push(tool::<DeleteMemoryArgs>(
            "delete_memory",
            "Delete a fact remembered about a user (its id as recall shows it), every version of it, \
             from every store. Cannot be undone.",
            ToolAnnotations::new().read_only(false).destructive(true),
        ));
    }
    tools
}

fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    Tool::new(name, description, Map::new())
        .with_input_schema::<T>()
        .with_annotations(annotations)
}

/// Runs the tool `request` names for `caller`. A tool that fails (an
/// unknown agent, arguments that do not fit) answers with a result marked
/// `isError`, its text the API's code and message, so that the model reads
/// why and can try again; only a tool that does not exist is refused as a
/// protocol error.
pub(super) async fn call(
    octopus: &Octopus,
    caller: &TenantAuthor,
    options: McpOptions,
    request: CallToolRequestParams,
) -> Result<CallToolResult, ErrorData> {
    let tenant = caller.tenant;
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    let outcome = match request.name.as_ref() {
        "remember" => run(arguments, |args| remember(octopus, tenant, args)).await,
        "recall" => run(arguments, |args| recall(octopus, tenant, args)).await,
        "search_knowledge" => run(arguments, |args| search_knowledge(octopus, tenant, args)).await,
        "get_context" => run(arguments, |args| get_context(octopus, tenant, args)).await,
        "list_procedures" => run(arguments, |args| list_procedures(octopus, tenant, args)).await,
        "add_document" => run(arguments, |args| add_document(octopus, tenant, args)).await,
        "forget_user" if options.allow_forget_user => {
            run(arguments, |args| forget_user(octopus, tenant, args)).await
        }
        "update_memory" if options.allow_forget_user => {
            run(arguments, |args| update_memory(octopus, caller, args)).await
        }
        "delete_memory" if options.allow_forget_user => {
            run(arguments, |args| delete_memory(octopus, caller, args)).await
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("no tool named `{other}`"),
                Some(json!({"code": "tool_not_found"})),
            ));
        }
    };
    Ok(match outcome {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(error) => failed(error),
    })
}

/// Reads the arguments as `A` and runs `tool` with them.
async fn run<A, F>(arguments: Value, tool: impl FnOnce(A) -> F) -> Result<String, ApiError>
where
    A: DeserializeOwned,
    F: Future<Output = ToolResult>,
{
    let args = parse(arguments)?;
    Ok(tool(args).await?)
}

/// A failed tool's result: the API's error body as structured content and,
/// for the model, its code and message as text.
fn failed(error: ApiError) -> CallToolResult {
    let body = error.body();
    let structured = json!({"error": body.error, "status": error.status.as_u16()});
    let mut result = CallToolResult::structured_error(structured);
    result.content = vec![ContentBlock::text(format!(
        "{}: {}",
        body.error.code, body.error.message
    ))];
    result
}

/// The arguments as `T`, or an error naming the field that is wrong.
fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        // A missing field is reported at the root, whose path is ".".
        let field = match error.path().to_string() {
            root if root == "." => "arguments".to_owned(),
            path => format!("arguments.{path}"),
        };
        ApiError::from(DomainError::invalid(field, error.inner().to_string()))
    })
}

type ToolResult = Result<String, octopus_engine::Error>;

async fn remember(octopus: &Octopus, tenant: TenantId, args: RememberArgs) -> ToolResult {
    let agent = octopus.find_agent(tenant, &args.agent).await?;
    let conversation = octopus
        .users_conversation(tenant, agent.id, &args.user)
        .await?;
    let role = match args.role {
        Speaker::User => "user",
        Speaker::Assistant => "assistant",
    };
    let message: NewMessage =
        serde_json::from_value(json!({"role": role, "content": args.content}))
            .map_err(|e| DomainError::invalid("content", e.to_string()))?;
    let stored = octopus
        .append_messages(tenant, conversation, vec![message])
        .await?;
    let stored = &stored[0];
    Ok(format!(
        "Remembered message {} in conversation {} (episode {}) of {} with {}.",
        stored.id, conversation, stored.episode_id, agent.name, args.user
    ))
}

async fn recall(octopus: &Octopus, tenant: TenantId, args: RecallArgs) -> ToolResult {
    let agent = octopus.find_agent(tenant, &args.agent).await?;
    let mut query = json!({"user_id": args.user, "query": args.query});
    if let Some(top_k) = args.top_k {
        query["top_k"] = top_k.into();
    }
    let query: RecallQuery =
        serde_json::from_value(query).map_err(|e| DomainError::invalid("top_k", e.to_string()))?;
    let hits = octopus.recall(tenant, agent.id, &query).await?;
    if hits.is_empty() {
        return Ok(format!(
            "Nothing about that in {}'s past conversations with {}.",
            query.user_id, agent.name
        ));
    }
    let mut text = format!(
        "{}, best first:\n",
        counted(hits.len(), "memory", "memories")
    );
    for (rank, hit) in hits.iter().enumerate() {
        let what = match hit.kind {
            MemoryKind::Message => hit
                .window
                .as_ref()
                .and_then(|w| w.message.content.as_ref())
                .map(|c| format!("{}: {}", role_of(hit), c.text()))
                .unwrap_or_default(),
            MemoryKind::Summary => format!(
                "summary of the conversation: {}",
                hit.summary.as_deref().unwrap_or("")
            ),
            MemoryKind::Fact => match &hit.fact {
                Some(fact) => format!("fact {}: {}", fact.id, fact.text),
                None => "fact".to_owned(),
            },
        };
        let from = match hit.episode_id {
            Some(episode) => format!("episode {episode}"),
            None => "added by hand".to_owned(),
        };
        let _ = writeln!(
            text,
            "{}. [{}] {} (score {:.3}; {from})",
            rank + 1,
            hit.at.format("%Y-%m-%d %H:%M"),
            what,
            hit.score,
        );
    }
    Ok(text)
}

fn role_of(hit: &octopus_core::recall::RecallHit) -> String {
    hit.window
        .as_ref()
        .map(|w| w.message.role.to_string())
        .unwrap_or_default()
}

async fn search_knowledge(
    octopus: &Octopus,
    tenant: TenantId,
    args: SearchKnowledgeArgs,
) -> ToolResult {
    let agent = octopus.find_agent(tenant, &args.agent).await?;
    let query = KnowledgeQuery {
        text: args.query,
        top_k: args.top_k,
        min_score: None,
        mode: SearchMode::default(),
        filter: ChunkFilter {
            source: args.source,
            category: args.category,
            indexed_from: None,
            indexed_to: None,
        },
    };
    let hits = octopus.search_knowledge(tenant, agent.id, query).await?;
    if hits.is_empty() {
        return Ok(format!("No passage of {}'s knowledge matches.", agent.name));
    }
    let mut text = format!(
        "{}, best first:\n",
        counted(hits.len(), "passage", "passages")
    );
    for (rank, hit) in hits.iter().enumerate() {
        let chunk = &hit.chunk;
        let heading = chunk
            .metadata
            .heading
            .as_deref()
            .map(|h| format!(" > {h}"))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "{}. {}{} (chunk {}, score {:.3})\n{}\n",
            rank + 1,
            chunk.metadata.source,
            heading,
            chunk.id,
            hit.score,
            chunk.content
        );
    }
    Ok(text)
}

async fn get_context(octopus: &Octopus, tenant: TenantId, args: GetContextArgs) -> ToolResult {
    let agent = octopus.find_agent(tenant, &args.agent).await?;
    let conversation = octopus
        .users_conversation(tenant, agent.id, &args.user)
        .await?;
    let memory = octopus
        .build_context(tenant, conversation, &args.message)
        .await?;
    let mut text = format!(
        "Working memory for {}'s next message to {} (conversation {}; {} of {} tokens):\n",
        args.user, agent.name, conversation, memory.trace.total_tokens, memory.trace.budget
    );
    for message in &memory.messages {
        let _ = writeln!(text, "\n[{}]\n{}", message.role, message.content);
    }
    Ok(text)
}

async fn list_procedures(
    octopus: &Octopus,
    tenant: TenantId,
    args: ListProceduresArgs,
) -> ToolResult {
    let agent = match &args.agent {
        Some(name) => Some(octopus.find_agent(tenant, name).await?.id),
        None => None,
    };
    let filter = ProcedureFilter {
        agent_id: agent,
        shared: None,
        active: Some(true),
        approved: Some(true),
        text: args.text,
        page: Page::default(),
    };
    let procedures = octopus.list_procedures(tenant, &filter).await?;
    if procedures.is_empty() {
        return Ok("No approved, active procedure matches.".into());
    }
    let mut text = String::new();
    for procedure in &procedures {
        let _ = writeln!(text, "{} (procedure {})", procedure.name, procedure.id);
        if let Some(description) = &procedure.description {
            let _ = writeln!(text, "  {description}");
        }
        if let Some(pattern) = &procedure.trigger_pattern {
            let _ = writeln!(text, "  triggered by /{pattern}/");
        }
        for (index, step) in procedure.steps.iter().enumerate() {
            let tool = step
                .tool
                .as_deref()
                .map(|t| format!(" [tool: {t}]"))
                .unwrap_or_default();
            let _ = writeln!(text, "  {}. {}{}", index + 1, step.instruction, tool);
        }
    }
    Ok(text)
}

async fn add_document(octopus: &Octopus, tenant: TenantId, args: AddDocumentArgs) -> ToolResult {
    let agent = octopus.find_agent(tenant, &args.agent).await?;
    let format = if is_markdown(&args.source) {
        Format::Markdown
    } else {
        Format::Plain
    };
    let report = octopus
        .ingest_document(
            tenant,
            agent.id,
            IngestDocument {
                source: args.source,
                text: args.text,
                format,
                category: args.category,
            },
        )
        .await?;
    Ok(format!(
        "Added {} to {}'s knowledge: {}, {}.",
        report.source,
        agent.name,
        counted(report.chunks, "chunk", "chunks"),
        counted(report.tokens, "token", "tokens")
    ))
}

async fn forget_user(octopus: &Octopus, tenant: TenantId, args: ForgetUserArgs) -> ToolResult {
    let agent = match &args.agent {
        Some(name) => Some(octopus.find_agent(tenant, name).await?.id),
        None => None,
    };
    let receipt = octopus
        .forget_user(
            tenant,
            ForgetUser {
                user_id: args.user.clone(),
                agent_id: agent,
            },
        )
        .await?;
    Ok(format!(
        "Forgot {}: {} removed. Receipt: {}",
        args.user,
        counted(
            receipt.conversation_ids.len(),
            "conversation",
            "conversations"
        ),
        serde_json::to_string(&receipt).unwrap_or_default()
    ))
}

async fn update_memory(
    octopus: &Octopus,
    caller: &TenantAuthor,
    args: UpdateMemoryArgs,
) -> ToolResult {
    let edit = FactEdit {
        text: args.text,
        valid_from: None,
        reason: args.reason,
    };
    let id = fact_id(&args.fact_id)?;
    let fact = octopus
        .correct_fact(caller.tenant, id, edit, caller.name())
        .await?;
    Ok(format!(
        "Corrected fact {} of {}: it now reads \"{}\" (fact {}); the old version is kept in its history.",
        args.fact_id, fact.user_id, fact.text, fact.id
    ))
}

async fn delete_memory(
    octopus: &Octopus,
    caller: &TenantAuthor,
    args: DeleteMemoryArgs,
) -> ToolResult {
    let id = fact_id(&args.fact_id)?;
    let receipt = octopus
        .delete_fact(caller.tenant, id, args.reason, caller.name())
        .await?;
    Ok(format!(
        "Deleted fact {}: {} and {} removed. Receipt: {}",
        args.fact_id,
        counted(receipt.versions, "version", "versions"),
        counted(receipt.vectors, "vector", "vectors"),
        serde_json::to_string(&receipt).unwrap_or_default()
    ))
}

/// "1 memory", "3 memories".
fn counted(n: impl TryInto<u64>, one: &str, many: &str) -> String {
    let n: u64 = n.try_into().unwrap_or(u64::MAX);
    format!("{n} {}", if n == 1 { one } else { many })
}

fn fact_id(text: &str) -> Result<FactId, octopus_engine::Error> {
    text.parse().map_err(|_| {
        DomainError::invalid("arguments.fact_id", "is not a fact's id (a UUID)").into()
    })
}
