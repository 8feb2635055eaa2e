//! One test's own customer and scope, and what a test asks of them: options with an event
//! recorder, a checkout, the record as Web Storage holds it, the customer's ledger.

use idemkey::core::record::Record;
use js_sys::Function;
use wasm_bindgen::JsValue;

use super::{
    js, ledger, local, num, open, record_key, recorded_opts, submit, text, Checkout, DECLINED,
};

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

    /// A declined card paid on `c`: the scope's record stored (state failed, in IndexedDB
    /// and localStorage) with nothing charged, the way a first submit stores a key; the
    /// declined key.
    pub async fn declined(&self, c: &Checkout) -> String {
        let r = submit(c, &js(DECLINED)).await.expect("a decline resolves");
        assert_eq!(num(&r, "status"), 402.0, "{r:?}");
        assert_eq!(self.stored().map(|r| r.key), Some(text(&r, "key")));
        text(&r, "key")
    }

    /// The keys of this customer's charges in the ledger.
    pub async fn ledger(&self) -> Vec<String> {
        ledger(&self.customer).await
    }
}
