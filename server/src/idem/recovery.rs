//! Server-side completion of operations whose request died between phases:
//! idemkey-axum's recovery, told by the provider what phase 2 did.
//!
//! For each key whose lock is older than `--lock-timeout`, the provider is
//! asked what it did under that operation id. This is a lookup and never a
//! new payment. If it paid or declined, phase 3 commits exactly what the
//! request would have (the same [`phases::outcome`]), and a later retry gets
//! it as a replay. If the provider has nothing, nothing was paid: the key is
//! left alone for its retry or its expiry.

use async_trait::async_trait;
use idemkey_axum::{Recover, RecoverError};

use crate::idem::phases;
use crate::provider::Provider;
use crate::store::model::{Outcome, StaleKey};

/// What phase 3 commits for a dead operation: the provider's record of it.
pub struct FromProvider(pub Provider);

#[async_trait]
impl Recover<Outcome> for FromProvider {
    async fn recover(&self, k: &StaleKey) -> Result<Option<Outcome>, RecoverError> {
        let found = self
            .0
            .find(k.principal.clone(), k.key.clone(), k.operation_id.clone())
            .await
            .map_err(|e| e.to_string())?;
        Ok(found.map(|rec| {
            phases::outcome(
                &k.principal,
                Some(&k.key),
                Some(&k.operation_id),
                rec.amount,
                &rec.currency,
                rec.payment,
            )
        }))
    }
}
