//! The BroadcastChannel the tabs post notices on (core::sync::Notice texts, each sent with
//! the storage key of the record it is about), so a tab learns at once what the lock holder
//! stored. A small JS binding (glue.js): one channel for the page, which each checkout joins
//! as a member under its record's key; pages without BroadcastChannel keep the `storage`
//! event alone.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use super::js::text;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = chanOpen)]
    fn chan_open(name: &str, on_message: &Closure<dyn FnMut(JsValue)>) -> JsValue;
    #[wasm_bindgen(js_name = chanPost)]
    fn chan_post(member: &JsValue, message: &str);
    #[wasm_bindgen(js_name = chanClose)]
    fn chan_close(member: &JsValue);
}

/// A membership of the page's channel and its message callback; left when dropped. The
/// callback takes a `JsValue` (always a string) like the `storage` event listener does:
/// closures of one signature share their wasm-bindgen shims.
pub(crate) struct Channel {
    member: JsValue,
    _on_message: Closure<dyn FnMut(JsValue)>,
}

impl Channel {
    /// Joins under `name`; `None` where the page has no BroadcastChannel.
    pub(crate) fn open(name: &str, on_message: impl FnMut(String) + 'static) -> Option<Channel> {
        let mut on_message = on_message;
        let cb = Closure::<dyn FnMut(JsValue)>::new(move |m: JsValue| {
            on_message(text(&m).unwrap_or_default());
        });
        let member = chan_open(name, &cb);
        (!member.is_null()).then_some(Channel {
            member,
            _on_message: cb,
        })
    }

    /// Posts `message` to the other members of the name, in this page and the other tabs.
    pub(crate) fn post(&self, message: &str) {
        chan_post(&self.member, message);
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        chan_close(&self.member);
    }
}
