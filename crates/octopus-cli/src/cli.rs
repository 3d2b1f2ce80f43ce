//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Octopus: memory for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "octopus", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How answers are printed: tables for a person at a terminal, JSON for
/// scripts.
#[derive(Debug, Args, Clone, Copy)]
pub struct OutputArgs {
    /// Print the server's JSON answer [default when the output is not a
    /// terminal, as in `octopus agents list | jq`].
    #[arg(long, global = true)]
    pub json: bool,
    /// Print a table (a list) or fields (one object) [default on a terminal].
    #[arg(long, global = true, conflicts_with = "json")]
    pub table: bool,
}

impl OutputArgs {
    /// Whether answers are printed as JSON.
    pub fn is_json(self) -> bool {
        use std::io::IsTerminal;
        self.json || (!self.table && !std::io::stdout().is_terminal())
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API.
    Serve(ServerArgs),
    /// Get started against a running server: a tenant, an API key and an
    /// agent (made when missing, with the admin key), printed as the
    /// variables to export: `eval "$(octopus init)"`.
    Init(InitArgs),
    /// Remember what a user said: stored as the user's message in their
    /// newest conversation with the agent (one is started when there is none).
    Remember(RememberArgs),
    /// Create or upgrade the database schema, then exit.
    Migrate(ServerArgs),
    /// The server's version, storage and embedding model, and your memory
    /// queue: how much work waits before recall finds the newest messages by
    /// meaning (a tenant's key sees its own; the admin key, every tenant's).
    Status {
        /// Also say whether this agent's model can be called (its id or name).
        #[arg(long)]
        agent: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Tenants (admin key).
    #[command(subcommand)]
    Tenants(TenantCommand),
    /// A tenant's API keys (admin key).
    #[command(subcommand)]
    Keys(KeyCommand),
    /// Agents.
    #[command(subcommand)]
    Agents(AgentCommand),
    /// Conversations.
    #[command(subcommand)]
    Conversations(ConversationCommand),
    /// Messages.
    #[command(subcommand)]
    Messages(MessageCommand),
    /// Episodes.
    #[command(subcommand)]
    Episodes(EpisodeCommand),
    /// Procedures: step-by-step instructions triggered by a pattern or by
    /// meaning; each change is a version that waits for approval.
    #[command(subcommand)]
    Procedures(ProcedureCommand),
    /// The users of a tenant.
    #[command(subcommand)]
    Users(UserCommand),
    /// One fact about a user: read, correct or delete it, and its history.
    #[command(subcommand)]
    Facts(FactCommand),
    /// Webhooks: endpoints that receive signed events when memory changes.
    #[command(subcommand)]
    Webhooks(WebhookCommand),
    /// Search messages (full text) or an agent's knowledge (meaning and words).
    #[command(subcommand)]
    Search(SearchCommand),
    /// Ingest files or folders (.md, .markdown, .txt) into an agent's knowledge.
    Ingest(IngestArgs),
    /// An agent's knowledge: what it holds, and deleting a chunk.
    #[command(subcommand)]
    Knowledge(KnowledgeCommand),
    /// Recall what an agent remembers of a user, by meaning and by words.
    Recall(RecallArgs),
    /// Take one turn: the message (or the results of the model's tool calls)
    /// goes to the agent's model with its working memory; the reply, its tool
    /// calls and the trace are printed.
    Turn(TurnArgs),
    /// Assemble the working memory for a user's next message in a conversation.
    Context(ContextArgs),
    /// Import a dump (from `octopus export`) whole or not at all, or past
    /// conversations from a JSON file (one episode per session; give --agent
    /// and --user).
    Import(ImportArgs),
    /// Import a person's conversations from a ChatGPT or Claude data export
    /// (the conversations.json in its zip) as their past with an agent.
    /// Importing the same export again adds nothing.
    ImportChats(ImportChatsArgs),
    /// Export a tenant's data, or one user's, as a dump (JSON Lines) to
    /// standard output: the tenant key's own tenant, or with the admin key
    /// the tenant of --tenant.
    Export(ExportArgs),
    /// Serve the Model Context Protocol over standard input and output, for
    /// Claude Desktop, Cursor and other MCP clients: relayed to the server
    /// at OCTOPUS_URL (`/mcp`) with OCTOPUS_API_KEY, or, given a data
    /// directory, a database or a configuration file, over that data in
    /// this process (still with a tenant's OCTOPUS_API_KEY).
    Mcp(McpArgs),
    /// Chat with an agent in the terminal: each line is a turn, its reply
    /// streamed. `/trace` shows what memory the last turn used, `/new` closes
    /// the episode, `/quit` (or end of input) leaves.
    Chat(ChatArgs),
}

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The agent to talk to.
    #[arg(long, env = "OCTOPUS_AGENT")]
    pub agent: String,
    /// Who is talking: the agent remembers each user apart.
    #[arg(long, default_value = "terminal")]
    pub user: String,
    /// Continue this conversation instead of starting one.
    #[arg(long)]
    pub conversation: Option<String>,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub remote: Remote,
    #[command(flatten)]
    pub local: ServerArgs,
}

impl McpArgs {
    /// Whether the data is opened here rather than reached through a server.
    pub fn opens_data(&self) -> bool {
        self.local.data_dir.is_some()
            || self.local.database_url.is_some()
            || self.local.config.is_some()
    }
}

/// Settings of a command that opens the data directory.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Configuration file [default: ./config/octopus.toml when it exists].
    #[arg(long, env = "OCTOPUS_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:7700].
    #[arg(long, env = "OCTOPUS_LISTEN")]
    pub listen: Option<String>,
    /// Data directory [default: ./octopus-data].
    #[arg(long, env = "OCTOPUS_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL database to keep Octopus's data in, `postgres://user:password@host:port/db`:
    /// selects the PostgreSQL backend [default: SQLite in the data directory].
    #[arg(long, env = "OCTOPUS_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// A Qdrant server's gRPC URL, `http://host:6334`: selects Qdrant for vector
    /// search [default: the storage backend's own].
    #[arg(long, env = "OCTOPUS_QDRANT_URL")]
    pub qdrant_url: Option<String>,
    /// What an acknowledged write survives [default: process].
    #[arg(long, env = "OCTOPUS_DURABILITY", value_enum)]
    pub durability: Option<Durability>,
    /// The admin key; generated and printed once when neither this nor a stored one exists.
    #[arg(long, env = "OCTOPUS_ADMIN_KEY", hide_env_values = true)]
    pub admin_key: Option<String>,
    /// Log filter, e.g. `info` or `octopus_server=debug` [default: info].
    #[arg(long, env = "OCTOPUS_LOG")]
    pub log: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Durability {
    Process,
    PowerLoss,
}

impl From<Durability> for octopus_app::settings::Durability {
    fn from(value: Durability) -> Self {
        match value {
            Durability::Process => Self::Process,
            Durability::PowerLoss => Self::PowerLoss,
        }
    }
}

/// Where the server is and which key to present.
#[derive(Debug, Args, Clone)]
pub struct Remote {
    /// The server's base URL.
    #[arg(long, env = "OCTOPUS_URL", default_value = "http://127.0.0.1:7700")]
    pub url: String,
    /// A tenant's API key.
    #[arg(long, env = "OCTOPUS_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
}

/// Where the server is, for the commands that need the admin key.
#[derive(Debug, Args, Clone)]
pub struct AdminRemote {
    /// The server's base URL.
    #[arg(long, env = "OCTOPUS_URL", default_value = "http://127.0.0.1:7700")]
    pub url: String,
    /// The admin key: the one the server was started with.
    #[arg(
        long,
        alias = "api-key",
        env = "OCTOPUS_ADMIN_KEY",
        hide_env_values = true
    )]
    pub admin_key: Option<String>,
}

impl Remote {
    /// A client of the server, with the tenant's key.
    pub fn client(&self) -> octopus_client::Client {
        octopus_client::Client::new(&self.url, self.api_key.as_deref())
    }
}

impl AdminRemote {
    pub fn remote(&self) -> anyhow::Result<Remote> {
        let Some(key) = &self.admin_key else {
            anyhow::bail!(
                "no admin key: set OCTOPUS_ADMIN_KEY to the key the server was started with, or pass --admin-key"
            );
        };
        Ok(Remote {
            url: self.url.clone(),
            api_key: Some(key.clone()),
        })
    }
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The tenant: used when one of this name exists, else made.
    #[arg(long, default_value = "default")]
    pub tenant: String,
    /// The agent: used when the tenant has one of this name, else made.
    #[arg(long, default_value = "assistant")]
    pub agent: String,
    /// The new agent's model provider: openai, azure_openai, anthropic or ollama.
    #[arg(long, default_value = "openai")]
    pub provider: String,
    /// The new agent's model.
    #[arg(long, default_value = "gpt-4o-mini")]
    pub model: String,
    /// The new key's name.
    #[arg(long, default_value = "init")]
    pub key_name: String,
    /// Make no agent (and export no OCTOPUS_AGENT): for a tenant that a
    /// dump will fill (`octopus import`), whose agents keep their names.
    #[arg(long, conflicts_with_all = ["provider", "model"])]
    pub no_agent: bool,
    #[command(flatten)]
    pub remote: AdminRemote,
}

#[derive(Debug, Args)]
pub struct RememberArgs {
    /// What the user said.
    pub text: String,
    /// Who said it.
    #[arg(long)]
    pub user: String,
    /// The agent that remembers it (its id or name).
    #[arg(long, env = "OCTOPUS_AGENT")]
    pub agent: String,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Subcommand)]
pub enum TenantCommand {
    /// Create a tenant (admin key).
    Create {
        name: String,
        #[command(flatten)]
        remote: AdminRemote,
    },
    /// List the tenants (admin key).
    List {
        #[command(flatten)]
        remote: AdminRemote,
    },
    /// One tenant (admin key).
    Get {
        /// The tenant: its name or id.
        tenant_id: String,
        #[command(flatten)]
        remote: AdminRemote,
    },
    /// Delete a tenant and everything under it (keys, agents, conversations,
    /// facts, procedures, knowledge, webhooks), for good, and print the
    /// receipt: what each store removed (admin key).
    Delete {
        /// The tenant: its name or id.
        tenant_id: String,
        /// Confirms that all of the tenant's data is to go.
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        remote: AdminRemote,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Mint a key; its secret is printed only now.
    Create {
        /// The tenant: its name or id.
        tenant_id: String,
        #[arg(long, default_value = "default")]
        name: String,
        #[command(flatten)]
        remote: AdminRemote,
    },
    /// List a tenant's keys: names, prefixes, when made and revoked.
    List {
        /// The tenant: its name or id.
        tenant_id: String,
        #[command(flatten)]
        remote: AdminRemote,
    },
    /// Revoke a key: it opens nothing from now on.
    Revoke {
        /// The tenant: its name or id.
        tenant_id: String,
        /// The key: its name (when one live key has it) or id.
        key_id: String,
        #[command(flatten)]
        remote: AdminRemote,
    },
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Create an agent: its model, system prompt and memory settings.
    Create {
        #[arg(long)]
        name: String,
        /// openai, azure_openai, anthropic or ollama.
        #[arg(long, default_value = "openai")]
        provider: String,
        #[arg(long)]
        model: String,
        #[arg(long, default_value = "")]
        system_prompt: String,
        /// The provider's endpoint, e.g. http://localhost:11434 for a local
        /// Ollama, or an OpenAI-compatible server's .../v1.
        #[arg(long)]
        base_url: Option<String>,
        /// Azure OpenAI: the deployment that serves the model.
        #[arg(long)]
        deployment: Option<String>,
        /// Azure OpenAI: the API version, e.g. 2024-10-21.
        #[arg(long)]
        api_version: Option<String>,
        /// The server's environment variable holding this agent's key:
        /// OPENAI_API_KEY, AZURE_OPENAI_API_KEY, ANTHROPIC_API_KEY or OCTOPUS_LLM_KEY_*.
        #[arg(long)]
        api_key_env: Option<String>,
        /// Sampling temperature, 0 to 2.
        #[arg(long)]
        temperature: Option<f64>,
        /// Memory settings as JSON, e.g. '{"max_working_memory_tokens": 4000}'.
        #[arg(long)]
        memory: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the tenant's agents.
    List {
        #[command(flatten)]
        remote: Remote,
    },
    /// One agent with all its settings.
    Get {
        agent_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Apply a JSON merge patch, e.g. '{"llm": {"temperature": 0.2}}'.
    Update {
        agent_id: String,
        patch: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete: the agent, its knowledge and its recall answer 404 from then on.
    /// To pause one instead (read-only): `update <AGENT_ID> '{"is_active": false}'`.
    Delete {
        agent_id: String,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConversationCommand {
    /// Start a conversation between an agent and a user.
    Create {
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[arg(long)]
        user: String,
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List conversations, by agent or user.
    List {
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        user: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// One conversation.
    Get {
        conversation_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete a conversation.
    Delete {
        conversation_id: String,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum MessageCommand {
    /// Append one message (--role and --content), or a JSON batch from --file
    /// (`-` for standard input) in the API's `{"messages": [...]}` form.
    Append {
        conversation_id: String,
        #[arg(long, requires = "content", conflicts_with = "file")]
        role: Option<String>,
        #[arg(long, requires = "role")]
        content: Option<String>,
        #[arg(long)]
        file: Option<PathBuf>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Erase one message from every store, with the facts learned from it,
    /// and print the receipt; its episode's summary is written again.
    /// Cannot be undone.
    Erase {
        message_id: String,
        /// Why; kept in the histories of the facts deleted with it.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProcedureCommand {
    /// Create one from a YAML or JSON file: `name`, `description`,
    /// `trigger_pattern`, `steps: [{instruction, tool?, arguments?}]`,
    /// `agent_id` (absent: shared by every agent). Version 1, pending approval.
    Create {
        file: PathBuf,
        /// The agent it belongs to (overrides the file's `agent_id`).
        #[arg(long)]
        agent: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List procedures, by agent, sharing, state or words.
    List {
        #[arg(long)]
        agent: Option<String>,
        /// Only shared procedures; with --agent, the agent's and the shared ones.
        #[arg(long)]
        shared: bool,
        #[arg(long)]
        active: Option<bool>,
        #[arg(long)]
        approved: Option<bool>,
        /// Words in the name or description.
        #[arg(long)]
        text: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// One procedure.
    Get {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Change it: the file (YAML or JSON) is a merge patch of `name`,
    /// `description`, `trigger_pattern`, `steps`, and makes the next version;
    /// --active alone makes none.
    Update {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[arg(long)]
        file: Option<PathBuf>,
        #[arg(long)]
        active: Option<bool>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Approve the pending version: it serves from now on.
    Approve {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Reject the pending version.
    Reject {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Every version, with who wrote and who decided each.
    Versions {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Make an earlier approved version serve again.
    Rollback {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[arg(long)]
        version: u32,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete a procedure and all its versions.
    Delete {
        /// The procedure: its name (when one procedure has it) or id.
        procedure_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Ask the agent's model to draft a procedure from an episode's tool calls.
    Propose {
        episode_id: String,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum EpisodeCommand {
    /// List episodes, by agent, user, conversation or time.
    List {
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        user: Option<String>,
        #[arg(long)]
        conversation: Option<String>,
        /// RFC 3339, e.g. 2026-03-01T00:00:00Z.
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
        /// List soft-deleted episodes.
        #[arg(long)]
        deleted: bool,
        /// List the episodes retention archived.
        #[arg(long)]
        archived: bool,
        #[command(flatten)]
        remote: Remote,
    },
    /// An episode with its messages.
    Get {
        episode_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Close an open episode: its summary and embeddings follow.
    Close {
        episode_id: String,
        /// user_closed, agent_closed or timeout.
        #[arg(long, default_value = "user_closed")]
        reason: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Set an episode's summary and key facts, replacing any it had.
    Summary {
        episode_id: String,
        #[arg(long)]
        text: String,
        /// A key fact; repeat for more.
        #[arg(long = "key-fact")]
        key_facts: Vec<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Soft-delete.
    Delete {
        episode_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Bring back a soft-deleted or archived episode.
    Restore {
        episode_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Remove a soft-deleted or archived episode for good.
    Purge {
        episode_id: String,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The tenant to export (admin key); the key's own tenant when absent.
    #[arg(long)]
    pub tenant: Option<String>,
    /// Only this user's conversations (and the agents they talk to).
    #[arg(long)]
    pub user: Option<String>,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// The users who have a live conversation with an agent, by user id.
    List {
        /// The agent.
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        offset: Option<u32>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Remove everything stored about a user, for good, and print the
    /// receipt: what each store removed.
    Forget {
        user_id: String,
        /// Only what the user said to this agent.
        #[arg(long)]
        agent: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// What holds about a user now, in one view: their standing
    /// instructions and preferences, every other current fact by category,
    /// the newest past conversations a line each, and how much they talked.
    Profile {
        user_id: String,
        /// The agent they talk to.
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// The facts an agent learned about a user, the newest first: each with
    /// when it became true and, once replaced, until when.
    Facts {
        user_id: String,
        /// The agent that learned them.
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        /// Replaced facts too.
        #[arg(long)]
        include_replaced: bool,
        /// Only facts filed under this category.
        #[arg(long)]
        category: Option<String>,
        /// Only the fact added under this key.
        #[arg(long)]
        key: Option<String>,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        offset: Option<u32>,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Register an endpoint for events, and print it with its signing
    /// secret (shown this once).
    Create {
        /// Where events are POSTed: an http or https URL.
        #[arg(value_name = "URL")]
        endpoint: String,
        /// An event type to send: fact.added, fact.updated, fact.deleted,
        /// message.erased, episode.closed, procedure.pending,
        /// user.forgotten. Repeat for more.
        #[arg(long = "event", required = true)]
        events: Vec<String>,
        #[arg(long)]
        description: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// The tenant's endpoints.
    List {
        #[command(flatten)]
        remote: Remote,
    },
    /// An endpoint: whether it is enabled, failing, or disabled and why.
    Show {
        webhook_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete an endpoint and its delivery log.
    Delete {
        webhook_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Enable an endpoint that was disabled.
    Enable {
        webhook_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// An endpoint's deliveries, newest first: state, attempts, last status
    /// and error.
    Deliveries {
        webhook_id: String,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        offset: Option<u32>,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum FactCommand {
    /// Add a fact about a user by hand (of no conversation), and print it.
    Add {
        user_id: String,
        /// The fact.
        text: String,
        /// The agent that is to know it.
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        /// One of the agent's fact categories.
        #[arg(long)]
        category: Option<String>,
        /// A name to read it back by (`users facts --key`); one fact that
        /// holds per key in a category.
        #[arg(long)]
        key: Option<String>,
        /// Since when it holds (RFC 3339); now by default.
        #[arg(long)]
        valid_from: Option<String>,
        /// Why; kept in the fact's history.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// A fact, by the id of any of its versions.
    Show {
        fact_id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Correct a fact that holds: prints the new version, which replaces
    /// it; the old one is kept in its history.
    Correct {
        fact_id: String,
        /// The fact as it should read.
        text: String,
        /// Since when the corrected words hold (RFC 3339); now by default.
        #[arg(long)]
        valid_from: Option<String>,
        /// Why; kept in the fact's history.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete a fact, every version of it, from every store, and print the
    /// receipt. Cannot be undone.
    Delete {
        fact_id: String,
        /// Why; kept in the fact's history.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// A fact's history, oldest first: each version, who wrote it, when and
    /// why, and its deletion.
    History {
        fact_id: String,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Subcommand)]
pub enum SearchCommand {
    /// Full-text search over messages, ranked by BM25.
    Messages(SearchArgs),
    /// Search an agent's knowledge.
    Knowledge(KnowledgeSearchArgs),
}

#[derive(Debug, Args)]
pub struct KnowledgeSearchArgs {
    pub query: String,
    #[arg(long, env = "OCTOPUS_AGENT")]
    pub agent: String,
    /// hybrid, vector or keyword.
    #[arg(long, default_value = "hybrid")]
    pub mode: String,
    /// Default: the agent's knowledge_top_k.
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Default: the agent's knowledge_min_score.
    #[arg(long)]
    pub min_score: Option<f32>,
    #[arg(long)]
    pub source: Option<String>,
    #[arg(long)]
    pub category: Option<String>,
    /// Only chunks indexed at or after this time (RFC 3339).
    #[arg(long)]
    pub indexed_from: Option<String>,
    /// Only chunks indexed before this time (RFC 3339).
    #[arg(long)]
    pub indexed_to: Option<String>,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Files, or folders searched recursively for .md, .markdown and .txt files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[arg(long, env = "OCTOPUS_AGENT")]
    pub agent: String,
    /// Category stored with every chunk, e.g. policy, manual, faq.
    #[arg(long)]
    pub category: Option<String>,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    pub query: String,
    #[arg(long)]
    pub agent: Option<String>,
    #[arg(long)]
    pub user: Option<String>,
    #[arg(long)]
    pub conversation: Option<String>,
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long)]
    pub to: Option<String>,
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct RecallArgs {
    pub query: String,
    #[arg(long, env = "OCTOPUS_AGENT")]
    pub agent: String,
    #[arg(long)]
    pub user: String,
    /// hybrid, vector or keyword.
    #[arg(long, default_value = "hybrid")]
    pub mode: String,
    #[arg(long, default_value_t = 10)]
    pub top_k: u32,
    /// Turns before and after each hit to show with it.
    #[arg(long, default_value_t = 0)]
    pub neighbours: u32,
    /// Favour recent memories: a score halves every this many days.
    #[arg(long)]
    pub recency_half_life_days: Option<f64>,
    /// RFC 3339; inclusive.
    #[arg(long)]
    pub from: Option<String>,
    /// RFC 3339; exclusive.
    #[arg(long)]
    pub to: Option<String>,
    /// Leave out memories scoring below this (each retriever's scale).
    #[arg(long)]
    pub min_score: Option<f64>,
    /// Whether episode summaries are recalled beside turns [default: true].
    #[arg(long)]
    pub include_summaries: Option<bool>,
    /// Say why each hit was recalled where it was: the searches that found
    /// it, the fusion, each reordering that moved it.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Subcommand)]
pub enum KnowledgeCommand {
    /// The agent's knowledge collection: its model, dimension and chunk count.
    Show {
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// The agent's documents, by source: category, chunks, when indexed.
    Documents {
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// One document of the agent's knowledge: its text and its chunks.
    Document {
        /// The document's source, as it was ingested.
        source: String,
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete one chunk; its document's other chunks stay.
    DeleteChunk {
        chunk_id: String,
        #[arg(long, env = "OCTOPUS_AGENT")]
        agent: String,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Debug, Args)]
pub struct TurnArgs {
    #[arg(long)]
    pub conversation: String,
    /// The user's message: a new turn.
    #[arg(
        long,
        conflicts_with = "tool_results",
        required_unless_present = "tool_results"
    )]
    pub message: Option<String>,
    /// The tools the model may call: a JSON file (`-` for standard input) of
    /// `[{"name", "description", "parameters"}]`.
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// Results of the model's pending tool calls, continuing the turn: a JSON
    /// file of `[{"tool_call_id", "content", "is_error"?}]`.
    #[arg(long)]
    pub tool_results: Option<PathBuf>,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The user's next message (not stored).
    pub message: String,
    #[arg(long)]
    pub conversation: String,
    /// Say why each candidate was kept or left out, and why recall found
    /// each memory where it did.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A dump, or a JSON file: a list of sessions, each `{"messages": [...]}`
    /// with every message's original `timestamp`, or an object with that list
    /// as `sessions`.
    pub file: PathBuf,
    /// The agent the conversation is with (a conversations file only).
    #[arg(long)]
    pub agent: Option<String>,
    /// The user the conversation is with (a conversations file only).
    #[arg(long)]
    pub user: Option<String>,
    #[arg(long)]
    pub title: Option<String>,
    #[command(flatten)]
    pub remote: Remote,
}

#[derive(Debug, Args)]
pub struct ImportChatsArgs {
    /// The export's conversations.json (unzipped from the export).
    pub file: PathBuf,
    /// Whose export it is: chatgpt or claude; told from the file when not given.
    #[arg(long)]
    pub format: Option<String>,
    /// The agent the conversations go with.
    #[arg(long)]
    pub agent: String,
    /// The person whose conversations they are.
    #[arg(long)]
    pub user: String,
    #[command(flatten)]
    pub remote: Remote,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every subcommand's help says what it does, in its own words: a
    /// variant without a doc comment would show the flattened `Remote`'s.
    #[test]
    fn every_command_says_what_it_does() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for sub in command.get_subcommands() {
                let path = format!("{path} {}", sub.get_name());
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                if about.is_empty() || about.starts_with("Where the server is") {
                    missing.push(format!("{path}: {about:?}"));
                }
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "octopus", &mut missing);
        assert!(
            missing.is_empty(),
            "commands without their own help: {missing:#?}"
        );
    }
}
