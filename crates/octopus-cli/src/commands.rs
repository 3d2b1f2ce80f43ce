//! The subcommands that talk to a running server, as a table: [`plan`]
//! turns each command into the one operation it asks for (its path's
//! values, query and body), and [`run`] sends it and prints the server's
//! answer on standard output: JSON, pretty, for scripts, or a table for a
//! person ([`crate::table`]). Agents are named by id or by
//! name; a name is looked up when the request is sent.

use std::io::Read;

use anyhow::Context;
use octopus_client::operations as op;
use octopus_client::{Named, Operation};
use serde_json::{Value, json};

use crate::cli::{
    AgentCommand, Command, ConversationCommand, EpisodeCommand, FactCommand, KeyCommand,
    KnowledgeCommand, MessageCommand, OutputArgs, ProcedureCommand, Remote, SearchCommand,
    TenantCommand, UserCommand, WebhookCommand,
};
use crate::output::print_out;

/// A value of the path or the query: text as it is, or the name or id of
/// something that has a name, which becomes its id.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arg {
    Text(String),
    Agent(String),
    Tenant(String),
    /// A key of a tenant, each by name or id.
    Key {
        tenant: String,
        key: String,
    },
    Procedure(String),
}

/// One request a command asks for.
#[derive(Debug)]
pub(crate) struct Request {
    pub remote: Remote,
    pub operation: Operation,
    pub path: Vec<Arg>,
    pub query: Vec<(&'static str, Arg)>,
    pub body: Option<Value>,
    /// An agent named in the body's `agent_id`, looked up when sent.
    pub body_agent: Option<String>,
}

impl Request {
    fn new(remote: Remote, operation: Operation) -> Self {
        Self {
            remote,
            operation,
            path: Vec::new(),
            query: Vec::new(),
            body: None,
            body_agent: None,
        }
    }

    fn path(mut self, value: impl Into<String>) -> Self {
        self.path.push(Arg::Text(value.into()));
        self
    }

    fn agent(mut self, agent: impl Into<String>) -> Self {
        self.path.push(Arg::Agent(agent.into()));
        self
    }

    /// A path value that may be a name: `arg` as it is given.
    fn named(mut self, arg: Arg) -> Self {
        self.path.push(arg);
        self
    }

    fn query(mut self, name: &'static str, value: Option<impl ToString>) -> Self {
        if let Some(value) = value {
            self.query.push((name, Arg::Text(value.to_string())));
        }
        self
    }

    fn flag(self, name: &'static str, set: bool) -> Self {
        self.query(name, set.then_some("true"))
    }

    fn query_agent(mut self, agent: Option<String>) -> Self {
        if let Some(agent) = agent {
            self.query.push(("agent_id", Arg::Agent(agent)));
        }
        self
    }

    fn body(mut self, body: Value) -> Self {
        self.body = Some(body);
        self
    }

    fn body_agent(mut self, agent: Option<String>) -> Self {
        self.body_agent = agent;
        self
    }

    /// Sends the request, naming agents by id.
    async fn send(self) -> anyhow::Result<Value> {
        let client = self.remote.client();
        let id = |arg: Arg| {
            let client = &client;
            async move {
                match arg {
                    Arg::Text(text) => Ok::<_, octopus_client::Error>(text),
                    Arg::Agent(agent) => client.agent_id(&agent).await,
                    Arg::Tenant(tenant) => client.id_of(Named::Tenant, &tenant).await,
                    Arg::Key { tenant, key } => {
                        client.id_of(Named::Key { tenant: &tenant }, &key).await
                    }
                    Arg::Procedure(name) => client.id_of(Named::Procedure, &name).await,
                }
            }
        };
        let mut call = client.call(self.operation);
        for arg in self.path {
            call = call.param(id(arg).await?);
        }
        for (name, arg) in self.query {
            call = call.query(name, id(arg).await?);
        }
        let mut body = self.body;
        if let Some(agent) = self.body_agent {
            body.get_or_insert_with(|| json!({}))["agent_id"] =
                json!(client.agent_id(&agent).await?);
        }
        if let Some(body) = body {
            call = call.json(&body);
        }
        Ok(call.send().await?)
    }
}

/// What a command does: one request, or a flow of its own.
pub(crate) enum Plan {
    Request(Request),
    /// Handled by a module of its own (exports stream, files are read,
    /// setups take several requests).
    Own(Command),
}

pub async fn run(command: Command, output: OutputArgs) -> anyhow::Result<()> {
    let answer = match plan(command)? {
        Plan::Request(request) => request.send().await?,
        Plan::Own(Command::Export(args)) => return crate::dumps::export(args).await,
        Plan::Own(Command::Init(args)) => return crate::start::init(args).await,
        Plan::Own(Command::Remember(args)) => crate::start::remember(args).await?,
        Plan::Own(Command::Ingest(args)) => crate::ingest::run(args).await?,
        Plan::Own(Command::Import(args)) => import(args).await?,
        Plan::Own(Command::ImportChats(args)) => crate::chat_imports::run(args).await?,
        Plan::Own(_) => unreachable!("handled by main"),
    };
    match answer {
        Value::Null => Ok(()),
        answer if output.is_json() => {
            print_out(&format!("{}\n", serde_json::to_string_pretty(&answer)?))
        }
        answer => print_out(&crate::table::render(&answer)),
    }
}

/// The table: each command, the operation it asks for, and how its
/// arguments fill the request. Reads the files a command names, and
/// nothing from the server.
pub(crate) fn plan(command: Command) -> anyhow::Result<Plan> {
    let request = match command {
        Command::Tenants(command) => tenants(command)?,
        Command::Keys(command) => keys(command)?,
        Command::Agents(command) => agents(command)?,
        Command::Conversations(command) => conversations(command),
        Command::Messages(command) => messages(command)?,
        Command::Episodes(command) => episodes(command),
        Command::Procedures(command) => procedures(command)?,
        Command::Users(command) => users(command),
        Command::Facts(command) => facts(command),
        Command::Webhooks(command) => webhooks(command),
        Command::Knowledge(command) => knowledge(command),
        Command::Search(SearchCommand::Knowledge(args)) => {
            let mut body = json!({"query": args.query, "mode": args.mode});
            set(&mut body, "source", args.source);
            set(&mut body, "category", args.category);
            set(&mut body, "indexed_from", args.indexed_from);
            set(&mut body, "indexed_to", args.indexed_to);
            set(&mut body, "top_k", args.top_k);
            set(&mut body, "min_score", args.min_score);
            Request::new(args.remote, op::SEARCH_KNOWLEDGE)
                .agent(args.agent)
                .body(body)
        }
        Command::Search(SearchCommand::Messages(args)) => {
            Request::new(args.remote, op::SEARCH_MESSAGES)
                .query("q", Some(args.query))
                .query_agent(args.agent)
                .query("user_id", args.user)
                .query("conversation_id", args.conversation)
                .query("from", args.from)
                .query("to", args.to)
                .query("limit", Some(args.limit))
        }
        Command::Recall(args) => {
            let mut body = json!({
                "user_id": args.user, "query": args.query, "mode": args.mode,
                "top_k": args.top_k, "neighbours": args.neighbours,
            });
            set(&mut body, "from", args.from);
            set(&mut body, "to", args.to);
            set(
                &mut body,
                "recency_half_life_days",
                args.recency_half_life_days,
            );
            set(&mut body, "min_score", args.min_score);
            set(&mut body, "include_summaries", args.include_summaries);
            if args.explain {
                body["explain"] = true.into();
            }
            Request::new(args.remote, op::RECALL)
                .agent(args.agent)
                .body(body)
        }
        Command::Status { agent, mut remote } => {
            // The admin key answers too, with every tenant's queue.
            if remote.api_key.is_none() {
                remote.api_key = std::env::var("OCTOPUS_ADMIN_KEY").ok();
            }
            Request::new(remote, op::STATUS).query_agent(agent)
        }
        Command::Context(args) => Request::new(args.remote, op::BUILD_CONTEXT)
            .path(args.conversation)
            .body(match args.explain {
                true => json!({"message": args.message, "explain": true}),
                false => json!({"message": args.message}),
            }),
        Command::Turn(args) => {
            let mut body = json!({});
            set(&mut body, "message", args.message);
            if let Some(path) = &args.tools {
                body["tools"] = read_json(path, "--tools")?;
            }
            if let Some(path) = &args.tool_results {
                body["tool_results"] = read_json(path, "--tool-results")?;
            }
            Request::new(args.remote, op::TAKE_TURN)
                .path(args.conversation)
                .body(body)
        }
        own => return Ok(Plan::Own(own)),
    };
    Ok(Plan::Request(request))
}

/// Sets `field` of a JSON object when the option is set.
fn set(body: &mut Value, field: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        body[field] = value.into();
    }
}

fn tenants(command: TenantCommand) -> anyhow::Result<Request> {
    Ok(match command {
        TenantCommand::Create { name, remote } => {
            Request::new(remote.remote()?, op::CREATE_TENANT).body(json!({"name": name}))
        }
        TenantCommand::List { remote } => Request::new(remote.remote()?, op::LIST_TENANTS),
        TenantCommand::Get { tenant_id, remote } => {
            Request::new(remote.remote()?, op::GET_TENANT).named(Arg::Tenant(tenant_id))
        }
        TenantCommand::Delete {
            tenant_id,
            yes,
            remote,
        } => {
            anyhow::ensure!(
                yes,
                "deleting tenant {tenant_id} erases all of its data for good: \
                 run `octopus tenants delete {tenant_id} --yes` to go ahead"
            );
            Request::new(remote.remote()?, op::DELETE_TENANT).named(Arg::Tenant(tenant_id))
        }
    })
}

fn keys(command: KeyCommand) -> anyhow::Result<Request> {
    Ok(match command {
        KeyCommand::Create {
            tenant_id,
            name,
            remote,
        } => Request::new(remote.remote()?, op::CREATE_API_KEY)
            .named(Arg::Tenant(tenant_id))
            .body(json!({"name": name})),
        KeyCommand::List { tenant_id, remote } => {
            Request::new(remote.remote()?, op::LIST_API_KEYS).named(Arg::Tenant(tenant_id))
        }
        KeyCommand::Revoke {
            tenant_id,
            key_id,
            remote,
        } => Request::new(remote.remote()?, op::REVOKE_API_KEY)
            .named(Arg::Tenant(tenant_id.clone()))
            .named(Arg::Key {
                tenant: tenant_id,
                key: key_id,
            }),
    })
}

fn agents(command: AgentCommand) -> anyhow::Result<Request> {
    Ok(match command {
        AgentCommand::Create {
            name,
            provider,
            model,
            system_prompt,
            base_url,
            deployment,
            api_version,
            api_key_env,
            temperature,
            memory,
            remote,
        } => {
            let mut llm = json!({"provider": provider, "model": model});
            set(&mut llm, "base_url", base_url);
            set(&mut llm, "deployment", deployment);
            set(&mut llm, "api_version", api_version);
            set(&mut llm, "api_key_env", api_key_env);
            set(&mut llm, "temperature", temperature);
            let mut body = json!({"name": name, "system_prompt": system_prompt, "llm": llm});
            if let Some(memory) = memory {
                body["memory"] = serde_json::from_str(&memory).context("--memory must be JSON")?;
            }
            Request::new(remote, op::CREATE_AGENT).body(body)
        }
        AgentCommand::List { remote } => Request::new(remote, op::LIST_AGENTS),
        AgentCommand::Get { agent_id, remote } => {
            Request::new(remote, op::GET_AGENT).agent(agent_id)
        }
        AgentCommand::Update {
            agent_id,
            patch,
            remote,
        } => {
            let patch: Value = serde_json::from_str(&patch).context("the patch must be JSON")?;
            Request::new(remote, op::UPDATE_AGENT)
                .agent(agent_id)
                .body(patch)
        }
        AgentCommand::Delete { agent_id, remote } => {
            Request::new(remote, op::DELETE_AGENT).agent(agent_id)
        }
    })
}

fn conversations(command: ConversationCommand) -> Request {
    match command {
        ConversationCommand::Create {
            agent,
            user,
            title,
            remote,
        } => Request::new(remote, op::CREATE_CONVERSATION)
            .body(json!({"user_id": user, "title": title}))
            .body_agent(Some(agent)),
        ConversationCommand::List {
            agent,
            user,
            remote,
        } => Request::new(remote, op::LIST_CONVERSATIONS)
            .query_agent(agent)
            .query("user_id", user),
        ConversationCommand::Get {
            conversation_id,
            remote,
        } => Request::new(remote, op::GET_CONVERSATION).path(conversation_id),
        ConversationCommand::Delete {
            conversation_id,
            remote,
        } => Request::new(remote, op::DELETE_CONVERSATION).path(conversation_id),
    }
}

fn messages(command: MessageCommand) -> anyhow::Result<Request> {
    Ok(match command {
        MessageCommand::Append {
            conversation_id,
            role,
            content,
            file,
            remote,
        } => {
            let body = match (role, content, file) {
                (Some(role), Some(content), None) => json!({"role": role, "content": content}),
                (None, None, Some(path)) => read_json(&path, "the batch")?,
                _ => anyhow::bail!("give --role and --content, or --file"),
            };
            Request::new(remote, op::APPEND_MESSAGES)
                .path(conversation_id)
                .body(body)
        }
        MessageCommand::Erase {
            message_id,
            reason,
            remote,
        } => Request::new(remote, op::ERASE_MESSAGE)
            .path(message_id)
            .query("reason", reason),
    })
}

fn episodes(command: EpisodeCommand) -> Request {
    match command {
        EpisodeCommand::List {
            agent,
            user,
            conversation,
            from,
            to,
            deleted,
            archived,
            remote,
        } => Request::new(remote, op::LIST_EPISODES)
            .query_agent(agent)
            .query("user_id", user)
            .query("conversation_id", conversation)
            .query("from", from)
            .query("to", to)
            .flag("deleted", deleted)
            .flag("archived", archived),
        EpisodeCommand::Get { episode_id, remote } => {
            Request::new(remote, op::GET_EPISODE).path(episode_id)
        }
        EpisodeCommand::Close {
            episode_id,
            reason,
            remote,
        } => Request::new(remote, op::CLOSE_EPISODE)
            .path(episode_id)
            .body(json!({"end_reason": reason})),
        EpisodeCommand::Summary {
            episode_id,
            text,
            key_facts,
            remote,
        } => Request::new(remote, op::SET_EPISODE_SUMMARY)
            .path(episode_id)
            .body(json!({"summary": text, "key_facts": key_facts})),
        EpisodeCommand::Delete { episode_id, remote } => {
            Request::new(remote, op::DELETE_EPISODE).path(episode_id)
        }
        EpisodeCommand::Restore { episode_id, remote } => {
            Request::new(remote, op::RESTORE_EPISODE).path(episode_id)
        }
        EpisodeCommand::Purge { episode_id, remote } => {
            Request::new(remote, op::PURGE_EPISODE).path(episode_id)
        }
    }
}

fn procedures(command: ProcedureCommand) -> anyhow::Result<Request> {
    Ok(match command {
        ProcedureCommand::Create {
            file,
            agent,
            remote,
        } => Request::new(remote, op::CREATE_PROCEDURE)
            .body(procedure_file(&file)?)
            .body_agent(agent),
        ProcedureCommand::List {
            agent,
            shared,
            active,
            approved,
            text,
            remote,
        } => Request::new(remote, op::LIST_PROCEDURES)
            .query_agent(agent)
            .flag("shared", shared)
            .query("active", active)
            .query("approved", approved)
            .query("text", text),
        ProcedureCommand::Get {
            procedure_id,
            remote,
        } => Request::new(remote, op::GET_PROCEDURE).named(Arg::Procedure(procedure_id)),
        ProcedureCommand::Update {
            procedure_id,
            file,
            active,
            remote,
        } => {
            let mut patch = match file {
                Some(file) => procedure_file(&file)?,
                None => json!({}),
            };
            set(&mut patch, "is_active", active);
            anyhow::ensure!(
                patch.as_object().is_some_and(|o| !o.is_empty()),
                "nothing to change: give --file or --active"
            );
            Request::new(remote, op::UPDATE_PROCEDURE)
                .named(Arg::Procedure(procedure_id))
                .body(patch)
        }
        ProcedureCommand::Approve {
            procedure_id,
            remote,
        } => Request::new(remote, op::APPROVE_PROCEDURE).named(Arg::Procedure(procedure_id)),
        ProcedureCommand::Reject {
            procedure_id,
            remote,
        } => Request::new(remote, op::REJECT_PROCEDURE).named(Arg::Procedure(procedure_id)),
        ProcedureCommand::Versions {
            procedure_id,
            remote,
        } => Request::new(remote, op::PROCEDURE_VERSIONS).named(Arg::Procedure(procedure_id)),
        ProcedureCommand::Rollback {
            procedure_id,
            version,
            remote,
        } => Request::new(remote, op::ROLLBACK_PROCEDURE)
            .named(Arg::Procedure(procedure_id))
            .body(json!({"version": version})),
        ProcedureCommand::Delete {
            procedure_id,
            remote,
        } => Request::new(remote, op::DELETE_PROCEDURE).named(Arg::Procedure(procedure_id)),
        ProcedureCommand::Propose { episode_id, remote } => {
            Request::new(remote, op::PROPOSE_PROCEDURE).path(episode_id)
        }
    })
}

fn users(command: UserCommand) -> Request {
    match command {
        UserCommand::List {
            agent,
            limit,
            offset,
            remote,
        } => Request::new(remote, op::LIST_USERS)
            .agent(agent)
            .query("limit", limit)
            .query("offset", offset),
        UserCommand::Forget {
            user_id,
            agent,
            remote,
        } => Request::new(remote, op::FORGET_USER)
            .path(user_id)
            .query_agent(agent),
        UserCommand::Profile {
            user_id,
            agent,
            remote,
        } => Request::new(remote, op::USER_PROFILE)
            .agent(agent)
            .path(user_id),
        UserCommand::Facts {
            user_id,
            agent,
            include_replaced,
            category,
            key,
            limit,
            offset,
            remote,
        } => Request::new(remote, op::LIST_FACTS)
            .agent(agent)
            .path(user_id)
            .flag("include_replaced", include_replaced)
            .query("category", category)
            .query("key", key)
            .query("limit", limit)
            .query("offset", offset),
    }
}

fn facts(command: FactCommand) -> Request {
    match command {
        FactCommand::Add {
            user_id,
            text,
            agent,
            category,
            key,
            valid_from,
            reason,
            remote,
        } => {
            let mut body = json!({"text": text});
            set(&mut body, "category", category);
            set(&mut body, "key", key);
            set(&mut body, "valid_from", valid_from);
            set(&mut body, "reason", reason);
            Request::new(remote, op::ADD_FACT)
                .agent(agent)
                .path(user_id)
                .body(body)
        }
        FactCommand::Show { fact_id, remote } => Request::new(remote, op::GET_FACT).path(fact_id),
        FactCommand::Correct {
            fact_id,
            text,
            valid_from,
            reason,
            remote,
        } => {
            let mut body = json!({"text": text});
            set(&mut body, "valid_from", valid_from);
            set(&mut body, "reason", reason);
            Request::new(remote, op::CORRECT_FACT)
                .path(fact_id)
                .body(body)
        }
        FactCommand::Delete {
            fact_id,
            reason,
            remote,
        } => Request::new(remote, op::DELETE_FACT)
            .path(fact_id)
            .query("reason", reason),
        FactCommand::History { fact_id, remote } => {
            Request::new(remote, op::FACT_HISTORY).path(fact_id)
        }
    }
}

fn webhooks(command: WebhookCommand) -> Request {
    match command {
        WebhookCommand::Create {
            endpoint,
            events,
            description,
            remote,
        } => {
            let mut body = json!({"url": endpoint, "events": events});
            set(&mut body, "description", description);
            Request::new(remote, op::CREATE_WEBHOOK).body(body)
        }
        WebhookCommand::List { remote } => Request::new(remote, op::LIST_WEBHOOKS),
        WebhookCommand::Show { webhook_id, remote } => {
            Request::new(remote, op::GET_WEBHOOK).path(webhook_id)
        }
        WebhookCommand::Delete { webhook_id, remote } => {
            Request::new(remote, op::DELETE_WEBHOOK).path(webhook_id)
        }
        WebhookCommand::Enable { webhook_id, remote } => {
            Request::new(remote, op::ENABLE_WEBHOOK).path(webhook_id)
        }
        WebhookCommand::Deliveries {
            webhook_id,
            limit,
            offset,
            remote,
        } => Request::new(remote, op::LIST_DELIVERIES)
            .path(webhook_id)
            .query("limit", limit)
            .query("offset", offset),
    }
}

fn knowledge(command: KnowledgeCommand) -> Request {
    match command {
        KnowledgeCommand::Show { agent, remote } => {
            Request::new(remote, op::KNOWLEDGE_INFO).agent(agent)
        }
        KnowledgeCommand::Documents { agent, remote } => {
            Request::new(remote, op::LIST_DOCUMENTS).agent(agent)
        }
        KnowledgeCommand::Document {
            agent,
            source,
            remote,
        } => Request::new(remote, op::READ_DOCUMENT)
            .agent(agent)
            .query("source", Some(source)),
        KnowledgeCommand::DeleteChunk {
            agent,
            chunk_id,
            remote,
        } => Request::new(remote, op::DELETE_CHUNK)
            .agent(agent)
            .path(chunk_id),
    }
}

/// A JSON file, or standard input for `-`.
fn read_json(path: &std::path::Path, what: &str) -> anyhow::Result<Value> {
    let mut text = String::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("read standard input")?;
    } else {
        text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    }
    serde_json::from_str(&text).with_context(|| format!("{what} must be JSON"))
}

/// A procedure file: YAML, or JSON (which YAML reads too), by its extension.
fn procedure_file(path: &std::path::Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let value: Value = match json {
        true => serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?,
        false => serde_yaml_ng::from_str(&text)
            .with_context(|| format!("{} is not valid YAML", path.display()))?,
    };
    anyhow::ensure!(
        value.is_object(),
        "{} must hold a mapping of fields",
        path.display()
    );
    Ok(value)
}

/// Imports a dump, or past conversations from a JSON file.
async fn import(args: crate::cli::ImportArgs) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("read {}", args.file.display()))?;
    if crate::dumps::is_dump(&text) {
        anyhow::ensure!(
            args.agent.is_none() && args.user.is_none(),
            "{} is a dump: it names its agents and users itself",
            args.file.display()
        );
        return crate::dumps::import(&args.remote.client(), text.into_bytes()).await;
    }
    let (Some(agent), Some(user)) = (args.agent, args.user) else {
        anyhow::bail!(
            "{} is a conversations file: give --agent and --user",
            args.file.display()
        );
    };
    let file: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.file.display()))?;
    let sessions = match file {
        Value::Object(mut object) => object.remove("sessions").unwrap_or(Value::Null),
        list => list,
    };
    anyhow::ensure!(
        sessions.is_array(),
        "{} holds no list of sessions",
        args.file.display()
    );
    let mut body = json!({"user_id": user, "sessions": sessions});
    set(&mut body, "title", args.title);
    Request::new(args.remote, op::IMPORT_CONVERSATION)
        .body(body)
        .body_agent(Some(agent))
        .send()
        .await
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn planned(line: &str) -> Request {
        let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
        match plan(cli.command).unwrap() {
            Plan::Request(request) => request,
            Plan::Own(_) => panic!("{line} is not one request"),
        }
    }

    #[test]
    fn each_command_asks_for_its_operation_with_every_path_value() {
        for (line, operation) in [
            ("octopus agents get support --api-key k", op::GET_AGENT),
            (
                "octopus users facts ann --agent support --api-key k",
                op::LIST_FACTS,
            ),
            (
                "octopus keys revoke t1 k1 --admin-key a",
                op::REVOKE_API_KEY,
            ),
            (
                "octopus knowledge delete-chunk c1 --agent support --api-key k",
                op::DELETE_CHUNK,
            ),
            ("octopus facts history f1 --api-key k", op::FACT_HISTORY),
        ] {
            let request = planned(line);
            assert_eq!(request.operation, operation, "{line}");
            assert_eq!(
                request.path.len(),
                operation.parameters().count(),
                "{line}: {:?}",
                request.path
            );
        }
    }

    #[test]
    fn agents_named_anywhere_are_looked_up_and_other_values_are_kept() {
        let facts = planned("octopus users facts ann --agent support --api-key k");
        assert_eq!(
            facts.path,
            [Arg::Agent("support".into()), Arg::Text("ann".into())]
        );
        let list = planned("octopus conversations list --agent support --user ann --api-key k");
        assert_eq!(
            list.query,
            [
                ("agent_id", Arg::Agent("support".into())),
                ("user_id", Arg::Text("ann".into()))
            ]
        );
        let create = planned("octopus conversations create --agent support --user ann --api-key k");
        assert_eq!(create.body_agent.as_deref(), Some("support"));
        assert_eq!(create.body.unwrap()["user_id"], "ann");
        // Tenants, keys and procedures by name too.
        let revoke = planned("octopus keys revoke default init --admin-key a");
        assert_eq!(
            revoke.path,
            [
                Arg::Tenant("default".into()),
                Arg::Key {
                    tenant: "default".into(),
                    key: "init".into()
                }
            ]
        );
        let approve = planned("octopus procedures approve refunds --api-key k");
        assert_eq!(approve.path, [Arg::Procedure("refunds".into())]);
    }

    #[test]
    fn unset_options_stay_out_of_the_query() {
        let episodes = planned("octopus episodes list --api-key k");
        assert!(episodes.query.is_empty(), "{:?}", episodes.query);
        let deleted = planned("octopus episodes list --deleted --api-key k");
        assert_eq!(deleted.query, [("deleted", Arg::Text("true".into()))]);
    }
}
