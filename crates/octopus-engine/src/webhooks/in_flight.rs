//! What the dispatcher is sending now, counted per endpoint and per
//! tenant, so that one endpoint that answers slowly (or never) only delays
//! its own deliveries: past its share it is left out of the next claims,
//! and the slots it does not take serve everyone else.

use std::collections::HashMap;

use octopus_core::webhook::{DeliveryClaim, DueDelivery};
use octopus_core::{TenantId, Timestamp, WebhookId};

/// Deliveries in flight at once, every tenant's together.
pub(crate) const MAX_IN_FLIGHT: usize = 128;
/// Of one tenant's endpoints together.
pub(crate) const PER_TENANT: u32 = 8;
/// To one endpoint (each of a different user: one user's events go one at
/// a time, in order).
pub(crate) const PER_WEBHOOK: u32 = 4;
/// Deliveries asked for by one claim: the caps are checked between claims,
/// so an endpoint or tenant goes past its cap by less than one claim.
pub(crate) const CLAIM_SIZE: u32 = PER_WEBHOOK;

/// The deliveries being sent, by endpoint and tenant.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    webhooks: HashMap<WebhookId, u32>,
    tenants: HashMap<TenantId, u32>,
    total: usize,
}

/// The keys of `counts` at `cap` or over it, in order.
fn full<K: Copy + Ord>(counts: &HashMap<K, u32>, cap: u32) -> Vec<K> {
    let mut ids: Vec<K> = counts
        .iter()
        .filter(|(_, n)| **n >= cap)
        .map(|(id, _)| *id)
        .collect();
    ids.sort();
    ids
}

impl InFlight {
    /// How many more this dispatcher may send at once.
    pub(crate) fn free(&self) -> usize {
        MAX_IN_FLIGHT.saturating_sub(self.total)
    }

    /// The next claim: at most [`CLAIM_SIZE`] (and what is free), none to an
    /// endpoint or tenant at its cap.
    pub(crate) fn next_claim(&self, now: Timestamp, lease: std::time::Duration) -> DeliveryClaim {
        let limit = CLAIM_SIZE.min(u32::try_from(self.free()).unwrap_or(u32::MAX));
        DeliveryClaim {
            skip_webhooks: full(&self.webhooks, PER_WEBHOOK),
            skip_tenants: full(&self.tenants, PER_TENANT),
            ..DeliveryClaim::any(limit, now, lease)
        }
    }

    pub(crate) fn start(&mut self, delivery: &DueDelivery) {
        *self.webhooks.entry(delivery.webhook_id).or_default() += 1;
        *self.tenants.entry(delivery.tenant_id).or_default() += 1;
        self.total += 1;
    }

    pub(crate) fn finish(&mut self, webhook: WebhookId, tenant: TenantId) {
        fn less<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, u32>, key: K) {
            if let Some(n) = counts.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(&key);
                }
            }
        }
        less(&mut self.webhooks, webhook);
        less(&mut self.tenants, tenant);
        self.total = self.total.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(tenant: TenantId, webhook: WebhookId) -> DueDelivery {
        DueDelivery {
            tenant_id: tenant,
            webhook_id: webhook,
            event_id: uuid::Uuid::now_v7(),
            url: "https://hooks.example.com/".into(),
            secret: "whsec_x".into(),
            payload: "{}".into(),
            attempts: 0,
            failing_since: None,
        }
    }

    #[test]
    fn an_endpoint_and_a_tenant_at_their_caps_are_left_out_until_one_finishes() {
        let lease = std::time::Duration::from_secs(60);
        let now = octopus_core::now();
        let (slow_tenant, other_tenant) = (TenantId::new(), TenantId::new());
        let (slow, second) = (WebhookId::new(), WebhookId::new());
        let mut in_flight = InFlight::default();
        for _ in 0..PER_WEBHOOK {
            in_flight.start(&due(slow_tenant, slow));
        }
        let claim = in_flight.next_claim(now, lease);
        assert_eq!(claim.skip_webhooks, [slow]);
        assert!(
            claim.skip_tenants.is_empty(),
            "the tenant has room for its other endpoints"
        );
        for _ in PER_WEBHOOK..PER_TENANT {
            in_flight.start(&due(slow_tenant, second));
        }
        let claim = in_flight.next_claim(now, lease);
        assert_eq!(claim.skip_tenants, [slow_tenant]);
        assert_eq!(
            claim.limit, CLAIM_SIZE,
            "everyone else is claimed as before"
        );
        in_flight.start(&due(other_tenant, WebhookId::new()));
        in_flight.finish(slow, slow_tenant);
        let claim = in_flight.next_claim(now, lease);
        assert_eq!(claim.skip_webhooks, [second], "the slow one has room again");
        assert!(claim.skip_tenants.is_empty(), "{claim:?}");
        assert_eq!(in_flight.free(), MAX_IN_FLIGHT - PER_TENANT as usize);
    }

    #[test]
    fn a_claim_never_asks_for_more_than_is_free() {
        let mut in_flight = InFlight::default();
        let tenant = TenantId::new();
        for _ in 0..MAX_IN_FLIGHT - 1 {
            in_flight.start(&due(tenant, WebhookId::new()));
        }
        assert_eq!(
            in_flight
                .next_claim(octopus_core::now(), std::time::Duration::ZERO)
                .limit,
            1
        );
    }
}
