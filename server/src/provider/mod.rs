//! The downstream payment provider stand-in, and how the server reaches it.
//!
//! It behaves like an external API that accepts an idempotency key (Stripe's
//! does): it takes `--provider-latency-ms` to answer, records each payment,
//! and a second call with the same key gets the first answer instead of a
//! second payment. The server calls it outside its own transaction, with the
//! client's key qualified by customer and operation (`reservation`): retries
//! of one operation share it, while a key reused after its TTL is a new
//! operation and a new payment, as the TTL contract says.
//!
//! In process by default ([`Provider::local`], its table in a SQLite file);
//! with `--provider-url` over HTTP to `idemkey-server provider`.

pub mod local;
pub mod remote;

use serde::Serialize;

use self::local::Local;
use self::remote::Remote;

/// The test card the provider always declines (Stripe's "generic decline").
pub const DECLINED_CARD: &str = "4000000000000002";

/// The provider could not be reached or failed; nothing is known of the call.
#[derive(Debug, thiserror::Error)]
#[error("payment provider unavailable: {0}")]
pub struct ProviderError(pub String);

/// A card number as logs and `Debug` may show it: its last four characters.
pub struct MaskedCard<'a>(pub &'a str);

impl std::fmt::Debug for MaskedCard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // By characters, not bytes: a card from the network may be any text.
        let n = self.0.chars().count();
        let last: String = self.0.chars().skip(n.saturating_sub(4)).collect();
        write!(f, "\"****{last}\"")
    }
}

/// A payment request. Its `Debug` masks the card ([`MaskedCard`]).
#[derive(Clone)]
pub struct PaymentRequest {
    /// Customer scope.
    pub customer: String,
    /// The client's idempotency key (random for the naive endpoint).
    pub key: String,
    /// The operation id.
    pub reservation: String,
    /// Minor units.
    pub amount: u64,
    /// Currency code.
    pub currency: String,
    /// Card number, digits only.
    pub card: Option<String>,
}

impl std::fmt::Debug for PaymentRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaymentRequest")
            .field("customer", &self.customer)
            .field("key", &self.key)
            .field("reservation", &self.reservation)
            .field("amount", &self.amount)
            .field("currency", &self.currency)
            .field("card", &self.card.as_deref().map(MaskedCard))
            .finish()
    }
}

/// The provider's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    /// True if the card was charged.
    pub approved: bool,
    /// `pay_…`, the same on every deduplicated call.
    pub reference: String,
}

/// A payment as the provider recorded it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its answer.
    pub payment: Payment,
    /// Minor units it was asked for.
    pub amount: u64,
    /// Currency it was asked for.
    pub currency: String,
}

/// Per-customer counters, for tests and the demo.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// Calls received (deduplicated ones included).
    pub calls: i64,
    /// Distinct payments recorded.
    pub payments: i64,
}

/// The provider client; cheap to clone.
#[derive(Clone)]
pub enum Provider {
    /// The stand-in, in this process.
    Local(Local),
    /// `idemkey-server provider`, over HTTP.
    Remote(Remote),
}

impl Provider {
    /// Charges (or declines) once per (customer, key, reservation).
    pub async fn pay(&self, req: PaymentRequest) -> Result<Payment, ProviderError> {
        match self {
            Provider::Local(p) => p.pay(req).await,
            Provider::Remote(p) => p.pay(req).await,
        }
    }

    /// What the provider did under (customer, key, reservation), if anything.
    /// A lookup (as a real provider's "retrieve by idempotency key"), never a
    /// new payment, and not counted in `calls`.
    pub async fn find(
        &self,
        customer: String,
        key: String,
        reservation: String,
    ) -> Result<Option<Recorded>, ProviderError> {
        match self {
            Provider::Local(p) => p.find(customer, key, reservation).await,
            Provider::Remote(p) => p.find(customer, key, reservation).await,
        }
    }

    /// Counters for one customer.
    pub async fn stats(&self, customer: String) -> Result<Stats, ProviderError> {
        match self {
            Provider::Local(p) => p.stats(customer).await,
            Provider::Remote(p) => p.stats(customer).await,
        }
    }

    /// Forgets one customer's payments (ledger reset, `--faults` only).
    pub async fn delete_customer(&self, customer: String) -> Result<(), ProviderError> {
        match self {
            Provider::Local(p) => p.delete_customer(customer).await,
            Provider::Remote(p) => p.delete_customer(customer).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_masks_the_card() {
        let req = PaymentRequest {
            customer: "c".into(),
            key: "k".into(),
            reservation: "op_1".into(),
            amount: 100,
            currency: "usd".into(),
            card: Some("4242424242424242".into()),
        };
        let shown = format!("{req:?}");
        assert!(
            shown.contains("****4242") && !shown.contains("424242"),
            "{shown}"
        );
        // Any text: the mask counts characters, never cuts one.
        assert_eq!(format!("{:?}", MaskedCard("ééé€1234")), "\"****1234\"");
        assert_eq!(format!("{:?}", MaskedCard("€é")), "\"****€é\"");
    }
}
