//! The shortest way in: `octopus init` sets up a tenant, a key and an agent,
//! and `octopus remember` stores what a user said without naming a
//! conversation.

use anyhow::Context;
use octopus_client::operations as op;
use serde_json::{Value, json};

use crate::cli::{InitArgs, RememberArgs};
use crate::output::print_out;

/// Prints the variables to export, as shell lines; what was made or found
/// goes in comments, so that `eval "$(octopus init)"` takes the output whole.
pub async fn init(args: InitArgs) -> anyhow::Result<()> {
    let admin = args.remote.remote()?.client();
    let tenants = admin.call(op::LIST_TENANTS).send().await?;
    let (tenant, tenant_was) = match named(&tenants, &args.tenant) {
        Some(tenant) => (tenant, "found"),
        None => {
            let body = json!({"name": args.tenant});
            let made = admin.call(op::CREATE_TENANT).json(&body).send().await?;
            (made, "made")
        }
    };
    let tenant_id = id_of(&tenant)?;
    let keys = admin
        .call(op::LIST_API_KEYS)
        .param(&tenant_id)
        .send()
        .await?;
    let live: Vec<&Value> = keys["items"]
        .as_array()
        .map(|items| items.iter().filter(|k| k["revoked_at"].is_null()).collect())
        .unwrap_or_default();
    // The key exported by an earlier `init` serves again when it is still a
    // live key of this tenant: running init twice does not mint a second.
    let mut exported = std::env::var("OCTOPUS_API_KEY")
        .ok()
        .filter(|secret| live.iter().any(|k| is_prefix_of(k, secret)));
    if let Some(secret) = &exported {
        let opens = admin
            .with_key(secret)
            .call(op::LIST_AGENTS)
            .query("limit", 1)
            .send()
            .await;
        if opens.is_err() {
            exported = None;
        }
    }
    let (key, key_was) = match exported {
        Some(secret) => (secret, "reused (OCTOPUS_API_KEY)".to_owned()),
        None => {
            let minted = admin
                .call(op::CREATE_API_KEY)
                .param(&tenant_id)
                .json(&json!({"name": args.key_name}))
                .send()
                .await?;
            let key = minted["key"]
                .as_str()
                .context("the server returned no key")?
                .to_owned();
            let named = 1 + live.iter().filter(|k| k["name"] == args.key_name).count();
            let was = match named {
                1 => "made (its secret is shown only now)".to_owned(),
                n => format!(
                    "made (its secret is shown only now; the tenant holds {n} live keys named {:?}: \
                     `octopus keys list {}` shows them, `octopus keys revoke` retires one)",
                    args.key_name, args.tenant
                ),
            };
            (key, was)
        }
    };

    if args.no_agent {
        return print_out(&format!(
            "# tenant {:?} {tenant_was} ({tenant_id}), no agent, key {:?} {key_was}\n\
             export OCTOPUS_URL={}\nexport OCTOPUS_API_KEY={}\n",
            args.tenant,
            args.key_name,
            shell_quoted(&args.remote.url),
            shell_quoted(&key),
        ));
    }
    let client = admin.with_key(&key);
    let agent_was = match client.agent_id(&args.agent).await {
        Ok(_) => "found",
        Err(_) => {
            let body = json!({
                "name": args.agent,
                "llm": {"provider": args.provider, "model": args.model},
            });
            client.call(op::CREATE_AGENT).json(&body).send().await?;
            "made"
        }
    };
    print_out(&format!(
        "# tenant {:?} {tenant_was} ({tenant_id}), agent {:?} {agent_was}, key {:?} {key_was}\n\
         export OCTOPUS_URL={}\nexport OCTOPUS_API_KEY={}\nexport OCTOPUS_AGENT={}\n",
        args.tenant,
        args.agent,
        args.key_name,
        shell_quoted(&args.remote.url),
        shell_quoted(&key),
        shell_quoted(&args.agent)
    ))
}

/// Appends the text as the user's message to their newest conversation with
/// the agent, or to a new one; answers the stored message.
pub async fn remember(args: RememberArgs) -> anyhow::Result<Value> {
    let client = args.remote.client();
    let agent = client.agent_id(&args.agent).await?;
    let newest = client
        .call(op::LIST_CONVERSATIONS)
        .query("agent_id", &agent)
        .query("user_id", &args.user)
        .query("limit", 1)
        .send()
        .await?;
    let conversation = match newest["items"].get(0) {
        Some(conversation) => id_of(conversation)?,
        None => {
            let body = json!({"agent_id": agent, "user_id": args.user});
            let made = client
                .call(op::CREATE_CONVERSATION)
                .json(&body)
                .send()
                .await?;
            id_of(&made)?
        }
    };
    let body = json!({"role": "user", "content": args.text});
    let stored = client
        .call(op::APPEND_MESSAGES)
        .param(&conversation)
        .json(&body)
        .send()
        .await?;
    // Said where a person sees it, not in the answer a script reads.
    let status = client
        .call(op::STATUS)
        .query("agent_id", &agent)
        .send()
        .await?;
    if status["agent"]["model_callable"] == false {
        eprintln!(
            "note: stored and recalled now; facts and summaries wait for a model: {} ({})",
            status["agent"]["problem"]
                .as_str()
                .unwrap_or("it cannot be called"),
            status["agent"]["model"].as_str().unwrap_or_default()
        );
    }
    Ok(stored["messages"].get(0).cloned().unwrap_or(stored))
}

fn named(list: &Value, name: &str) -> Option<Value> {
    list["items"]
        .as_array()?
        .iter()
        .find(|item| item["name"] == name)
        .cloned()
}

/// Whether the listed key `key` is the one whose secret is `secret`, by the
/// first characters the server shows of it.
fn is_prefix_of(key: &Value, secret: &str) -> bool {
    key["prefix"]
        .as_str()
        .is_some_and(|prefix| !prefix.is_empty() && secret.starts_with(prefix))
}

fn id_of(object: &Value) -> anyhow::Result<String> {
    object["id"]
        .as_str()
        .map(str::to_owned)
        .context("the server's answer has no id")
}

/// `text` as one word for a POSIX shell.
fn shell_quoted(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/@%+=,".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::shell_quoted;

    #[test]
    fn values_are_quoted_for_the_shell_only_when_they_need_it() {
        assert_eq!(shell_quoted("oct_abc123"), "oct_abc123");
        assert_eq!(
            shell_quoted("http://127.0.0.1:7700"),
            "http://127.0.0.1:7700"
        );
        assert_eq!(shell_quoted("my agent"), "'my agent'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
