//! The store's connections: a few kept open, each request's queries run on the blocking
//! pool with one of them (another is opened when every one is in use).

use std::sync::{Arc, Mutex};

use super::page::{Page, PageError};
use crate::history::{Location, Store, StoreError};

/// Connections kept open between requests.
const KEPT: usize = 4;

pub(crate) struct Pool {
    location: Location,
    idle: Mutex<Vec<Store>>,
}

impl Pool {
    pub(crate) fn new(location: Location) -> Self {
        Self {
            location,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Open the first connection (the store must exist and be readable).
    pub(crate) async fn warm(self: &Arc<Self>) -> Result<(), StoreError> {
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let store = pool.location.open_existing()?;
            pool.give_back(store);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| {
            Err(StoreError::NotFound(format!(
                "opening the history store failed: {e}"
            )))
        })
    }

    /// Run `f` with a connection, on the blocking pool. A connection whose query failed in
    /// the store (not a run or case that is not there) is closed rather than kept.
    pub(crate) async fn run(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Store) -> Result<Page, PageError> + Send + 'static,
    ) -> Result<Page, PageError> {
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let mut store = match pool.take() {
                Some(store) => store,
                None => pool.location.open_existing()?,
            };
            let result = f(&mut store);
            let broken = matches!(&result, Err(PageError::Store(e)) if !matches!(e, StoreError::NotFound(_)));
            if !broken {
                pool.give_back(store);
            }
            result
        })
        .await
        .unwrap_or_else(|e| Err(PageError::Internal(format!("the page failed: {e}"))))
    }

    fn take(&self) -> Option<Store> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    fn give_back(&self, store: Store) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEPT {
            idle.push(store);
        }
    }
}
