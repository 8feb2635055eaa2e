//! IndexedDB's transactions as the world keeps them (idb.rs runs them): those made and not
//! yet run, and the read whose transaction holds the store while its answer is handled.

use crate::ids::PageId;

/// An IndexedDB transaction waiting to run.
pub struct Txn {
    /// The page that made it.
    pub page: PageId,
    /// Its machine.
    pub inst: u64,
    /// The store key.
    pub key: String,
    /// `None`: a read; `Some(None)`: a delete; `Some(Some(text))`: a put.
    pub put: Option<Option<String>>,
}

/// The read transaction whose answer is on its way, or being handled.
#[derive(Default)]
pub struct Open {
    /// The transaction, while it holds the store (no other runs meanwhile).
    pub held: Option<u64>,
    /// The page whose read it is.
    pub held_by: Option<PageId>,
    /// The page and machine handling its answer now: their writes go into it.
    pub answering: Option<(PageId, u64)>,
    /// Transactions made that wait for it to end, in the order made.
    pub blocked: Vec<u64>,
}
