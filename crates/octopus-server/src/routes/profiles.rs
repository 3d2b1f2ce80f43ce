//! A user's profile with an agent: `/v1/agents/{agent_id}/users/{user_id}/profile`.

use axum::extract::State;
use octopus_core::conversation::UserActivity;
use octopus_core::fact::FactSource;
use octopus_core::{AgentId, ConversationId, EpisodeId, FactId};
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::Path;

/// What holds about one user of one agent, now.
#[derive(Serialize, ToSchema)]
pub(crate) struct UserProfile {
    pub agent_id: AgentId,
    pub user_id: String,
    /// How much they have talked with the agent; absent for a user known
    /// only by facts a person added.
    pub activity: Option<UserActivity>,
    /// What they asked for every later turn ("always answer in French"),
    /// the newest first.
    pub instructions: Vec<ProfileFact>,
    /// What they said they prefer, the newest first.
    pub preferences: Vec<ProfileFact>,
    /// Every other fact that holds, by category: the agent's
    /// `fact_categories` in their order, then any other category, then the
    /// facts filed under none.
    pub facts: Vec<FactGroup>,
    /// The newest past conversations with a summary (up to 5), newest
    /// first, a line each.
    pub recent_episodes: Vec<EpisodeLine>,
    /// A paragraph about the user, written by the agent's summary model
    /// from their facts and newest conversations when the agent's
    /// `memory.profile_summary` asks for one; absent until it is written,
    /// and while a fact it was written from has been corrected or deleted
    /// (it is then written again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<octopus_core::profile_summary::ProfileSummary>,
}

/// A fact that holds.
#[derive(Serialize, ToSchema)]
pub(crate) struct ProfileFact {
    pub id: FactId,
    pub text: String,
    /// When it became true.
    pub since: chrono::DateTime<chrono::Utc>,
    /// `learned` or `manual`.
    pub source: FactSource,
    /// Who wrote this version: `model`, `patterns` (a standing request
    /// recognised in the user's words), or the name of the key that did.
    pub changed_by: String,
    /// The name a client gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The facts of one category, the newest first.
#[derive(Serialize, ToSchema)]
pub(crate) struct FactGroup {
    /// Absent for the facts filed under none.
    pub category: Option<String>,
    pub facts: Vec<ProfileFact>,
}

/// A past conversation in a line.
#[derive(Serialize, ToSchema)]
pub(crate) struct EpisodeLine {
    pub episode_id: EpisodeId,
    pub conversation_id: ConversationId,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The first sentence of its summary.
    pub summary: String,
}

/// What holds about a user now, in one view: their standing instructions and
/// preferences, every other current fact by category with when it became
/// true, the newest past conversations' summaries a line each, and how
/// much they have talked. Assembled from what is stored when asked, so a
/// corrected fact shows its new text and a deleted one is gone at once.
/// `404 user_not_found` when the agent has no live conversation and no
/// fact of the user (a forgotten user among them).
#[utoipa::path(get, path = "/v1/agents/{agent_id}/users/{user_id}/profile", tag = "users",
    security(("bearer" = [])),
    params(("agent_id" = AgentId, Path), ("user_id" = String, Path)),
    responses((status = 200, body = UserProfile), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn user_profile(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path((agent_id, user_id)): Path<(AgentId, String)>,
) -> ApiResult<axum::Json<UserProfile>> {
    let profile = state
        .octopus
        .user_profile(tenant, agent_id, &user_id)
        .await?;
    let facts = |facts: Vec<octopus_engine::ProfileFact>| {
        facts
            .into_iter()
            .map(|fact| ProfileFact {
                id: fact.id,
                text: fact.text,
                since: fact.since,
                source: fact.source,
                changed_by: fact.changed_by,
                key: fact.key,
            })
            .collect()
    };
    Ok(axum::Json(UserProfile {
        agent_id: profile.agent_id,
        user_id: profile.user_id,
        activity: profile.activity,
        instructions: facts(profile.instructions),
        preferences: facts(profile.preferences),
        facts: profile
            .facts
            .into_iter()
            .map(|group| FactGroup {
                category: group.category,
                facts: facts(group.facts),
            })
            .collect(),
        recent_episodes: profile
            .recent_episodes
            .into_iter()
            .map(|line| EpisodeLine {
                episode_id: line.episode_id,
                conversation_id: line.conversation_id,
                started_at: line.started_at,
                summary: line.summary,
            })
            .collect(),
        summary: profile.summary,
    }))
}
