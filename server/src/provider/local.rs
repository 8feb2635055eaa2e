//! The provider stand-in itself: a latency, then one payment per key and
//! operation in its own table. Used in process, and by `idemkey-server provider`.

use std::path::Path;
use std::time::Duration;

use super::{Payment, PaymentRequest, ProviderError, Recorded, Stats, DECLINED_CARD};
use crate::store::sqlite::provider_payments::{PaymentRow, ProviderPayments};
use crate::store::StoreError;

impl From<StoreError> for ProviderError {
    fn from(e: StoreError) -> ProviderError {
        ProviderError(e.to_string())
    }
}

/// The stand-in; cheap to clone.
#[derive(Clone)]
pub struct Local {
    payments: ProviderPayments,
    latency: Duration,
}

impl Local {
    /// A stand-in keeping its payments in the SQLite file `db`, answering
    /// after `latency`.
    pub fn open(db: &Path, latency: Duration) -> Result<Local, String> {
        Ok(Local {
            payments: ProviderPayments::open(db)?,
            latency,
        })
    }

    /// Charges (or declines) once per (customer, key, reservation).
    pub async fn pay(&self, req: PaymentRequest) -> Result<Payment, ProviderError> {
        tokio::time::sleep(self.latency).await;
        let approved = req.card.as_deref() != Some(DECLINED_CARD);
        let (approved, reference) = self
            .payments
            .pay_once(PaymentRow {
                customer: req.customer,
                key: req.key,
                reservation: req.reservation,
                amount: req.amount,
                currency: req.currency,
                approved,
            })
            .await?;
        Ok(Payment {
            approved,
            reference,
        })
    }

    /// What was recorded under (customer, key, reservation).
    pub async fn find(
        &self,
        customer: String,
        key: String,
        reservation: String,
    ) -> Result<Option<Recorded>, ProviderError> {
        let found = self.payments.find(customer, key, reservation).await?;
        Ok(
            found.map(|(approved, reference, amount, currency)| Recorded {
                payment: Payment {
                    approved,
                    reference,
                },
                amount,
                currency,
            }),
        )
    }

    /// Counters for one customer.
    pub async fn stats(&self, customer: String) -> Result<Stats, ProviderError> {
        let (calls, payments) = self.payments.stats(customer).await?;
        Ok(Stats { calls, payments })
    }

    /// Forgets one customer's payments.
    pub async fn delete_customer(&self, customer: String) -> Result<(), ProviderError> {
        self.payments.delete_customer(customer).await?;
        Ok(())
    }
}
