//! A person's conversations from ChatGPT or Claude, imported as their own
//! past with one agent: each exported conversation one conversation of one
//! closed episode, every message at its own time.
//!
//! An import is idempotent: a conversation's id is derived from the tenant,
//! the agent, the user, the format and the export's own id of it, so the
//! same export sent again (or a later export holding it) finds each
//! conversation stored and adds nothing. The whole file is read and every
//! message validated before the first conversation is stored; then each is
//! stored in a transaction of its own, so a large export holds the store's
//! writer one conversation at a time, never for all of them.

use octopus_core::appending::MessageRecord;
use octopus_core::chat_exports::{self, ExportFormat, ExportedConversation};
use octopus_core::conversation::{ConversationSpec, MAX_IMPORT_MESSAGES, validate_user_id};
use octopus_core::{AgentId, ConversationId, Error as DomainError, TenantId, now};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::MessageOrigin;
use crate::error::{Error, Result};
use crate::octopus::Octopus;

/// Whose conversations an export holds, and with which agent they go.
#[derive(Clone, Debug)]
pub struct ChatsImport {
    pub format: ExportFormat,
    pub agent_id: AgentId,
    pub user_id: String,
}

/// What an import of an export did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChatsImported {
    /// Each conversation of the export with something said in it, in the
    /// export's order.
    pub conversations: Vec<ImportedChat>,
    /// How many of them this import stored.
    pub imported: usize,
    /// How many were stored by an earlier import, and left as they are.
    pub already_imported: usize,
    /// Conversations of the export with nothing said in them.
    pub empty: usize,
    /// Messages this import stored.
    pub messages: usize,
}

/// One exported conversation, and where it is in Octopus.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportedChat {
    /// Its place in the export's array of conversations.
    pub index: usize,
    /// The export's own id of the conversation.
    pub export_id: String,
    pub conversation_id: ConversationId,
    pub title: Option<String>,
    /// `imported`, or `already_imported` when an earlier import stored it.
    pub status: ChatStatus,
    /// Messages this import stored of it (none when already imported).
    pub messages: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatStatus {
    Imported,
    AlreadyImported,
}

/// An exported conversation validated and ready to store.
struct Prepared {
    chat: ExportedConversation,
    id: ConversationId,
    records: Vec<MessageRecord>,
}

impl Octopus {
    /// Imports the conversations of an export's `conversations.json`.
    pub async fn import_chats(
        &self,
        tenant: TenantId,
        import: ChatsImport,
        file: impl AsRef<[u8]> + Send + 'static,
    ) -> Result<ChatsImported> {
        validate_user_id(&import.user_id)?;
        let agent = self.active_agent(tenant, import.agent_id).await?;
        // Reading a large file is work for a thread of its own, not for the
        // tasks answering other requests.
        let format = import.format;
        let export = tokio::task::spawn_blocking(move || chat_exports::read(format, file.as_ref()))
            .await
            .map_err(|error| Error::Config(format!("reading the export failed: {error}")))??;
        let total: usize = export.conversations.iter().map(|c| c.messages.len()).sum();
        if total > MAX_IMPORT_MESSAGES {
            return Err(DomainError::invalid(
                "body",
                format!("{total} messages; one request imports at most {MAX_IMPORT_MESSAGES}: send the export in parts"),
            )
            .into());
        }
        let mut report = ChatsImported {
            conversations: Vec::with_capacity(export.conversations.len()),
            imported: 0,
            already_imported: 0,
            empty: export.empty,
            messages: 0,
        };
        let mut waiting = Vec::new();
        for chat in export.conversations {
            let id = chat_id(tenant, &import, &chat.export_id);
            if self.store.get_conversation(tenant, id).await.is_ok() {
                report.already(&chat, id);
                continue;
            }
            let within = format!("conversations[{}]", chat.index);
            let records = self
                .message_records(
                    tenant,
                    chat.messages.clone(),
                    "messages",
                    MessageOrigin::Import,
                    &agent.memory,
                )
                .await
                .map_err(|error| match error {
                    Error::Domain(domain) => domain.within(&within).into(),
                    other => other,
                })?;
            waiting.push(Prepared { chat, id, records });
        }
        // A job per message, and a summary per conversation.
        let incoming: usize = waiting.iter().map(|p| p.records.len() + 1).sum();
        self.check_memory_quota(tenant, incoming as u64).await?;
        for prepared in waiting {
            self.store_chat(tenant, &import, prepared, &mut report)
                .await?;
        }
        report.conversations.sort_by_key(|chat| chat.index);
        tracing::info!(tenant_id = %tenant, format = %import.format, imported = report.imported,
            already_imported = report.already_imported, messages = report.messages, "imported chats");
        Ok(report)
    }

    async fn store_chat(
        &self,
        tenant: TenantId,
        import: &ChatsImport,
        Prepared { chat, id, records }: Prepared,
        report: &mut ChatsImported,
    ) -> Result<()> {
        let mut metadata = Map::new();
        metadata.insert("imported_from".into(), Value::from(import.format.as_str()));
        metadata.insert("export_id".into(), Value::from(chat.export_id.clone()));
        let spec = ConversationSpec {
            agent_id: import.agent_id,
            user_id: import.user_id.clone(),
            title: chat.title.clone(),
            metadata,
        };
        let mut conversation = self.new_conversation(tenant, spec).await?;
        conversation.id = id;
        let times = records.iter().map(|record| record.timestamp);
        if let (Some(first), Some(last)) = (times.clone().min(), times.max()) {
            conversation.created_at = first;
            conversation.updated_at = last;
        }
        let count = records.len();
        match self
            .store
            .import_conversation(tenant, &conversation, vec![records], now())
            .await
        {
            Ok((_, messages)) => {
                self.quotas.queued_more(tenant, count as u64 + 1);
                self.work_signal.poke();
                report.imported += 1;
                report.messages += messages;
                report.conversations.push(ImportedChat {
                    index: chat.index,
                    export_id: chat.export_id,
                    conversation_id: id,
                    title: chat.title,
                    status: ChatStatus::Imported,
                    messages,
                });
                Ok(())
            }
            // The same export imported at once by another request: its
            // conversation is stored, by that request.
            Err(error) if self.store.get_conversation(tenant, id).await.is_ok() => {
                tracing::debug!(%error, conversation_id = %id, "conversation imported meanwhile");
                report.already(&chat, id);
                Ok(())
            }
            Err(error) => Err(error.into()),
        }
    }
}

impl ChatsImported {
    fn already(&mut self, chat: &ExportedConversation, id: ConversationId) {
        self.already_imported += 1;
        self.conversations.push(ImportedChat {
            index: chat.index,
            export_id: chat.export_id.clone(),
            conversation_id: id,
            title: chat.title.clone(),
            status: ChatStatus::AlreadyImported,
            messages: 0,
        });
    }
}

/// The id an exported conversation has in Octopus: the same for the same
/// tenant, agent, user, service and conversation, in any export.
fn chat_id(tenant: TenantId, import: &ChatsImport, export_id: &str) -> ConversationId {
    let mut hash = Sha256::new();
    for part in [
        tenant.to_string().as_str(),
        &import.agent_id.to_string(),
        &import.user_id,
        import.format.as_str(),
        export_id,
    ] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    ConversationId(uuid::Builder::from_custom_bytes(bytes).into_uuid())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(user: &str) -> ChatsImport {
        ChatsImport {
            format: ExportFormat::Chatgpt,
            agent_id: AgentId(uuid::Uuid::nil()),
            user_id: user.into(),
        }
    }

    #[test]
    fn an_exported_conversation_has_one_id_per_user() {
        let tenant = TenantId(uuid::Uuid::nil());
        let ana = chat_id(tenant, &import("ana"), "c1");
        assert_eq!(ana, chat_id(tenant, &import("ana"), "c1"));
        assert_ne!(ana, chat_id(tenant, &import("bo"), "c1"));
        assert_ne!(ana, chat_id(tenant, &import("ana"), "c2"));
        // Parts are delimited: moving a character between them changes the id.
        assert_ne!(
            chat_id(tenant, &import("ana"), "bc1"),
            chat_id(tenant, &import("anab"), "c1")
        );
    }
}
