//! Procedures: named step-by-step instructions an agent follows when a trigger
//! matches, the third kind of memory.
//!
//! A procedure belongs to one agent, or (without `agent_id`) to every agent of
//! its tenant. Each change is a new version, kept: a version waits for
//! approval, and only an approved version of an active procedure ever serves
//! (reaches a context). A procedure that was approved keeps serving its
//! approved version while a newer one waits.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bounds::check_chars;
use crate::page::Page;
use crate::{AgentId, Error, ProcedureId, Result, TenantId};

/// Longest procedure name, in characters.
pub const MAX_PROCEDURE_NAME_CHARS: usize = 200;
/// Longest description, in characters.
pub const MAX_PROCEDURE_DESCRIPTION_CHARS: usize = 4_000;
/// Longest trigger pattern, in characters (Rust `regex` syntax).
pub const MAX_TRIGGER_PATTERN_CHARS: usize = 1_000;
/// Most steps of one procedure.
pub const MAX_PROCEDURE_STEPS: usize = 50;
/// Longest step instruction, in characters.
pub const MAX_STEP_INSTRUCTION_CHARS: usize = 2_000;
/// Longest tool name of a step, in characters.
pub const MAX_STEP_TOOL_CHARS: usize = 64;
/// Longest JSON of a step's arguments shape, in bytes.
pub const MAX_STEP_ARGUMENTS_BYTES: usize = 16 * 1024;

/// One step of a procedure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcedureStep {
    /// What to do, in words the model reads.
    pub instruction: String,
    /// A tool to call for this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The shape of the tool's arguments (a JSON Schema object, or an
    /// example); `null` is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<Value>,
}

/// What one version of a procedure says.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcedureContent {
    pub name: String,
    pub description: Option<String>,
    /// A regular expression over the user's message (Rust `regex` syntax).
    pub trigger_pattern: Option<String>,
    pub steps: Vec<ProcedureStep>,
}

impl ProcedureContent {
    /// Checks sizes and shapes. The trigger pattern's syntax is checked where
    /// it is compiled (the engine), which quotes the parse error.
    pub fn validate(&self) -> Result<()> {
        check_chars("name", &self.name, 1, MAX_PROCEDURE_NAME_CHARS)?;
        if crate::bounds::is_blank(&self.name) {
            return Err(Error::invalid("name", "must not be blank"));
        }
        // Empty is allowed, as the API's document says: no description.
        if let Some(description) = &self.description {
            crate::bounds::check_chars(
                "description",
                description,
                0,
                MAX_PROCEDURE_DESCRIPTION_CHARS,
            )?;
        }
        if let Some(pattern) = &self.trigger_pattern {
            check_chars("trigger_pattern", pattern, 1, MAX_TRIGGER_PATTERN_CHARS)?;
        }
        if self.steps.is_empty() || self.steps.len() > MAX_PROCEDURE_STEPS {
            return Err(Error::invalid(
                "steps",
                format!("1 to {MAX_PROCEDURE_STEPS} steps"),
            ));
        }
        for (index, step) in self.steps.iter().enumerate() {
            let field = |name: &str| format!("steps[{index}].{name}");
            check_chars(
                &field("instruction"),
                &step.instruction,
                1,
                MAX_STEP_INSTRUCTION_CHARS,
            )?;
            if crate::bounds::is_blank(&step.instruction) {
                return Err(Error::invalid(field("instruction"), "must not be blank"));
            }
            if let Some(tool) = &step.tool {
                check_chars(&field("tool"), tool, 1, MAX_STEP_TOOL_CHARS)?;
            }
            if let Some(arguments) = &step.arguments {
                if !arguments.is_object() {
                    return Err(Error::invalid(field("arguments"), "must be a JSON object"));
                }
                if arguments.to_string().len() > MAX_STEP_ARGUMENTS_BYTES {
                    return Err(Error::invalid(
                        field("arguments"),
                        format!("longer than {MAX_STEP_ARGUMENTS_BYTES} bytes"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The text a procedure is matched by meaning with: its name, description
    /// and steps.
    pub fn semantic_text(&self) -> String {
        let mut text = self.name.clone();
        if let Some(description) = &self.description {
            text.push_str(". ");
            text.push_str(description);
        }
        for step in &self.steps {
            text.push_str(". ");
            text.push_str(&step.instruction);
        }
        text
    }
}

/// A procedure as a caller creates it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcedureSpec {
    /// The agent it belongs to; absent, it is shared by every agent of the tenant.
    #[serde(default)]
    pub agent_id: Option<AgentId>,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// A regular expression over the user's message (Rust `regex` syntax).
    #[serde(default)]
    pub trigger_pattern: Option<String>,
    pub steps: Vec<ProcedureStep>,
}

impl ProcedureSpec {
    pub fn content(&self) -> ProcedureContent {
        ProcedureContent {
            name: self.name.clone(),
            description: self.description.clone(),
            trigger_pattern: self.trigger_pattern.clone(),
            steps: self.steps.clone(),
        }
    }
}

/// A procedure: the version that serves (or, before any is approved, the
/// latest), and where its versions stand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Procedure {
    pub id: crate::ProcedureId,
    #[serde(skip)]
    pub tenant_id: TenantId,
    /// Absent: shared by every agent of the tenant. (Left out rather than
    /// null, so that a list of procedures never offers a null where an
    /// agent's id goes.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<AgentId>,
    pub name: String,
    pub description: Option<String>,
    pub trigger_pattern: Option<String>,
    pub steps: Vec<ProcedureStep>,
    pub is_active: bool,
    /// Whether a version serves: only then can the procedure match.
    pub is_approved: bool,
    /// The version shown here.
    pub version: u32,
    /// The version that serves, if one was approved.
    pub serving_version: Option<u32>,
    /// The newest version.
    pub latest_version: u32,
    /// The newest version, while it waits for approval.
    pub pending_version: Option<u32>,
    /// Who wrote the version shown (an API key's name, or `learned:{episode}`).
    pub created_by: Option<String>,
    /// Who approved the serving version.
    pub approved_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Procedure {
    pub fn content(&self) -> ProcedureContent {
        ProcedureContent {
            name: self.name.clone(),
            description: self.description.clone(),
            trigger_pattern: self.trigger_pattern.clone(),
            steps: self.steps.clone(),
        }
    }
}

/// Where a version stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionStatus {
    /// Waiting for approval.
    Pending,
    /// Approved (it serves, or served before a later approval or a rollback).
    Approved,
    Rejected,
    /// A newer version replaced it before it was decided.
    Superseded,
}

impl VersionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionStatus::Pending => "pending",
            VersionStatus::Approved => "approved",
            VersionStatus::Rejected => "rejected",
            VersionStatus::Superseded => "superseded",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Approved,
            Self::Rejected,
            Self::Superseded,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// One version of a procedure, as kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProcedureVersion {
    pub version: u32,
    pub name: String,
    pub description: Option<String>,
    pub trigger_pattern: Option<String>,
    pub steps: Vec<ProcedureStep>,
    pub status: VersionStatus,
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Who approved or rejected it, and when.
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
}

impl ProcedureVersion {
    pub fn content(&self) -> ProcedureContent {
        ProcedureContent {
            name: self.name.clone(),
            description: self.description.clone(),
            trigger_pattern: self.trigger_pattern.clone(),
            steps: self.steps.clone(),
        }
    }
}

/// The version a rollback serves again, `found` as the store read it: it
/// must exist and have been approved.
pub fn rollback_target(
    id: ProcedureId,
    number: u32,
    found: Option<ProcedureVersion>,
) -> Result<ProcedureVersion> {
    let found = found.ok_or_else(|| {
        Error::not_found(
            crate::ObjectKind::ProcedureVersion,
            format!("{id} v{number}"),
        )
    })?;
    if found.status != VersionStatus::Approved {
        return Err(Error::conflict(
            crate::DomainCode::VersionNotApproved,
            format!("version {number} of procedure {id} was never approved"),
        ));
    }
    Ok(found)
}

/// Which procedures a listing returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcedureFilter {
    /// This agent's own procedures (with `shared: true`, also the shared ones).
    pub agent_id: Option<AgentId>,
    /// Only shared ones (`true`) or only agents' own (`false`); with
    /// `agent_id`, `true` adds the shared ones to the agent's.
    pub shared: Option<bool>,
    pub active: Option<bool>,
    pub approved: Option<bool>,
    /// Words in the name or description (case-insensitive substring).
    pub text: Option<String>,
    pub page: Page,
}

impl ProcedureFilter {
    /// The `LIKE` pattern `text` stands for, lower-cased: a substring match,
    /// with the characters `LIKE` treats specially (`%`, `_`, `\\`) taken out
    /// rather than escaped, since no name needs them to be found.
    pub fn text_pattern(&self) -> Option<String> {
        let text = self.text.as_deref()?.trim();
        (!text.is_empty())
            .then(|| format!("%{}%", text.to_lowercase().replace(['%', '_', '\\'], "")))
    }
}

/// A version written by a store call: its content, its vector for matching by
/// meaning, and who wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewVersion {
    pub content: ProcedureContent,
    pub embedding: Option<Vec<f32>>,
    pub created_by: Option<String>,
}

/// A decision on a procedure's pending version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject,
}

/// A procedure that may match: active, with a serving version; what that
/// version says, with its vector.
#[derive(Clone, Debug, PartialEq)]
pub struct ServingProcedure {
    pub id: ProcedureId,
    pub agent_id: Option<AgentId>,
    pub version: u32,
    pub content: ProcedureContent,
    pub embedding: Option<Vec<f32>>,
}

/// How a procedure matched a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Its trigger pattern matched.
    Regex,
    /// Its meaning is close enough to the message's (`score`: cosine).
    Semantic,
}

/// A procedure that matched a turn's message, as the trace shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProcedureMatch {
    pub id: ProcedureId,
    pub name: String,
    pub version: u32,
    pub matched_by: MatchedBy,
    /// 1 for a regex match; the cosine similarity for a semantic one.
    pub score: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_filter_matches_a_substring_with_like_wildcards_taken_out() {
        let filter = |text: &str| ProcedureFilter {
            text: Some(text.into()),
            ..ProcedureFilter::default()
        };
        assert_eq!(
            filter("  Refund ").text_pattern().as_deref(),
            Some("%refund%")
        );
        assert_eq!(
            filter("50%_off\\").text_pattern().as_deref(),
            Some("%50off%")
        );
        assert_eq!(filter("   ").text_pattern(), None);
        assert_eq!(ProcedureFilter::default().text_pattern(), None);
    }
}
