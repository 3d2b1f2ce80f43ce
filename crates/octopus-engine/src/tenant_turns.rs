//! Each tenant's share of a queue every tenant waits in. The embedder runs
//! readers' queries in turn, first come first served: a tenant that asks a
//! hundred questions at once would put all of them ahead of another
//! tenant's one. Here a tenant holds at most a few turns at once; its other
//! requests wait on its own count, behind nobody else's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use octopus_core::TenantId;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub(crate) struct TenantTurns {
    per_tenant: usize,
    /// One count per tenant that has asked: a few dozen bytes each, kept,
    /// as tenants are few and made by the operator.
    tenants: Mutex<HashMap<TenantId, Arc<Semaphore>>>,
}

/// A tenant's turn, given back when dropped.
pub(crate) struct Turn {
    _permit: OwnedSemaphorePermit,
}

impl TenantTurns {
    /// At most `per_tenant` turns held by one tenant at once (at least one).
    pub(crate) fn new(per_tenant: usize) -> Self {
        Self {
            per_tenant: per_tenant.max(1),
            tenants: Mutex::default(),
        }
    }

    /// As many turns as the machine has cores, so that a tenant alone can
    /// still keep every core busy.
    pub(crate) fn per_core() -> Self {
        Self::new(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// Waits until `tenant` holds fewer than its share of turns, then holds
    /// one more until the [`Turn`] is dropped.
    pub(crate) async fn take(&self, tenant: TenantId) -> Turn {
        let count = {
            let mut tenants = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
            let count = tenants
                .entry(tenant)
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_tenant)));
            Arc::clone(count)
        };
        // The count is never closed, so acquiring only ever waits.
        match count.acquire_owned().await {
            Ok(permit) => Turn { _permit: permit },
            Err(_) => unreachable!("a tenant's count of turns is never closed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::*;

    /// Polls `future` once: whether it is ready without waiting.
    fn ready_now<F: Future>(future: F) -> Option<F::Output> {
        let mut future = pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(value) => Some(value),
            Poll::Pending => None,
        }
    }

    #[test]
    fn a_tenant_past_its_share_waits_while_another_goes_first() {
        let turns = TenantTurns::new(2);
        let (busy, other) = (TenantId::new(), TenantId::new());
        let first = ready_now(turns.take(busy)).expect("a first turn at once");
        let _second = ready_now(turns.take(busy)).expect("a second turn at once");
        let mut third = pin!(turns.take(busy));
        let waker = Waker::noop();
        assert!(
            third
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending(),
            "a third turn of the same tenant waits"
        );
        assert!(
            ready_now(turns.take(other)).is_some(),
            "another tenant's turn does not wait behind it"
        );
        drop(first);
        assert!(
            third
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_ready(),
            "a turn given back lets the waiting one go"
        );
    }
}
