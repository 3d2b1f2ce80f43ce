//! Export and import of dumps (see `octopus_core::dump`): a tenant's data,
//! or one user's, as JSON Lines.

use std::collections::HashMap;
use std::io::BufRead;

use octopus_core::agent::AgentSpec;
use octopus_core::conversation::validate_user_id;
use octopus_core::dump::{
    DumpEnd, DumpHeader, DumpRecord, DumpedChunk, DumpedProcedure, ImportCounts,
};
use octopus_core::embedding::Embedder;
use octopus_core::procedure::ProcedureFilter;
use octopus_core::store::Page;
use octopus_core::{AgentId, Error as DomainError, TenantId, now};
use tokio::sync::mpsc;

use crate::embedding_stats::EmbeddingPurpose;
use crate::error::{Error, Result};
use crate::octopus::Octopus;

fn spool_failed(error: std::io::Error) -> Error {
    tracing::warn!(%error, "writing an export's spool file failed");
    Error::Config(format!("the export could not be written out: {error}"))
}

/// Lines of a dump a reader has not taken yet; the export waits beyond this.
const EXPORT_BUFFER: usize = 256;
/// Records parsed ahead of the store's transaction.
const IMPORT_BUFFER: usize = 256;
/// A line longer than this is refused before it is parsed.
const MAX_LINE_BYTES: usize = 4 << 20;

/// Where an import goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportInto {
    /// The dump's own tenant, created when it does not exist (the admin's
    /// import).
    DumpTenant,
    /// This tenant, whatever tenant the dump came from (a tenant's import).
    Tenant(TenantId),
}

/// What an import stored, and where.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportReport {
    pub tenant_id: TenantId,
    #[serde(flatten)]
    pub counts: ImportCounts,
    /// For a tenant's import (a copy with new ids): the new id of each
    /// agent and conversation, by its id in the dump.
    pub new_ids: Option<NewIds>,
}

/// Old ids to new, of what a client keeps ids of.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct NewIds {
    pub agents: std::collections::BTreeMap<AgentId, AgentId>,
    pub conversations:
        std::collections::BTreeMap<octopus_core::ConversationId, octopus_core::ConversationId>,
    /// Agents renamed because the tenant had one of that name: old to new.
    pub agent_names: std::collections::BTreeMap<String, String>,
    /// Shared procedures renamed for the same reason.
    pub procedure_names: std::collections::BTreeMap<String, String>,
}

impl Octopus {
    /// The tenant's dump (with `user`, that user's), line by line, each ending
    /// in a newline: the header, the records from one snapshot, the end
    /// record. An error midway ends the stream with it, and no end record.
    pub async fn export_dump(
        &self,
        tenant: TenantId,
        user: Option<String>,
    ) -> Result<mpsc::Receiver<Result<String>>> {
        if let Some(user) = &user {
            validate_user_id(user)?;
        }
        self.store.get_tenant(tenant).await?;
        let procedure_model = self.procedure_model(tenant, user.is_some()).await?;
        let (lines, receiver) = mpsc::channel(EXPORT_BUFFER);
        let header = DumpRecord::Header(DumpHeader::new(tenant, user.clone(), now()));
        lines
            .send(Ok(line(&header)))
            .await
            .map_err(|_| Error::Config("export reader gone".into()))?;
        let store = self.store.clone();
        let end_lines = lines.clone();
        let exporting = tokio::spawn(async move {
            // Read into a spool file, then sent from it: the snapshot lasts
            // as long as reading the data does, however slowly the client
            // reads (see `crate::spool`).
            let (writer, spooled) = crate::spool::spool().map_err(spool_failed)?;
            // Shared with the sink, so that it can be flushed (and its
            // errors seen) once the store has read everything.
            let writer = std::sync::Arc::new(std::sync::Mutex::new(writer));
            let sink_writer = writer.clone();
            let sink = Box::new(move |mut record: DumpRecord| {
                if let DumpRecord::Procedure(procedure) = &mut record {
                    for embedding in procedure
                        .versions
                        .iter_mut()
                        .filter_map(|v| v.embedding.as_mut())
                    {
                        embedding.model.clone_from(&procedure_model);
                    }
                }
                crate::spool::lock(&sink_writer).line(&line(&record))
            });
            let records = match store.export_records(tenant, user, sink).await {
                Ok(records) => records,
                Err(error) => {
                    tracing::warn!(%error, tenant_id = %tenant, "export failed midway");
                    return Err(error.into());
                }
            };
            crate::spool::lock(&writer).finish().map_err(spool_failed)?;
            let sent = tokio::task::spawn_blocking(move || {
                crate::spool::read_back(spooled, |line| lines.blocking_send(Ok(line)).is_ok())
            })
            .await;
            match sent {
                Ok(Ok(())) => Ok(line(&DumpRecord::End(DumpEnd {
                    records: records + 1,
                }))),
                Ok(Err(error)) => Err(spool_failed(error)),
                Err(failure) => Err(Error::Config(format!("the export stopped: {failure}"))),
            }
        });
        // The last line is the end record or an error, even if the export
        // panicked: the reader never takes a cut dump for a whole one.
        tokio::spawn(async move {
            let end = exporting.await.unwrap_or_else(|failure| {
                tracing::error!(%failure, tenant_id = %tenant, "export failed midway");
                Err(Error::Config(
                    "the export failed inside the server; see its log".into(),
                ))
            });
            let _ = end_lines.send(end).await;
        });
        Ok(receiver)
    }

    /// The model of the tenant's procedure vectors: this server's embedder's,
    /// which made them. Loaded only when the dump holds procedures.
    async fn procedure_model(&self, tenant: TenantId, one_user: bool) -> Result<String> {
        if one_user {
            return Ok(String::new());
        }
        let any = ProcedureFilter {
            page: Page {
                limit: 1,
                offset: 0,
            },
            ..ProcedureFilter::default()
        };
        if self.store.list_procedures(tenant, &any).await?.is_empty() {
            return Ok(String::new());
        }
        Ok(match self.embedder().await {
            Ok(embedder) => embedder.model().to_owned(),
            // Unknown: an import embeds them again.
            Err(_) => "unknown".into(),
        })
    }

    /// Imports a dump read from `dump`, in one transaction: everything or,
    /// on any error, nothing. Records are parsed and checked one by one as
    /// the store takes them. Vectors of knowledge chunks and procedures are
    /// kept when this server's embedding model made them, embedded again
    /// otherwise; memory vectors are queued, as bulk work. Into the dump's
    /// own tenant (the admin's import) ids are kept; into a tenant (its own
    /// import) everything gets new ids, so that the import never meets an
    /// id of another tenant's, nor says whether one exists.
    pub async fn import_dump(
        &self,
        into: ImportInto,
        mut dump: impl BufRead + Send + 'static,
    ) -> Result<ImportReport> {
        let mut reader = DumpReader::default();
        let header = match reader.next(&mut dump)? {
            Some(DumpRecord::Header(header)) => header,
            _ => {
                return Err(
                    DomainError::invalid("dump", "line 1: a dump starts with its header").into(),
                );
            }
        };
        header.validate()?;
        let tenant = match into {
            ImportInto::DumpTenant => header.tenant_id,
            ImportInto::Tenant(tenant) => tenant,
        };
        let (records, received) = mpsc::channel::<octopus_core::Result<DumpRecord>>(IMPORT_BUFFER);
        let store = self.store.clone();
        let stored = tokio::spawn(async move {
            let mut received = received;
            let iter = std::iter::from_fn(move || received.blocking_recv());
            store.import_records(tenant, Box::new(iter), now()).await
        });
        let mut prepare = Preparation::default();
        let (mut ids, mut names) = match into {
            ImportInto::DumpTenant => (None, None),
            ImportInto::Tenant(tenant) => (
                Some(octopus_core::dump::IdMap::default()),
                Some(super::import_names::ImportNames::of(self, tenant).await?),
            ),
        };
        // The line each record came from, by its number in the dump (the
        // header's first), to name the line in the store's errors.
        let mut lines = vec![reader.line];
        let fed = async {
            records
                .send(Ok(DumpRecord::Header(header)))
                .await
                .map_err(|_| ())?;
            loop {
                let record = match reader.next(&mut dump) {
                    Ok(Some(record)) => {
                        lines.push(reader.line);
                        let (line, kind) = (reader.line, record.kind());
                        let record = match (ids.as_mut(), names.as_mut()) {
                            (Some(ids), Some(names)) => names.rename(ids.remap(record)),
                            _ => record,
                        };
                        self.prepare(tenant, record, &mut prepare)
                            .await
                            .map_err(|error| at_line(error, line, kind))
                    }
                    Ok(None) => return Ok::<(), ()>(()),
                    Err(error) => Err(error),
                };
                let failed = record.is_err();
                let item = record.map_err(|error| match error {
                    Error::Domain(domain) => domain,
                    other => DomainError::invalid("dump", other.to_string()),
                });
                records.send(item).await.map_err(|_| ())?;
                if failed {
                    return Ok(());
                }
            }
        };
        // The store's transaction ends (and says why) whether or not every
        // line was fed: a closed channel before `end` is a cut dump.
        let _ = fed.await;
        drop(records);
        let counts = stored
            .await
            .map_err(|e| Error::Config(format!("import task failed: {e}")))?
            .map_err(|error| as_sent(error, &lines, ids.as_ref()))?;
        self.work_signal.poke();
        tracing::info!(tenant_id = %tenant, messages = counts.messages, "imported a dump");
        Ok(ImportReport {
            tenant_id: tenant,
            counts: ImportCounts {
                vectors_embedded_again: prepare.embedded_again,
                ..counts
            },
            new_ids: ids.zip(names).map(|(ids, names)| NewIds {
                agents: ids.agents,
                conversations: ids.conversations,
                agent_names: names.renamed_agents,
                procedure_names: names.renamed_procedures,
            }),
        })
    }

    /// Checks a record as the API would check its object, and embeds its
    /// vectors again when this server's model did not make them.
    async fn prepare(
        &self,
        tenant: TenantId,
        record: DumpRecord,
        prepare: &mut Preparation,
    ) -> Result<DumpRecord> {
        match record {
            DumpRecord::Header(_) => Err(DomainError::invalid("dump", "a second header").into()),
            DumpRecord::Agent(agent) => {
                AgentSpec {
                    name: agent.name.clone(),
                    system_prompt: agent.system_prompt.clone(),
                    llm: agent.llm.clone(),
                    memory: agent.memory.clone(),
                }
                .validate()?;
                self.limits.check_memory(&agent.memory)?;
                prepare
                    .redact
                    .insert(agent.id, agent.memory.pii.redacts_outgoing());
                Ok(DumpRecord::Agent(agent))
            }
            DumpRecord::Conversation(conversation) => {
                validate_user_id(&conversation.user_id)?;
                Ok(DumpRecord::Conversation(conversation))
            }
            DumpRecord::Procedure(procedure) => Ok(DumpRecord::Procedure(
                self.prepare_procedure(tenant, procedure, prepare).await?,
            )),
            DumpRecord::KnowledgeChunk(chunk) => Ok(DumpRecord::KnowledgeChunk(
                self.prepare_chunk(chunk, prepare).await?,
            )),
            other => Ok(other),
        }
    }

    async fn prepare_procedure(
        &self,
        tenant: TenantId,
        mut dumped: DumpedProcedure,
        prepare: &mut Preparation,
    ) -> Result<DumpedProcedure> {
        for dumped_version in &mut dumped.versions {
            let content = dumped_version.version.content();
            content.validate()?;
            if let Some(pattern) = &content.trigger_pattern {
                crate::procedure_matching::check_pattern(pattern)?;
            }
            let embedder = prepare.embedder(self).await?;
            let stale = dumped_version
                .embedding
                .as_ref()
                .is_none_or(|e| e.model != embedder.model());
            if stale {
                let text = [content.semantic_text()];
                let vector = self
                    .embed_for_request(tenant, embedder.as_ref(), &text)
                    .await?
                    .pop();
                dumped_version.embedding = vector.map(|vector| octopus_core::dump::DumpedVector {
                    model: embedder.model().to_owned(),
                    vector,
                });
                prepare.embedded_again += 1;
            }
        }
        Ok(dumped)
    }

    async fn prepare_chunk(
        &self,
        mut dumped: DumpedChunk,
        prepare: &mut Preparation,
    ) -> Result<DumpedChunk> {
        let embedder = prepare.embedder(self).await?;
        if dumped.embedding.model == embedder.model()
            && dumped.embedding.vector.len() == embedder.dimension()
        {
            return Ok(dumped);
        }
        let chunk = &dumped.chunk;
        let text = match &chunk.metadata.heading {
            Some(heading) => format!("{heading}\n\n{}", chunk.content),
            None => chunk.content.clone(),
        };
        let text = match prepare.redact.get(&chunk.agent_id) {
            Some(true) => octopus_core::pii::egress(&text).into_owned(),
            _ => text,
        };
        let vector = self
            .embed_counted(EmbeddingPurpose::Knowledge, embedder.as_ref(), &[text])
            .await?
            .pop()
            .unwrap_or_default();
        dumped.embedding = octopus_core::dump::DumpedVector {
            model: embedder.model().to_owned(),
            vector,
        };
        prepare.embedded_again += 1;
        Ok(dumped)
    }
}

/// What an import learns as it goes.
#[derive(Default)]
struct Preparation {
    embedder: Option<std::sync::Arc<dyn Embedder>>,
    /// Whether each imported agent's `pii` policy redacts outgoing text, for the chunks embedded again.
    redact: HashMap<AgentId, bool>,
    embedded_again: u64,
}

impl Preparation {
    /// The embedder, loaded at the first record that needs it.
    async fn embedder(&mut self, octopus: &Octopus) -> Result<std::sync::Arc<dyn Embedder>> {
        if let Some(embedder) = &self.embedder {
            return Ok(embedder.clone());
        }
        let embedder = octopus.embedder().await?;
        self.embedder = Some(embedder.clone());
        Ok(embedder)
    }
}

/// Places a record's error at its line of the dump.
fn at_line(error: Error, line: u64, kind: &str) -> Error {
    let at = |message: String| format!("line {line} ({kind}): {message}; nothing was imported");
    match error {
        Error::Domain(DomainError::Invalid { field, message }) => {
            DomainError::invalid(field, at(message)).into()
        }
        Error::Domain(DomainError::Conflict { code, message }) => {
            DomainError::conflict(code, at(message)).into()
        }
        other => other,
    }
}

/// A store's error about a record, in the caller's terms: the line the
/// record was on (the store counts records, and blank lines are skipped
/// before it), and the ids the dump holds, not those minted for the copy.
fn as_sent(
    error: octopus_core::Error,
    lines: &[u64],
    ids: Option<&octopus_core::dump::IdMap>,
) -> Error {
    let rewrite = |message: String| {
        let mut message = records_as_lines(&message, lines);
        if let Some(ids) = ids {
            for (new, old) in ids.minted() {
                message = message.replace(&new.to_string(), &old.to_string());
            }
        }
        message
    };
    match error {
        DomainError::Invalid { field, message } => DomainError::invalid(field, rewrite(message)),
        DomainError::Conflict { code, message } => DomainError::conflict(code, rewrite(message)),
        other => other,
    }
    .into()
}

/// `message` with each `record N` (the store's count, from 1) written as
/// the line that record was on.
fn records_as_lines(message: &str, lines: &[u64]) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("record ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "record ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let line = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|number| lines.get(number.checked_sub(1)?));
        match line {
            Some(line) => out.push_str(&format!("line {line}")),
            None => out.push_str(&rest[at..at + "record ".len() + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// Reads a dump's lines one record at a time, skipping blank lines.
#[derive(Default)]
struct DumpReader {
    line: u64,
    buffer: Vec<u8>,
}

impl DumpReader {
    fn next(&mut self, dump: &mut impl BufRead) -> Result<Option<DumpRecord>> {
        loop {
            self.buffer.clear();
            self.line += 1;
            let read = std::io::Read::take(&mut *dump, MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| DomainError::invalid("dump", format!("line {}: {e}", self.line)))?;
            if read == 0 {
                return Ok(None);
            }
            if self.buffer.len() > MAX_LINE_BYTES {
                return Err(DomainError::invalid(
                    "dump",
                    format!("line {} is longer than {MAX_LINE_BYTES} bytes", self.line),
                )
                .into());
            }
            if self.buffer.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = if is_earlier_agent(&self.buffer) {
                serde_json::from_slice::<serde_json::Value>(&self.buffer).and_then(|mut value| {
                    let agent = value["type"] == "agent";
                    if let Some(memory) = value
                        .get_mut("memory")
                        .and_then(serde_json::Value::as_object_mut)
                        .filter(|_| agent)
                    {
                        octopus_core::pii::PiiPolicy::upgrade_memory_settings(memory);
                    }
                    serde_json::from_value(value)
                })
            } else {
                serde_json::from_slice(&self.buffer)
            };
            return parsed.map(Some).map_err(|e| {
                DomainError::invalid("dump", format!("line {}: {e}", self.line)).into()
            });
        }
    }
}

/// Whether a dump line may be an agent written before its PII settings
/// became one (`redact_pii`, `pii_detection`, `pii_storage`): such an agent
/// is rewritten in the one setting's terms as it is read.
fn is_earlier_agent(line: &[u8]) -> bool {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    has(br#""pii_detection""#) || has(br#""redact_pii""#)
}

fn line(record: &DumpRecord) -> String {
    let mut line = serde_json::to_string(record).unwrap_or_default();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn records_are_named_by_their_lines() {
        let lines = [1, 3, 4, 9];
        assert_eq!(
            super::records_as_lines(
                "record 4 (message): its id X is also record 2's; end record",
                &lines
            ),
            "line 9 (message): its id X is also line 3's; end record"
        );
        assert_eq!(
            super::records_as_lines("record 12 (agent)", &lines),
            "record 12 (agent)"
        );
    }
}
