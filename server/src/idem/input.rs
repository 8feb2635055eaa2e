//! A charge request as the phases take it: validated, its raw body kept for
//! the payload fingerprint.

use serde_json::Value;

use crate::provider::MaskedCard;

/// A validated charge request.
#[derive(Clone)]
pub struct ChargeInput {
    /// The body as sent (its fingerprint identifies the payload).
    pub raw: Value,
    /// Minor units, at least 1.
    pub amount: u64,
    /// Lowercase currency code.
    pub currency: String,
    /// Card number, digits only.
    pub card: Option<String>,
}

/// Written by hand so that no log line, at any level, can carry the card
/// number: the body is left out and the card shows its last four digits.
impl std::fmt::Debug for ChargeInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let card = self.card.as_deref().map(MaskedCard);
        f.debug_struct("ChargeInput")
            .field("amount", &self.amount)
            .field("currency", &self.currency)
            .field("card", &card)
            .finish_non_exhaustive()
    }
}
