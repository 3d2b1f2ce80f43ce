//! A turn asked in OpenAI's terms (`POST /v1/chat/completions`): the agent
//! named by the request's `model`, the conversation found for its user, and
//! the client's whole message list, of which only the end is new. Everything
//! else is a turn like any other ([`Octopus::prepare_turn`]).
//!
//! An OpenAI client sends the whole conversation every time. Octopus keeps
//! it already, so it takes from the list only what came after the model's
//! last answer: the user's new message, or the results of the tools the
//! model called. Everything before is the history Octopus has stored, and is
//! not stored again; the client's system messages give way to the agent's
//! system prompt.

use octopus_core::agent::Agent;
use octopus_core::chat::ToolSpec;
use octopus_core::conversation::{ConversationFilter, ConversationSpec};
use octopus_core::page::Page;
use octopus_core::{AgentId, ConversationId, Error as DomainError, TenantId};
use serde_json::Value;

use super::turns::{PreparedTurn, ToolResult, TurnInput};
use crate::error::Result;
use crate::octopus::Octopus;

/// Who wrote a message of the client's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientRole {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of the list an OpenAI client sends.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientMessage {
    pub role: ClientRole,
    /// Its text (the text parts of a list of parts, joined).
    pub content: Option<String>,
    /// For a tool's result: the call it answers.
    pub tool_call_id: Option<String>,
}

/// A chat completion asked of an agent.
#[derive(Clone, Debug, Default)]
pub struct CompletionRequest {
    /// The agent: its id, or its name.
    pub model: String,
    pub user: String,
    /// The conversation to continue; else the user's newest with the agent,
    /// started when there is none.
    pub conversation: Option<ConversationId>,
    pub messages: Vec<ClientMessage>,
    pub tools: Vec<ToolSpec>,
}

/// A completion ready to call the agent's model.
pub struct PreparedCompletion {
    pub agent: Agent,
    pub conversation: ConversationId,
    pub turn: PreparedTurn,
}

impl Octopus {
    /// Finds the agent and the conversation, stores what is new in the
    /// client's list, and assembles the turn's working memory.
    pub async fn prepare_completion(
        &self,
        tenant: TenantId,
        request: CompletionRequest,
    ) -> Result<PreparedCompletion> {
        let input = new_input(&request.messages, request.tools)?;
        if request.user.trim().is_empty() {
            return Err(DomainError::invalid(
                "user",
                "name the user, in `user` or the x-octopus-user header",
            )
            .into());
        }
        let agent = self.find_agent(tenant, &request.model).await?;
        let conversation = match request.conversation {
            Some(id) => {
                let conversation = self.get_conversation(tenant, id).await?;
                if conversation.agent_id != agent.id || conversation.user_id != request.user {
                    return Err(DomainError::invalid(
                        "x-octopus-conversation",
                        format!(
                            "conversation {id} is not between agent `{}` and user `{}`",
                            request.model, request.user
                        ),
                    )
                    .into());
                }
                id
            }
            None => {
                self.users_conversation(tenant, agent.id, &request.user)
                    .await?
            }
        };
        let turn = self.prepare_turn(tenant, conversation, input).await?;
        Ok(PreparedCompletion {
            agent,
            conversation,
            turn,
        })
    }

    /// The tenant's agent with this id, or else this name.
    pub async fn find_agent(&self, tenant: TenantId, model: &str) -> Result<Agent> {
        if let Ok(id) = model.parse::<AgentId>() {
            return self.get_agent(tenant, id).await;
        }
        self.all_agents(tenant)
            .await?
            .into_iter()
            .find(|a| a.name == model)
            .ok_or_else(|| DomainError::not_found(AgentId::KIND, model).into())
    }

    /// Every agent of the tenant, page after page.
    pub async fn all_agents(&self, tenant: TenantId) -> Result<Vec<Agent>> {
        let mut page = Page {
            limit: Page::MAX_LIMIT,
            offset: 0,
        };
        let mut all = Vec::new();
        loop {
            let agents = self.list_agents(tenant, page).await?;
            let last = agents.len() < page.limit as usize;
            all.extend(agents);
            if last {
                return Ok(all);
            }
            page.offset += page.limit;
        }
    }

    /// The user's newest live conversation with the agent, or a new one.
    pub async fn users_conversation(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user: &str,
    ) -> Result<ConversationId> {
        let filter = ConversationFilter {
            agent_id: Some(agent),
            user_id: Some(user.to_owned()),
            include_deleted: false,
            page: Page {
                limit: 1,
                offset: 0,
            },
        };
        if let Some(newest) = self.list_conversations(tenant, &filter).await?.first() {
            return Ok(newest.id);
        }
        let spec = ConversationSpec {
            agent_id: agent,
            user_id: user.to_owned(),
            title: None,
            metadata: serde_json::Map::new(),
        };
        Ok(self.create_conversation(tenant, spec).await?.id)
    }
}

/// What is new in a client's list: the results of the tools the model
/// called, when the list ends with them, or else its last message, which
/// must be the user's.
pub fn new_input(messages: &[ClientMessage], tools: Vec<ToolSpec>) -> Result<TurnInput> {
    let trailing_results: Vec<&ClientMessage> = messages
        .iter()
        .rev()
        .take_while(|m| m.role == ClientRole::Tool)
        .collect();
    if !trailing_results.is_empty() {
        let tool_results = trailing_results
            .into_iter()
            .rev()
            .map(|m| {
                let call = m.tool_call_id.clone().ok_or_else(|| {
                    DomainError::invalid("messages", "a tool message must name its tool_call_id")
                })?;
                Ok(ToolResult {
                    tool_call_id: call,
                    content: Value::String(m.content.clone().unwrap_or_default()),
                    is_error: false,
                    duration_ms: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(TurnInput {
            message: None,
            tool_results,
            tools,
        });
    }
    match messages.last() {
        Some(ClientMessage {
            role: ClientRole::User,
            content: Some(text),
            ..
        }) => Ok(TurnInput {
            message: Some(text.clone()),
            tool_results: Vec::new(),
            tools,
        }),
        _ => Err(DomainError::invalid(
            "messages",
            "must end with the user's new message, or with the results of the tools the model called",
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(role: ClientRole, content: &str) -> ClientMessage {
        ClientMessage {
            role,
            content: Some(content.into()),
            tool_call_id: None,
        }
    }

    fn result(call: &str, content: &str) -> ClientMessage {
        ClientMessage {
            tool_call_id: Some(call.into()),
            ..said(ClientRole::Tool, content)
        }
    }

    #[test]
    fn only_the_last_user_message_is_new() {
        let list = [
            said(ClientRole::System, "Be brief."),
            said(ClientRole::User, "Where is my order?"),
            said(ClientRole::Assistant, "It shipped."),
            said(ClientRole::User, "When will it arrive?"),
        ];
        let input = new_input(&list, Vec::new()).unwrap();
        assert_eq!(input.message.as_deref(), Some("When will it arrive?"));
        assert!(input.tool_results.is_empty());
    }

    #[test]
    fn trailing_tool_results_continue_the_round_in_their_order() {
        let list = [
            said(ClientRole::User, "Where is my order?"),
            said(ClientRole::Assistant, ""),
            result("call_1", "shipped"),
            result("call_2", "FedEx"),
        ];
        let input = new_input(&list, Vec::new()).unwrap();
        assert_eq!(input.message, None);
        let calls: Vec<_> = input
            .tool_results
            .iter()
            .map(|r| r.tool_call_id.as_str())
            .collect();
        assert_eq!(calls, ["call_1", "call_2"]);
        assert_eq!(
            input.tool_results[0].content,
            Value::String("shipped".into())
        );
    }

    #[test]
    fn a_list_that_ends_with_the_model_or_nothing_is_refused_naming_messages() {
        for list in [
            vec![],
            vec![
                said(ClientRole::User, "Hi"),
                said(ClientRole::Assistant, "Hello"),
            ],
            vec![said(ClientRole::System, "Be brief.")],
        ] {
            let error = new_input(&list, Vec::new()).unwrap_err().to_string();
            assert!(error.contains("messages"), "{error}");
        }
        let nameless = [ClientMessage {
            tool_call_id: None,
            ..result("x", "shipped")
        }];
        assert!(new_input(&nameless, Vec::new()).is_err());
    }
}
