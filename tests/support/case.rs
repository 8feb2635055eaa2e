//! One test's own customer and scope, and what a test asks of them: options with an event
//! recorder, a checkout, the record as Web Storage holds it, the customer's ledger.

use idemkey::core::record::Record;
use js_sys::Function;
use wasm_bindgen::JsValue;

use super::{ledger, local, open, record_key, recorded_opts, until, Checkout};

/// A new customer and a new scope, so a test shares no record or charge with another.
pub struct Case {
    /// The `X-Customer-Id` of the test's requests.
    pub customer: String,
    /// The checkout scope, named after what the test does.
    pub scope: String,
}

impl Case {
    /// A new customer, and a new scope starting with `what`.
    pub fn new(what: &str) -> Case {
        let (customer, scope) = (super::uniq("cust"), super::uniq(what));
        Case { customer, scope }
    }

    /// Options for this case plus `extra`, with a new recorder as `onEvent`.
    pub fn opts(&self, extra: &str) -> (JsValue, Function) {
        recorded_opts(&self.scope, &self.customer, extra)
    }

    /// [`open`] with [`Case::opts`]: the checkout and its recorder.
    pub fn open(&self, extra: &str) -> (Checkout, Function) {
        let (o, ev) = self.opts(extra);
        (open(&o), ev)
    }

    /// The key of this scope's record in Web Storage.
    pub fn key(&self) -> String {
        record_key("idemkey", &self.scope)
    }

    /// The record in localStorage.
    pub fn stored(&self) -> Option<Record> {
        let text = local().get_item(&self.key()).unwrap();
        text.map(|t| Record::decode(&t).expect("the stored record reads"))
    }

    /// Waits until the scope's record is stored (after a `reset()`, which stores its new key
    /// with the lock, in the background); panics after 10 s.
    pub async fn wait_stored(&self) {
        assert!(
            until(|| self.stored().is_some(), 10_000.0).await,
            "the new key was not stored within 10 s"
        );
    }

    /// The keys of this customer's charges in the ledger.
    pub async fn ledger(&self) -> Vec<String> {
        ledger(&self.customer).await
    }
}
