//! The server's side of the store's terms: charges, and what phase 3 commits
//! (a charge, or a declined payment's answer). The key table's own terms
//! (stored responses, locks, the outcomes of each phase and the rule
//! [`decide`] that judges a key's row) are idemkey-axum's, re-exported here.

use serde::Serialize;

pub use idemkey_axum::implementers::{
    completion, decide, lookup, reapable, Completed, CompletionRow, Decision, KeyRequest, KeyRow,
    Lock, Lookup, Reserved,
};
pub use idemkey_axum::{StaleKey, StoredResponse};

/// The `201` answer that creates a charge.
pub trait Created {
    /// The `201` answer that creates `charge`: its JSON.
    fn created(charge: &Charge) -> StoredResponse;
}

impl Created for StoredResponse {
    fn created(charge: &Charge) -> StoredResponse {
        // A struct of strings and integers always serialises.
        StoredResponse::json(201, serde_json::to_vec(charge).unwrap_or_default())
    }
}

/// One charge. Its JSON is both the `201` body and a ledger entry.
#[derive(Debug, Clone, Serialize)]
pub struct Charge {
    /// `ch_…`
    pub id: String,
    /// Always `"charge"`, so a body is recognisable on its own.
    pub object: &'static str,
    /// The idempotency key that created it (`null` for the naive endpoint).
    pub key: Option<String>,
    /// Customer scope.
    pub customer: String,
    /// Minor units (cents), a positive integer.
    pub amount: u64,
    /// Lowercase ISO 4217 code.
    pub currency: String,
    /// Always `"succeeded"`: declines are not charges.
    pub status: &'static str,
    /// The provider's payment reference.
    pub provider_ref: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Operation id; internal.
    #[serde(skip)]
    pub reservation: Option<String>,
}

/// What phase 3 stores: an approved charge (with the body that describes it),
/// or a final answer without a charge (a decline).
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Insert this charge; answer 201 with its JSON.
    Charge(Charge),
    /// Store and answer this response; no charge.
    Answer(StoredResponse),
}

impl Outcome {
    /// What phase 3 writes: the answer to store, and the charge to insert
    /// with it (none for a decline).
    pub fn into_parts(self) -> (StoredResponse, Option<Charge>) {
        match self {
            Outcome::Charge(charge) => (StoredResponse::created(&charge), Some(charge)),
            Outcome::Answer(resp) => (resp, None),
        }
    }
}
