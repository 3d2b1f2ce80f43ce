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
        "# tenant {:?} {tenant_was} ({tenant_id}), agent {:?} {agent_was}, key {:?} made (its secret is shown only now)\n\
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
    Ok(stored["messages"].get(0).cloned().unwrap_or(stored))
}

fn named(list: &Value, name: &str) -> Option<Value> {
    list["items"]
        .as_array()?
        .iter()
        .find(|item| item["name"] == name)
        .cloned()
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
