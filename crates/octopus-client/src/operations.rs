//! Every operation of Octopus's HTTP API, generated from the server's
//! OpenAPI document by a test of octopus-server (`tests/it/client_operations.rs`);
//! `OCTOPUS_BLESS=1 cargo test -p octopus-server client_operations` writes it
//! again. Do not edit by hand.

use crate::{Method, Operation};

/// The process is up: `/healthz` under the name other servers use.
pub const HEALTH: Operation = Operation::new("health", Method::GET, "/health");

/// The process is up.
pub const HEALTHZ: Operation = Operation::new("healthz", Method::GET, "/healthz");

/// Prometheus metrics: requests by route and status with latency histograms, open connections, each tenant's waiting memory work and the age of its oldest job, and embedding throughput. Needs the admin key: the per-tenant series name every tenant.
pub const METRICS: Operation = Operation::new("metrics", Method::GET, "/metrics");

/// The store answers queries.
pub const READYZ: Operation = Operation::new("readyz", Method::GET, "/readyz");

/// List the tenant's active agents.
pub const LIST_AGENTS: Operation = Operation::new("list_agents", Method::GET, "/v1/agents");

/// Create an agent.
pub const CREATE_AGENT: Operation = Operation::new("create_agent", Method::POST, "/v1/agents");

/// Delete an agent: it, its knowledge and its recall answer 404 from now on, and its name is free. Its conversations and episodes stay readable until deleted themselves. To pause an agent (read-only) instead, `PATCH` it with `{"is_active": false}`.
pub const DELETE_AGENT: Operation = Operation::new("delete_agent", Method::DELETE, "/v1/agents/{agent_id}");

/// Get an agent (inactive ones too).
pub const GET_AGENT: Operation = Operation::new("get_agent", Method::GET, "/v1/agents/{agent_id}");

/// Change an agent with a JSON merge patch (RFC 7386) of `name`, `system_prompt`, `llm`, `memory` or `is_active`.
pub const UPDATE_AGENT: Operation = Operation::new("update_agent", Method::PATCH, "/v1/agents/{agent_id}");

/// The agent's knowledge collection: name, dimension, model, chunk count.
pub const KNOWLEDGE_INFO: Operation = Operation::new("knowledge_info", Method::GET, "/v1/agents/{agent_id}/knowledge");

/// Delete one chunk of the agent's knowledge.
pub const DELETE_CHUNK: Operation = Operation::new("delete_chunk", Method::DELETE, "/v1/agents/{agent_id}/knowledge/chunks/{chunk_id}");

/// One document: its chunks in order, and their text joined.
pub const READ_DOCUMENT: Operation = Operation::new("read_document", Method::GET, "/v1/agents/{agent_id}/knowledge/document");

/// The agent's documents, by source name: category, chunk count and when the newest chunk was indexed.
pub const LIST_DOCUMENTS: Operation = Operation::new("list_documents", Method::GET, "/v1/agents/{agent_id}/knowledge/documents");

/// Ingest a document into the agent's knowledge: chunked, embedded, stored.
pub const INGEST_DOCUMENT: Operation = Operation::new("ingest_document", Method::POST, "/v1/agents/{agent_id}/knowledge/documents");

/// Search the agent's knowledge by meaning and by words (`mode`), with every score.
pub const SEARCH_KNOWLEDGE: Operation = Operation::new("search_knowledge", Method::POST, "/v1/agents/{agent_id}/knowledge/search");

/// Recall what the agent remembers of a user: past messages and episode summaries, by meaning and by words, each with its episode, time and scores.
pub const RECALL: Operation = Operation::new("recall", Method::POST, "/v1/agents/{agent_id}/recall");

/// The users who have a live conversation with the agent, by user id: how many conversations each has and when the newest last changed.
pub const LIST_USERS: Operation = Operation::new("list_users", Method::GET, "/v1/agents/{agent_id}/users");

/// The facts the agent learned about a user: each with the episode and messages it came from, when it became true (`valid_from`) and, once a newer fact replaced it, until when (`valid_to`, `superseded_by`). Facts are learned during a session and when an episode closes, by the agent's model, or added by a person; a user's standing instructions and preferences are filed as the memory worker reads their messages. The newest first.
pub const LIST_FACTS: Operation = Operation::new("list_facts", Method::GET, "/v1/agents/{agent_id}/users/{user_id}/facts");

/// Add a fact about a user by hand: of no episode or message, `source: manual`, `changed_by` the key's name. It is in the next context and found by its words at once, and by meaning once the memory worker embedded it; it is corrected, deleted and forgotten as a learned fact is. A `key` of the client's names it for reading back (`?key=`): while a fact with the key holds in the category, another is refused (409 `fact_key_taken`); correct that one instead.
pub const ADD_FACT: Operation = Operation::new("add_fact", Method::POST, "/v1/agents/{agent_id}/users/{user_id}/facts");

/// What holds about a user now, in one view: their standing instructions and preferences, every other current fact by category with when it became true, the newest past conversations' summaries a line each, and how much they have talked. Assembled from what is stored when asked, so a corrected fact shows its new text and a deleted one is gone at once. `404 user_not_found` when the agent has no live conversation and no fact of the user (a forgotten user among them).
pub const USER_PROFILE: Operation = Operation::new("user_profile", Method::GET, "/v1/agents/{agent_id}/users/{user_id}/profile");

/// Complete a chat as the agent `model` names, with its memory: the new user message (or tool results) stored, the working memory assembled around it, the agent's model called, the reply stored and returned in OpenAI's shape, with what memory was used in `octopus.trace`. The answer's `x-octopus-conversation` header names the conversation used.
pub const CHAT_COMPLETION: Operation = Operation::new("chat_completion", Method::POST, "/v1/chat/completions");

/// List conversations, newest first.
pub const LIST_CONVERSATIONS: Operation = Operation::new("list_conversations", Method::GET, "/v1/conversations");

/// Start a conversation between a user and an agent.
pub const CREATE_CONVERSATION: Operation = Operation::new("create_conversation", Method::POST, "/v1/conversations");

/// Import past conversations with their original timestamps: a new conversation, one closed episode per session. Everything is validated before anything is stored; embeddings and summaries follow in the background, as for live messages.
pub const IMPORT_CONVERSATION: Operation = Operation::new("import_conversation", Method::POST, "/v1/conversations/import");

/// Import a person's past conversations from the `conversations.json` of a ChatGPT or Claude data export, sent as it is. Each conversation becomes one conversation of the user with the agent, of one closed episode, every message at its own time: of ChatGPT's message trees, the branch the user last saw; system and tool messages as such; the words of attached files where the export holds them. Embeddings, summaries and facts follow in the background, as for any import. The same conversations imported again are found and left as they are. The whole file is read before anything is stored: a file cut short or of another shape is refused, naming the line or the conversation.
pub const IMPORT_CHATS: Operation = Operation::new("import_chats", Method::POST, "/v1/conversations/import/{format}");

/// Delete a conversation: it takes no more messages, and its open episode closes.
pub const DELETE_CONVERSATION: Operation = Operation::new("delete_conversation", Method::DELETE, "/v1/conversations/{conversation_id}");

/// Get a conversation.
pub const GET_CONVERSATION: Operation = Operation::new("get_conversation", Method::GET, "/v1/conversations/{conversation_id}");

/// Assemble the working memory for the user's next message: retrieval for every block at once, then pruning to the agent's token budget, with a trace.
pub const BUILD_CONTEXT: Operation = Operation::new("build_context", Method::POST, "/v1/conversations/{conversation_id}/context");

/// Append messages to a conversation, in order, all or none. Opens an episode when none is open. Give `timestamp` on each message when importing history.
pub const APPEND_MESSAGES: Operation = Operation::new("append_messages", Method::POST, "/v1/conversations/{conversation_id}/messages");

/// Take a turn: store the user's message, assemble the working memory, call the agent's model with it, store and return the reply with the trace. When the model calls tools, `tool_calls` lists them: run them and post their `tool_results` to continue. A failed model call keeps the user's message and stores nothing else (502 or 503, naming the provider).
pub const TAKE_TURN: Operation = Operation::new("take_turn", Method::POST, "/v1/conversations/{conversation_id}/turns");

/// List episodes, newest first.
pub const LIST_EPISODES: Operation = Operation::new("list_episodes", Method::GET, "/v1/episodes");

/// Soft-delete an episode: hidden from every read and search until restored or purged.
pub const DELETE_EPISODE: Operation = Operation::new("delete_episode", Method::DELETE, "/v1/episodes/{episode_id}");

/// Get an episode with its messages in order.
pub const GET_EPISODE: Operation = Operation::new("get_episode", Method::GET, "/v1/episodes/{episode_id}");

/// Close an open episode.
pub const CLOSE_EPISODE: Operation = Operation::new("close_episode", Method::POST, "/v1/episodes/{episode_id}/close");

/// Ask the agent's model to turn this episode's tool calls into a draft procedure of its agent, stored pending approval (`created_by`: `learned:{episode}`). A person approves it before it can ever match. 409 `no_tool_calls` for an episode that called no tool; 503 when the agent has no model to ask.
pub const PROPOSE_PROCEDURE: Operation = Operation::new("propose_procedure", Method::POST, "/v1/episodes/{episode_id}/procedures/propose");

/// Remove a soft-deleted or archived episode for good: its messages, their full-text entries and its memory vectors.
pub const PURGE_EPISODE: Operation = Operation::new("purge_episode", Method::POST, "/v1/episodes/{episode_id}/purge");

/// Restore a soft-deleted episode, or bring an archived one back into use (kept for another retention period from now).
pub const RESTORE_EPISODE: Operation = Operation::new("restore_episode", Method::POST, "/v1/episodes/{episode_id}/restore");

/// Set an episode's summary and key facts, replacing any it had.
pub const SET_EPISODE_SUMMARY: Operation = Operation::new("set_episode_summary", Method::PUT, "/v1/episodes/{episode_id}/summary");

/// Export the caller's tenant as a dump: JSON Lines, streamed: a header, the tenant, agents, procedures, knowledge chunks, conversations with their episodes and messages, and an `end` record counting the lines. A dump cut short has no `end` record, and an import refuses it.
pub const EXPORT_DUMP: Operation = Operation::new("export_dump", Method::GET, "/v1/export");

/// Delete a fact, given any of its versions: every version's words leave the rows, the full-text index, the memory vectors and the vector index, and the stores' files are compacted, as forgetting a user does. Its history keeps that it was deleted, by whom and when, and none of its words. Cannot be undone.
pub const DELETE_FACT: Operation = Operation::new("delete_fact", Method::DELETE, "/v1/facts/{fact_id}");

/// A fact, by the id of any of its versions: current or replaced.
pub const GET_FACT: Operation = Operation::new("get_fact", Method::GET, "/v1/facts/{fact_id}");

/// Correct a fact that holds: the answer is a new version (a new id, `source: manual`, `changed_by` the key's name) that replaces it from `valid_from`; the corrected version is kept with the period it held, as the model's replacements are. Recall finds the new words by keyword at once and by meaning once the memory worker has embedded them.
pub const CORRECT_FACT: Operation = Operation::new("correct_fact", Method::PATCH, "/v1/facts/{fact_id}");

/// A fact's history, by the id of any of its versions, oldest first: each version learned, corrected or imported (its words, who, when, why), and its deletion. Kept after a deletion, without the words.
pub const FACT_HISTORY: Operation = Operation::new("fact_history", Method::GET, "/v1/facts/{fact_id}/history");

/// Import a dump (JSON Lines) in one transaction: all of it, or on any error nothing. With the admin key it goes into the dump's own tenant, created when it does not exist, with its ids: objects that exist already are a conflict. With a tenant's key it goes into that tenant as a copy, every object with a new id (`new_ids` maps the agents' and conversations'); an agent or shared procedure whose name the tenant has already is renamed, and `new_ids` says to what.
pub const IMPORT_DUMP: Operation = Operation::new("import_dump", Method::POST, "/v1/import");

/// Full-text search over the tenant's messages, ranked by BM25. Deleted episodes are never searched.
pub const SEARCH_MESSAGES: Operation = Operation::new("search_messages", Method::GET, "/v1/messages/search");

/// Erase one message: its row, full-text entry and vector leave every store, and the stores' files are compacted, as forgetting a user does. The facts learned from it are deleted with every version (their histories say by whom); its episode's summary and key facts are dropped, written again for a closed episode (by the agent's model, or extractively), and the facts are learned again from the messages left. Cannot be undone.
pub const ERASE_MESSAGE: Operation = Operation::new("erase_message", Method::DELETE, "/v1/messages/{message_id}");

/// The tenant's active agents as models, OpenAI's `list` of `model` objects: each agent's name is a `model` a completion may name.
pub const LIST_MODELS: Operation = Operation::new("list_models", Method::GET, "/v1/models");

/// List procedures, newest first.
pub const LIST_PROCEDURES: Operation = Operation::new("list_procedures", Method::GET, "/v1/procedures");

/// Create a procedure: version 1, pending approval. It matches nothing until it is approved. Without `agent_id` it is shared by every agent of the tenant.
pub const CREATE_PROCEDURE: Operation = Operation::new("create_procedure", Method::POST, "/v1/procedures");

/// Delete a procedure and every version of it.
pub const DELETE_PROCEDURE: Operation = Operation::new("delete_procedure", Method::DELETE, "/v1/procedures/{procedure_id}");

/// Get a procedure: its serving version (or, before any approval, its newest).
pub const GET_PROCEDURE: Operation = Operation::new("get_procedure", Method::GET, "/v1/procedures/{procedure_id}");

/// Change a procedure with a JSON merge patch. New `name`, `description`, `trigger_pattern` or `steps` make the next version, pending approval; an approved version keeps serving until then. `is_active` alone makes no version: `false` deactivates the procedure (it never matches).
pub const UPDATE_PROCEDURE: Operation = Operation::new("update_procedure", Method::PATCH, "/v1/procedures/{procedure_id}");

/// Approve the pending version: it serves from now on.
pub const APPROVE_PROCEDURE: Operation = Operation::new("approve_procedure", Method::POST, "/v1/procedures/{procedure_id}/approve");

/// Reject the pending version: it never serves.
pub const REJECT_PROCEDURE: Operation = Operation::new("reject_procedure", Method::POST, "/v1/procedures/{procedure_id}/reject");

/// Make an earlier approved version serve again.
pub const ROLLBACK_PROCEDURE: Operation = Operation::new("rollback_procedure", Method::POST, "/v1/procedures/{procedure_id}/rollback");

/// Every version of a procedure, oldest first, with who wrote and who decided each.
pub const PROCEDURE_VERSIONS: Operation = Operation::new("procedure_versions", Method::GET, "/v1/procedures/{procedure_id}/versions");

/// The server's version and backends, the embedding model, and the caller's memory queue: with a tenant's key its tenant's, with the admin key every tenant's together. With `agent_id`, whether that agent's model can be called.
pub const STATUS: Operation = Operation::new("status", Method::GET, "/v1/status");

/// List tenants.
pub const LIST_TENANTS: Operation = Operation::new("list_tenants", Method::GET, "/v1/tenants");

/// Create a tenant.
pub const CREATE_TENANT: Operation = Operation::new("create_tenant", Method::POST, "/v1/tenants");

/// Delete a tenant and everything under it: its API keys, agents, conversations, episodes, messages, facts, procedures, knowledge, memory vectors, queued work, webhooks and their deliveries, with their full-text entries and their copies in the vector index; then compact the stores' files. The receipt counts what each store removed. Cannot be undone.
pub const DELETE_TENANT: Operation = Operation::new("delete_tenant", Method::DELETE, "/v1/tenants/{tenant_id}");

/// Get a tenant.
pub const GET_TENANT: Operation = Operation::new("get_tenant", Method::GET, "/v1/tenants/{tenant_id}");

/// Export a tenant as a dump (admin key).
pub const EXPORT_TENANT_DUMP: Operation = Operation::new("export_tenant_dump", Method::GET, "/v1/tenants/{tenant_id}/export");

/// List a tenant's API keys (without their secrets).
pub const LIST_API_KEYS: Operation = Operation::new("list_api_keys", Method::GET, "/v1/tenants/{tenant_id}/keys");

/// Create an API key for a tenant. The response is the only time its secret is shown.
pub const CREATE_API_KEY: Operation = Operation::new("create_api_key", Method::POST, "/v1/tenants/{tenant_id}/keys");

/// Revoke an API key.
pub const REVOKE_API_KEY: Operation = Operation::new("revoke_api_key", Method::DELETE, "/v1/tenants/{tenant_id}/keys/{key_id}");

/// Forget a user: remove every conversation, episode, message, summary, key fact, memory vector, full-text entry, queued job and cached history about them, and procedures learned from their episodes; then compact the stores' files. The receipt counts what each store removed. Cannot be undone.
pub const FORGET_USER: Operation = Operation::new("forget_user", Method::DELETE, "/v1/users/{user_id}");

/// List the tenant's endpoints, oldest first.
pub const LIST_WEBHOOKS: Operation = Operation::new("list_webhooks", Method::GET, "/v1/webhooks");

/// Register an endpoint for events: `fact.added`, `fact.updated`, `fact.deleted`, `message.erased`, `episode.closed`, `procedure.pending`, `user.forgotten`. The answer holds the signing secret, shown this once. Events carry ids, never the words of a message or a fact.
pub const CREATE_WEBHOOK: Operation = Operation::new("create_webhook", Method::POST, "/v1/webhooks");

/// Delete an endpoint and its delivery log: nothing more is sent to it.
pub const DELETE_WEBHOOK: Operation = Operation::new("delete_webhook", Method::DELETE, "/v1/webhooks/{webhook_id}");

/// Get an endpoint: whether it is enabled, failing, or disabled and why.
pub const GET_WEBHOOK: Operation = Operation::new("get_webhook", Method::GET, "/v1/webhooks/{webhook_id}");

/// The endpoint's delivery log, newest first: each event's state (pending, delivered, failed), attempts, last status and error.
pub const LIST_DELIVERIES: Operation = Operation::new("list_deliveries", Method::GET, "/v1/webhooks/{webhook_id}/deliveries");

/// Enable an endpoint that was disabled (it answered 410 Gone, or failed for too long): events written from now on are delivered to it; those given up stay given up.
pub const ENABLE_WEBHOOK: Operation = Operation::new("enable_webhook", Method::POST, "/v1/webhooks/{webhook_id}/enable");

/// Every operation above.
pub const ALL: &[Operation] = &[
    HEALTH,
    HEALTHZ,
    METRICS,
    READYZ,
    LIST_AGENTS,
    CREATE_AGENT,
    DELETE_AGENT,
    GET_AGENT,
    UPDATE_AGENT,
    KNOWLEDGE_INFO,
    DELETE_CHUNK,
    READ_DOCUMENT,
    LIST_DOCUMENTS,
    INGEST_DOCUMENT,
    SEARCH_KNOWLEDGE,
    RECALL,
    LIST_USERS,
    LIST_FACTS,
    ADD_FACT,
    USER_PROFILE,
    CHAT_COMPLETION,
    LIST_CONVERSATIONS,
    CREATE_CONVERSATION,
    IMPORT_CONVERSATION,
    IMPORT_CHATS,
    DELETE_CONVERSATION,
    GET_CONVERSATION,
    BUILD_CONTEXT,
    APPEND_MESSAGES,
    TAKE_TURN,
    LIST_EPISODES,
    DELETE_EPISODE,
    GET_EPISODE,
    CLOSE_EPISODE,
    PROPOSE_PROCEDURE,
    PURGE_EPISODE,
    RESTORE_EPISODE,
    SET_EPISODE_SUMMARY,
    EXPORT_DUMP,
    DELETE_FACT,
    GET_FACT,
    CORRECT_FACT,
    FACT_HISTORY,
    IMPORT_DUMP,
    SEARCH_MESSAGES,
    ERASE_MESSAGE,
    LIST_MODELS,
    LIST_PROCEDURES,
    CREATE_PROCEDURE,
    DELETE_PROCEDURE,
    GET_PROCEDURE,
    UPDATE_PROCEDURE,
    APPROVE_PROCEDURE,
    REJECT_PROCEDURE,
    ROLLBACK_PROCEDURE,
    PROCEDURE_VERSIONS,
    STATUS,
    LIST_TENANTS,
    CREATE_TENANT,
    DELETE_TENANT,
    GET_TENANT,
    EXPORT_TENANT_DUMP,
    LIST_API_KEYS,
    CREATE_API_KEY,
    REVOKE_API_KEY,
    FORGET_USER,
    LIST_WEBHOOKS,
    CREATE_WEBHOOK,
    DELETE_WEBHOOK,
    GET_WEBHOOK,
    LIST_DELIVERIES,
    ENABLE_WEBHOOK,
];
