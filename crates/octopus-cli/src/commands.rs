//! The subcommands that talk to a running server. Each prints the server's JSON
//! answer, pretty, on standard output.

use std::io::Read;

use anyhow::Context;
use reqwest::Method;
use serde_json::{Value, json};

use crate::cli::{
    AgentCommand, Command, ConversationCommand, EpisodeCommand, FactCommand, KeyCommand,
    KnowledgeCommand, MessageCommand, ProcedureCommand, SearchCommand, TenantCommand, TurnArgs,
    UserCommand, WebhookCommand,
};
use crate::client::{Client, encode_path, query};

pub async fn run(command: Command) -> anyhow::Result<()> {
    let answer = match command {
        Command::Export(args) => return crate::dumps::export(args).await,
        Command::Init(args) => return crate::start::init(args).await,
        Command::Remember(args) => crate::start::remember(args).await?,
        Command::Serve(_) | Command::Migrate(_) | Command::Chat(_) | Command::Mcp(_) => {
            unreachable!("handled by main")
        }
        Command::Tenants(command) => tenants(command).await?,
        Command::Keys(command) => keys(command).await?,
        Command::Agents(command) => agents(command).await?,
        Command::Conversations(command) => conversations(command).await?,
        Command::Messages(command) => messages(command).await?,
        Command::Episodes(command) => episodes(command).await?,
        Command::Procedures(command) => procedures(command).await?,
        Command::Users(UserCommand::List {
            agent,
            limit,
            offset,
            remote,
        }) => {
            let client = Client::new(&remote);
            let agent = client.agent_id(&agent).await?;
            let path = format!("/v1/agents/{}/users", encode_path(&agent));
            let params = query(&[
                ("limit", limit.map(|l| l.to_string())),
                ("offset", offset.map(|o| o.to_string())),
            ]);
            client.send(Method::GET, &path, &params, None).await?
        }
        Command::Users(UserCommand::Forget {
            user_id,
            agent,
            remote,
        }) => {
            let client = Client::new(&remote);
            let agent = client.maybe_agent_id(agent).await?;
            let path = format!("/v1/users/{}", encode_path(&user_id));
            client
                .send(Method::DELETE, &path, &query(&[("agent_id", agent)]), None)
                .await?
        }
        Command::Users(UserCommand::Facts {
            user_id,
            agent,
            include_replaced,
            category,
            key,
            limit,
            offset,
            remote,
        }) => {
            let client = Client::new(&remote);
            let agent = client.agent_id(&agent).await?;
            let path = format!(
                "/v1/agents/{}/users/{}/facts",
                encode_path(&agent),
                encode_path(&user_id)
            );
            let params = query(&[
                (
                    "include_replaced",
                    include_replaced.then(|| "true".to_owned()),
                ),
                ("category", category),
                ("key", key),
                ("limit", limit.map(|l| l.to_string())),
                ("offset", offset.map(|o| o.to_string())),
            ]);
            client.send(Method::GET, &path, &params, None).await?
        }
        Command::Facts(command) => facts(command).await?,
        Command::Webhooks(command) => webhooks(command).await?,
        Command::Search(SearchCommand::Knowledge(args)) => {
            let mut body = json!({"query": args.query, "mode": args.mode});
            for (field, value) in [
                ("source", args.source.map(Value::from)),
                ("category", args.category.map(Value::from)),
                ("indexed_from", args.indexed_from.map(Value::from)),
                ("indexed_to", args.indexed_to.map(Value::from)),
            ]
            .into_iter()
            .chain([
                ("top_k", args.top_k.map(Value::from)),
                ("min_score", args.min_score.map(Value::from)),
            ]) {
                if let Some(value) = value {
                    body[field] = value;
                }
            }
            let client = Client::new(&args.remote);
            let agent = client.agent_id(&args.agent).await?;
            let path = format!("/v1/agents/{}/knowledge/search", encode_path(&agent));
            client.send(Method::POST, &path, &[], Some(body)).await?
        }
        Command::Ingest(args) => crate::ingest::run(args).await?,
        Command::Recall(args) => {
            let mut body = json!({
                "user_id": args.user, "query": args.query, "mode": args.mode,
                "top_k": args.top_k, "neighbours": args.neighbours,
            });
            for (field, value) in [("from", args.from), ("to", args.to)] {
                if let Some(value) = value {
                    body[field] = Value::from(value);
                }
            }
            if let Some(days) = args.recency_half_life_days {
                body["recency_half_life_days"] = Value::from(days);
            }
            if let Some(min_score) = args.min_score {
                body["min_score"] = Value::from(min_score);
            }
            if let Some(include) = args.include_summaries {
                body["include_summaries"] = Value::from(include);
            }
            let client = Client::new(&args.remote);
            let agent = client.agent_id(&args.agent).await?;
            let path = format!("/v1/agents/{}/recall", encode_path(&agent));
            client.send(Method::POST, &path, &[], Some(body)).await?
        }
        Command::Context(args) => {
            let path = format!("/v1/conversations/{}/context", args.conversation);
            Client::new(&args.remote)
                .send(
                    Method::POST,
                    &path,
                    &[],
                    Some(json!({"message": args.message})),
                )
                .await?
        }
        Command::Import(args) => import(args).await?,
        Command::Knowledge(command) => knowledge(command).await?,
        Command::Turn(args) => turn(args).await?,
        Command::Search(SearchCommand::Messages(args)) => {
            let client = Client::new(&args.remote);
            let query = query(&[
                ("q", Some(args.query)),
                ("agent_id", client.maybe_agent_id(args.agent).await?),
                ("user_id", args.user),
                ("conversation_id", args.conversation),
                ("from", args.from),
                ("to", args.to),
                ("limit", Some(args.limit.to_string())),
            ]);
            client
                .send(Method::GET, "/v1/messages/search", &query, None)
                .await?
        }
    };
    if !answer.is_null() {
        print_out(&format!("{}\n", serde_json::to_string_pretty(&answer)?))?;
    }
    Ok(())
}

/// Writes `text` to standard output. A reader that closed the pipe early
/// (`octopus … | head -2`) took what it wanted: that is no error, and the
/// command ends quietly with success, as other command-line tools do.
pub(crate) fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        outcome => Ok(outcome?),
    }
}

async fn tenants(command: TenantCommand) -> anyhow::Result<Value> {
    match command {
        TenantCommand::Create { name, remote } => {
            Client::new(&remote.remote()?)
                .send(
                    Method::POST,
                    "/v1/tenants",
                    &[],
                    Some(json!({"name": name})),
                )
                .await
        }
        TenantCommand::List { remote } => {
            Client::new(&remote.remote()?)
                .send(Method::GET, "/v1/tenants", &[], None)
                .await
        }
        TenantCommand::Get { tenant_id, remote } => {
            let path = format!("/v1/tenants/{}", encode_path(&tenant_id));
            Client::new(&remote.remote()?)
                .send(Method::GET, &path, &[], None)
                .await
        }
    }
}

async fn knowledge(command: KnowledgeCommand) -> anyhow::Result<Value> {
    let (agent, remote) = match &command {
        KnowledgeCommand::Show { agent, remote }
        | KnowledgeCommand::Documents { agent, remote }
        | KnowledgeCommand::Document { agent, remote, .. }
        | KnowledgeCommand::DeleteChunk { agent, remote, .. } => (agent, remote),
    };
    let client = Client::new(remote);
    let knowledge = format!(
        "/v1/agents/{}/knowledge",
        encode_path(&client.agent_id(agent).await?)
    );
    match command {
        KnowledgeCommand::Show { .. } => client.send(Method::GET, &knowledge, &[], None).await,
        KnowledgeCommand::Documents { .. } => {
            let path = format!("{knowledge}/documents");
            client.send(Method::GET, &path, &[], None).await
        }
        KnowledgeCommand::Document { source, .. } => {
            let path = format!("{knowledge}/document");
            client
                .send(Method::GET, &path, &[("source", source)], None)
                .await
        }
        KnowledgeCommand::DeleteChunk { chunk_id, .. } => {
            let path = format!("{knowledge}/chunks/{}", encode_path(&chunk_id));
            client.send(Method::DELETE, &path, &[], None).await
        }
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

async fn turn(args: TurnArgs) -> anyhow::Result<Value> {
    let mut body = json!({});
    if let Some(message) = args.message {
        body["message"] = json!(message);
    }
    if let Some(path) = &args.tools {
        body["tools"] = read_json(path, "--tools")?;
    }
    if let Some(path) = &args.tool_results {
        body["tool_results"] = read_json(path, "--tool-results")?;
    }
    let path = format!(
        "/v1/conversations/{}/turns",
        encode_path(&args.conversation)
    );
    Client::new(&args.remote)
        .send(Method::POST, &path, &[], Some(body))
        .await
}

async fn keys(command: KeyCommand) -> anyhow::Result<Value> {
    match command {
        KeyCommand::Create {
            tenant_id,
            name,
            remote,
        } => {
            let path = format!("/v1/tenants/{tenant_id}/keys");
            Client::new(&remote.remote()?)
                .send(Method::POST, &path, &[], Some(json!({"name": name})))
                .await
        }
        KeyCommand::List { tenant_id, remote } => {
            Client::new(&remote.remote()?)
                .send(
                    Method::GET,
                    &format!("/v1/tenants/{tenant_id}/keys"),
                    &[],
                    None,
                )
                .await
        }
        KeyCommand::Revoke {
            tenant_id,
            key_id,
            remote,
        } => {
            let path = format!("/v1/tenants/{tenant_id}/keys/{key_id}");
            Client::new(&remote.remote()?)
                .send(Method::DELETE, &path, &[], None)
                .await
        }
    }
}

async fn agents(command: AgentCommand) -> anyhow::Result<Value> {
    match command {
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
            let mut body = json!({"name": name, "system_prompt": system_prompt, "llm": {"provider": provider, "model": model}});
            for (field, value) in [
                ("base_url", base_url),
                ("deployment", deployment),
                ("api_version", api_version),
                ("api_key_env", api_key_env),
            ] {
                if let Some(value) = value {
                    body["llm"][field] = json!(value);
                }
            }
            if let Some(temperature) = temperature {
                body["llm"]["temperature"] = json!(temperature);
            }
            if let Some(memory) = memory {
                body["memory"] = serde_json::from_str(&memory).context("--memory must be JSON")?;
            }
            Client::new(&remote)
                .send(Method::POST, "/v1/agents", &[], Some(body))
                .await
        }
        AgentCommand::List { remote } => {
            Client::new(&remote)
                .send(Method::GET, "/v1/agents", &[], None)
                .await
        }
        AgentCommand::Get { agent_id, remote } => {
            let client = Client::new(&remote);
            let path = format!("/v1/agents/{}", client.agent_id(&agent_id).await?);
            client.send(Method::GET, &path, &[], None).await
        }
        AgentCommand::Update {
            agent_id,
            patch,
            remote,
        } => {
            let patch: Value = serde_json::from_str(&patch).context("the patch must be JSON")?;
            let client = Client::new(&remote);
            let path = format!("/v1/agents/{}", client.agent_id(&agent_id).await?);
            client.send(Method::PATCH, &path, &[], Some(patch)).await
        }
        AgentCommand::Delete { agent_id, remote } => {
            let client = Client::new(&remote);
            let path = format!("/v1/agents/{}", client.agent_id(&agent_id).await?);
            client.send(Method::DELETE, &path, &[], None).await
        }
    }
}

async fn conversations(command: ConversationCommand) -> anyhow::Result<Value> {
    match command {
        ConversationCommand::Create {
            agent,
            user,
            title,
            remote,
        } => {
            let client = Client::new(&remote);
            let agent = client.agent_id(&agent).await?;
            let body = json!({"agent_id": agent, "user_id": user, "title": title});
            client
                .send(Method::POST, "/v1/conversations", &[], Some(body))
                .await
        }
        ConversationCommand::List {
            agent,
            user,
            remote,
        } => {
            let client = Client::new(&remote);
            let agent = client.maybe_agent_id(agent).await?;
            let query = query(&[("agent_id", agent), ("user_id", user)]);
            client
                .send(Method::GET, "/v1/conversations", &query, None)
                .await
        }
        ConversationCommand::Get {
            conversation_id,
            remote,
        } => {
            Client::new(&remote)
                .send(
                    Method::GET,
                    &format!("/v1/conversations/{conversation_id}"),
                    &[],
                    None,
                )
                .await
        }
        ConversationCommand::Delete {
            conversation_id,
            remote,
        } => {
            Client::new(&remote)
                .send(
                    Method::DELETE,
                    &format!("/v1/conversations/{conversation_id}"),
                    &[],
                    None,
                )
                .await
        }
    }
}

async fn messages(command: MessageCommand) -> anyhow::Result<Value> {
    let (conversation_id, role, content, file, remote) = match command {
        MessageCommand::Append {
            conversation_id,
            role,
            content,
            file,
            remote,
        } => (conversation_id, role, content, file, remote),
        MessageCommand::Erase {
            message_id,
            reason,
            remote,
        } => {
            let path = format!("/v1/messages/{}", encode_path(&message_id));
            return Client::new(&remote)
                .send(Method::DELETE, &path, &query(&[("reason", reason)]), None)
                .await;
        }
    };
    let body = match (role, content, file) {
        (Some(role), Some(content), None) => json!({"role": role, "content": content}),
        (None, None, Some(path)) => read_json(&path, "the batch")?,
        _ => anyhow::bail!("give --role and --content, or --file"),
    };
    let path = format!("/v1/conversations/{conversation_id}/messages");
    Client::new(&remote)
        .send(Method::POST, &path, &[], Some(body))
        .await
}

async fn episodes(command: EpisodeCommand) -> anyhow::Result<Value> {
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
        } => {
            let client = Client::new(&remote);
            let query = query(&[
                ("agent_id", client.maybe_agent_id(agent).await?),
                ("user_id", user),
                ("conversation_id", conversation),
                ("from", from),
                ("to", to),
                ("deleted", deleted.then(|| "true".to_owned())),
                ("archived", archived.then(|| "true".to_owned())),
            ]);
            client.send(Method::GET, "/v1/episodes", &query, None).await
        }
        EpisodeCommand::Get { episode_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::GET,
                    &format!("/v1/episodes/{episode_id}"),
                    &[],
                    None,
                )
                .await
        }
        EpisodeCommand::Close {
            episode_id,
            reason,
            remote,
        } => {
            let path = format!("/v1/episodes/{episode_id}/close");
            Client::new(&remote)
                .send(
                    Method::POST,
                    &path,
                    &[],
                    Some(json!({"end_reason": reason})),
                )
                .await
        }
        EpisodeCommand::Summary {
            episode_id,
            text,
            key_facts,
            remote,
        } => {
            let path = format!("/v1/episodes/{episode_id}/summary");
            Client::new(&remote)
                .send(
                    Method::PUT,
                    &path,
                    &[],
                    Some(json!({"summary": text, "key_facts": key_facts})),
                )
                .await
        }
        EpisodeCommand::Delete { episode_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::DELETE,
                    &format!("/v1/episodes/{episode_id}"),
                    &[],
                    None,
                )
                .await
        }
        EpisodeCommand::Restore { episode_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::POST,
                    &format!("/v1/episodes/{episode_id}/restore"),
                    &[],
                    None,
                )
                .await
        }
        EpisodeCommand::Purge { episode_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::POST,
                    &format!("/v1/episodes/{episode_id}/purge"),
                    &[],
                    None,
                )
                .await
        }
    }
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

async fn procedures(command: ProcedureCommand) -> anyhow::Result<Value> {
    let at = |id: &str, action: &str| format!("/v1/procedures/{id}/{action}");
    match command {
        ProcedureCommand::Create {
            file,
            agent,
            remote,
        } => {
            let mut body = procedure_file(&file)?;
            let client = Client::new(&remote);
            if let Some(agent) = agent {
                body["agent_id"] = json!(client.agent_id(&agent).await?);
            }
            client
                .send(Method::POST, "/v1/procedures", &[], Some(body))
                .await
        }
        ProcedureCommand::List {
            agent,
            shared,
            active,
            approved,
            text,
            remote,
        } => {
            let client = Client::new(&remote);
            let query = query(&[
                ("agent_id", client.maybe_agent_id(agent).await?),
                ("shared", shared.then(|| "true".to_owned())),
                ("active", active.map(|a| a.to_string())),
                ("approved", approved.map(|a| a.to_string())),
                ("text", text),
            ]);
            client
                .send(Method::GET, "/v1/procedures", &query, None)
                .await
        }
        ProcedureCommand::Get {
            procedure_id,
            remote,
        } => {
            Client::new(&remote)
                .send(
                    Method::GET,
                    &format!("/v1/procedures/{procedure_id}"),
                    &[],
                    None,
                )
                .await
        }
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
            if let Some(active) = active {
                patch["is_active"] = json!(active);
            }
            anyhow::ensure!(
                patch.as_object().is_some_and(|o| !o.is_empty()),
                "nothing to change: give --file or --active"
            );
            Client::new(&remote)
                .send(
                    Method::PATCH,
                    &format!("/v1/procedures/{procedure_id}"),
                    &[],
                    Some(patch),
                )
                .await
        }
        ProcedureCommand::Approve {
            procedure_id,
            remote,
        } => {
            Client::new(&remote)
                .send(Method::POST, &at(&procedure_id, "approve"), &[], None)
                .await
        }
        ProcedureCommand::Reject {
            procedure_id,
            remote,
        } => {
            Client::new(&remote)
                .send(Method::POST, &at(&procedure_id, "reject"), &[], None)
                .await
        }
        ProcedureCommand::Versions {
            procedure_id,
            remote,
        } => {
            Client::new(&remote)
                .send(Method::GET, &at(&procedure_id, "versions"), &[], None)
                .await
        }
        ProcedureCommand::Rollback {
            procedure_id,
            version,
            remote,
        } => {
            Client::new(&remote)
                .send(
                    Method::POST,
                    &at(&procedure_id, "rollback"),
                    &[],
                    Some(json!({"version": version})),
                )
                .await
        }
        ProcedureCommand::Delete {
            procedure_id,
            remote,
        } => {
            Client::new(&remote)
                .send(
                    Method::DELETE,
                    &format!("/v1/procedures/{procedure_id}"),
                    &[],
                    None,
                )
                .await
        }
        ProcedureCommand::Propose { episode_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::POST,
                    &format!("/v1/episodes/{episode_id}/procedures/propose"),
                    &[],
                    None,
                )
                .await
        }
    }
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
        let client = Client::new(&args.remote);
        return crate::dumps::import(&client, text.into_bytes()).await;
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
    let client = Client::new(&args.remote);
    let agent = client.agent_id(&agent).await?;
    let mut body = json!({"agent_id": agent, "user_id": user, "sessions": sessions});
    if let Some(title) = args.title {
        body["title"] = Value::from(title);
    }
    client
        .send(Method::POST, "/v1/conversations/import", &[], Some(body))
        .await
}

async fn webhooks(command: WebhookCommand) -> anyhow::Result<Value> {
    let path = |id: &str| format!("/v1/webhooks/{}", encode_path(id));
    Ok(match command {
        WebhookCommand::Create {
            endpoint,
            events,
            description,
            remote,
        } => {
            let mut body = json!({"url": endpoint, "events": events});
            if let Some(description) = description {
                body["description"] = description.into();
            }
            Client::new(&remote)
                .send(Method::POST, "/v1/webhooks", &[], Some(body))
                .await?
        }
        WebhookCommand::List { remote } => {
            Client::new(&remote)
                .send(Method::GET, "/v1/webhooks", &[], None)
                .await?
        }
        WebhookCommand::Show { webhook_id, remote } => {
            Client::new(&remote)
                .send(Method::GET, &path(&webhook_id), &[], None)
                .await?
        }
        WebhookCommand::Delete { webhook_id, remote } => {
            Client::new(&remote)
                .send(Method::DELETE, &path(&webhook_id), &[], None)
                .await?
        }
        WebhookCommand::Enable { webhook_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::POST,
                    &format!("{}/enable", path(&webhook_id)),
                    &[],
                    None,
                )
                .await?
        }
        WebhookCommand::Deliveries {
            webhook_id,
            limit,
            offset,
            remote,
        } => {
            let params = query(&[
                ("limit", limit.map(|l| l.to_string())),
                ("offset", offset.map(|o| o.to_string())),
            ]);
            Client::new(&remote)
                .send(
                    Method::GET,
                    &format!("{}/deliveries", path(&webhook_id)),
                    &params,
                    None,
                )
                .await?
        }
    })
}

async fn facts(command: FactCommand) -> anyhow::Result<Value> {
    let path = |id: &str| format!("/v1/facts/{}", encode_path(id));
    Ok(match command {
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
            let client = Client::new(&remote);
            let agent = client.agent_id(&agent).await?;
            let mut body = json!({"text": text});
            for (field, value) in [
                ("category", category),
                ("key", key),
                ("valid_from", valid_from),
                ("reason", reason),
            ] {
                if let Some(value) = value {
                    body[field] = value.into();
                }
            }
            let path = format!(
                "/v1/agents/{}/users/{}/facts",
                encode_path(&agent),
                encode_path(&user_id)
            );
            client.send(Method::POST, &path, &[], Some(body)).await?
        }
        FactCommand::Show { fact_id, remote } => {
            Client::new(&remote)
                .send(Method::GET, &path(&fact_id), &[], None)
                .await?
        }
        FactCommand::Correct {
            fact_id,
            text,
            valid_from,
            reason,
            remote,
        } => {
            let mut body = json!({"text": text});
            if let Some(valid_from) = valid_from {
                body["valid_from"] = valid_from.into();
            }
            if let Some(reason) = reason {
                body["reason"] = reason.into();
            }
            Client::new(&remote)
                .send(Method::PATCH, &path(&fact_id), &[], Some(body))
                .await?
        }
        FactCommand::Delete {
            fact_id,
            reason,
            remote,
        } => {
            Client::new(&remote)
                .send(
                    Method::DELETE,
                    &path(&fact_id),
                    &query(&[("reason", reason)]),
                    None,
                )
                .await?
        }
        FactCommand::History { fact_id, remote } => {
            Client::new(&remote)
                .send(
                    Method::GET,
                    &format!("{}/history", path(&fact_id)),
                    &[],
                    None,
                )
                .await?
        }
    })
}
