//! Wakes the background work of this process when a request gives it some.

use tokio::sync::Notify;

/// Wakes the memory worker when this process queues work, and the webhook
/// dispatcher when a change may have written deliveries.
#[derive(Default)]
pub(crate) struct WorkSignal {
    memory: Notify,
    webhooks: Notify,
}

impl WorkSignal {
    /// A change committed: it may have queued memory work and deliveries.
    pub(crate) fn poke(&self) {
        self.memory.notify_one();
        self.webhooks.notify_one();
    }

    /// The memory worker did work, which may have written deliveries
    /// (facts learned, episodes closed).
    pub(crate) fn poke_webhooks(&self) {
        self.webhooks.notify_one();
    }

    pub(crate) async fn memory_work(&self) {
        self.memory.notified().await;
    }

    pub(crate) async fn deliveries(&self) {
        self.webhooks.notified().await;
    }
}
