//! What every Octopus backend must pass, and fixtures shared by test suites.
//!
//! A backend's integration tests call [`store_conformance_tests!`] with an
//! expression that builds a [`Backend`]; the macro expands to one `#[tokio::test]`
//! per rule of the storage contract, so a failure names the rule broken. The
//! rules are grouped by area: [`tenants`], [`appends`], [`episodes`],
//! [`message_search`], [`knowledge`], [`memory`], [`facts`], [`fact_changes`], [`lifecycle`],
//! [`procedures`], [`profile_summaries`], [`webhooks`], [`tenant_deletion`].
//! A vector index (an implementation of `octopus_core::vectors::VectorIndex`)
//! calls [`vector_conformance_tests!`] likewise, with the rules in [`vectors`].
//! [`soak`] drives the real server under load with faults, for a test and a
//! bench.

#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

pub mod appends;
pub mod counting_store;
pub mod episodes;
pub mod fact_changes;
pub mod facts;
pub mod fake_chat;
pub mod fake_providers;
pub mod fixtures;
pub mod knowledge;
pub mod lifecycle;
pub mod memory;
pub mod message_erasure;
pub mod message_search;
pub mod procedures;
pub mod profile_summaries;
pub mod soak;
pub mod tenant_deletion;
pub mod tenants;
pub mod vectors;
pub mod webhook_receiver;
pub mod webhooks;

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_core::vectors::VectorIndex;

/// Puts something between a store and its vector index (a rule's faults).
pub type WrapVectors = Box<dyn FnOnce(Arc<dyn VectorIndex>) -> Arc<dyn VectorIndex> + Send>;

/// A place where a store keeps its data, which can be opened more than once:
/// reopening must show everything written before.
#[async_trait]
pub trait Backend: Send + Sync {
    async fn open(&self) -> Arc<dyn Store>;
    /// Another store of the same kind, empty: where a dump is moved to.
    async fn open_empty(&self) -> Arc<dyn Store>;
    /// The store over the same data, with the vector index it would use
    /// passed through `wrap`.
    async fn open_wrapping(&self, wrap: WrapVectors) -> Arc<dyn Store>;
}

/// Expands to the conformance suite for the backend `$backend` builds.
#[macro_export]
macro_rules! store_conformance_tests {
    ($backend:expr) => {
        $crate::store_conformance_tests!(@in tenants, $backend;
            a_store_is_ready_and_names_its_backends,
            tenants_and_api_keys,
            agents_are_tenant_scoped_and_names_unique,
            deleted_agents_are_not_found_and_free_their_name,
            foreign_tenant_sees_nothing,
            users_are_listed_per_agent_with_their_live_conversations,
            a_users_activity_counts_their_live_conversations_only
        );
        $crate::store_conformance_tests!(@in appends, $backend;
            append_opens_an_episode_and_continues_it,
            an_episodes_messages_are_read_backwards_a_page_at_a_time,
            idle_gap_closes_the_episode_and_opens_another,
            closed_episode_is_followed_by_a_new_one,
            idle_episodes_are_swept_closed_once,
            an_import_is_all_or_nothing,
            failed_batch_writes_nothing,
            a_batch_that_must_follow_what_was_read_is_refused_once_the_conversation_moved,
            deleted_conversation_takes_no_messages,
            an_episode_cannot_end_before_its_last_message,
            concurrent_appends_keep_ordinals_dense,
            a_conversation_opens_with_its_users_first_message
        );
        $crate::store_conformance_tests!(@in episodes, $backend;
            restoring_a_live_episode_is_a_conflict,
            every_field_survives_reopening,
            soft_delete_restore_and_purge,
            purge_requires_soft_delete,
            live_episodes_are_read_together_in_the_order_asked,
            episodes_list_with_filters
        );
        $crate::store_conformance_tests!(@in message_search, $backend;
            search_ranks_by_bm25_and_filters,
            search_weighs_rare_words_above_common_ones,
            search_sees_every_acknowledged_message
        );
        $crate::store_conformance_tests!(@in knowledge, $backend;
            collections_are_created_once_per_agent,
            search_returns_the_nearest_chunks_first,
            filters_narrow_the_search,
            wrong_dimension_is_refused_and_writes_nothing,
            replacing_a_source_leaves_no_duplicates,
            deleted_chunks_are_not_found,
            knowledge_is_isolated_per_agent_and_tenant,
            chunks_survive_reopening_and_a_second_store_sees_them,
            keyword_search_follows_every_change,
            keyword_search_finds_a_collection_outranked_by_another,
            one_tenants_data_never_moves_anothers_scores,
            keyword_scores_follow_the_collections_changes,
            documents_are_listed_by_source_and_read_in_order
        );
        $crate::store_conformance_tests!(@in memory, $backend;
            appends_and_closes_queue_work_durably,
            claimed_jobs_are_leased_and_retried,
            embedded_messages_are_found_by_vector,
            summaries_are_generated_once_and_embedded,
            memory_never_crosses_user_agent_or_tenant,
            deleted_episodes_are_never_recalled,
            message_windows_carry_neighbouring_turns,
            message_positions_name_the_turns_next_to_each_message,
            claims_put_live_work_first_and_take_tenants_in_turn,
            successive_claims_go_round_every_tenant,
            parked_jobs_wait_aside_until_released,
            a_copy_left_behind_catches_up_without_a_search,
            a_users_memory_vectors_are_read_apart_from_everyone_elses,
            recalled_turns_are_read_back_with_their_vectors
        );
        $crate::store_conformance_tests!(@in profile_summaries, $backend;
            a_profile_summary_is_its_users_alone_until_forgotten
        );
        $crate::store_conformance_tests!(@in facts, $backend;
            a_replaced_fact_is_kept_with_the_period_it_held,
            an_episodes_facts_are_learned_once,
            facts_are_found_by_their_words_within_their_user,
            facts_leave_with_their_episode_and_their_user,
            a_dump_carries_facts_and_their_vectors_are_made_again,
            facts_carry_their_category_and_are_listed_by_it,
            facts_are_learned_during_a_session_once_per_window,
            a_close_learns_from_what_came_after_the_last_learning
        );
        $crate::store_conformance_tests!(@in fact_changes, $backend;
            a_correction_is_a_new_version_that_keeps_the_old_one,
            another_tenants_fact_is_not_found_for_any_change,
            a_deleted_fact_leaves_every_store_and_its_history_keeps_no_word,
            an_interrupted_fact_deletion_is_finished_later,
            a_facts_history_goes_with_its_episode_and_its_user,
            a_fact_added_by_hand_lives_as_a_learned_one_and_leaves_with_its_user,
            a_fact_added_by_hand_is_deleted_from_every_store,
            a_keyed_fact_is_read_by_its_key_and_holds_it_alone
        );
        $crate::store_conformance_tests!(@in message_erasure, $backend;
            an_erased_message_leaves_every_store_with_the_facts_learned_from_it,
            an_interrupted_message_erasure_is_finished_later
        );
        $crate::store_conformance_tests!(@in webhooks, $backend;
            endpoints_are_registered_read_and_deleted_per_tenant,
            registrations_sent_at_once_never_pass_the_tenants_cap,
            a_claim_leaves_out_the_endpoints_and_tenants_it_names,
            every_change_writes_one_delivery_per_subscribed_endpoint,
            each_users_deliveries_are_claimed_in_order,
            a_disabled_endpoint_gives_up_and_gets_nothing_new,
            forgetting_a_user_takes_their_deliveries_and_announces_it
        );
        $crate::store_conformance_tests!(@in lifecycle, $backend;
            expired_episodes_are_archived_once_and_leave_recall,
            forgetting_a_user_removes_all_of_theirs_and_nothing_else,
            an_interrupted_forget_is_finished_by_the_next_and_at_start,
            a_dump_moves_a_tenant_into_an_empty_store_whole_or_not_at_all
        );
        $crate::store_conformance_tests!(@in tenant_deletion, $backend;
            deleting_a_tenant_removes_all_of_it_and_nothing_else,
            an_interrupted_tenant_deletion_is_finished_at_start
        );
        $crate::store_conformance_tests!(@in procedures, $backend;
            procedures_serve_only_approved_versions_and_keep_every_version,
            shared_procedures_reach_every_agent_of_their_tenant_and_no_other,
            names_are_unique_among_active_procedures_of_one_scope
        );
    };
    (@in $area:ident, $backend:expr; $($rule:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $rule() {
                let backend = $backend;
                $crate::$area::$rule(&backend).await;
            }
        )*
    };
}
