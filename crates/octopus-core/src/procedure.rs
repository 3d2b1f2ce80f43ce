//! Procedures: named step-by-step instructions an agent follows when a trigger
//! matches (seed 002's `Octopus_Procedures`). The table exists from the first
//! migration; matching and approval arrive with procedural memory.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{AgentId, ProcedureId, TenantId};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Procedure {
    pub id: ProcedureId,
    #[serde(skip)]
    pub tenant_id: TenantId,
    /// None: shared by every agent of the tenant.
    pub agent_id: Option<AgentId>,
    pub name: String,
    pub description: Option<String>,
    /// A regular expression over the user's message.
    pub trigger_pattern: Option<String>,
    pub steps: Vec<ProcedureStep>,
    #[serde(skip)]
    pub embedding: Option<Vec<f32>>,
    pub is_active: bool,
    pub is_approved: bool,
    pub version: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub created_by: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProcedureStep {
    pub instruction: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}
