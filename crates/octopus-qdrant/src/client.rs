//! The Qdrant client with what every call needs: the collections' naming,
//! and errors sorted by whose fault they are.

use std::future::Future;

use qdrant_client::qdrant::{RetrievedPoint, ScrollPointsBuilder};
use qdrant_client::{Qdrant, QdrantError};

use crate::error::Error;
use crate::layout::Naming;

/// Points per upsert or delete request, and per page of a scroll.
pub(crate) const BATCH: usize = 256;

/// The client with what every call needs.
pub(crate) struct Client {
    pub qdrant: Qdrant,
    pub naming: Naming,
    pub url: String,
}

impl Client {
    /// Hands every point `scroll` reaches to `each`, a page of [`BATCH`] at a
    /// time, without their vectors.
    pub(crate) async fn scroll_all(
        &self,
        scroll: ScrollPointsBuilder,
        mut each: impl FnMut(&RetrievedPoint) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let scroll = scroll.limit(BATCH as u32).with_vectors(false);
        let mut offset = None;
        loop {
            let mut page = scroll.clone();
            if let Some(from) = offset.take() {
                page = page.offset(from);
            }
            let found = self.call(self.qdrant.scroll(page)).await?;
            found.result.iter().try_for_each(&mut each)?;
            match found.next_page_offset {
                Some(next) => offset = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// Awaits a client call, sorting its error.
    pub(crate) async fn call<T>(
        &self,
        call: impl Future<Output = Result<T, QdrantError>>,
    ) -> Result<T, Error> {
        call.await.map_err(|e| Error::from_client(&self.url, e))
    }
}
