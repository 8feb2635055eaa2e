//! The BroadcastChannel a scope's tabs post notices on (core::sync::Notice texts), so a
//! tab learns at once what the lock holder stored. A small JS binding (glue.js); pages
//! without BroadcastChannel keep the `storage` event alone.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = chanOpen)]
    fn chan_open(name: &str, on_message: &Closure<dyn FnMut(String)>) -> JsValue;
    #[wasm_bindgen(js_name = chanPost)]
    fn chan_post(chan: &JsValue, message: &str);
    #[wasm_bindgen(js_name = chanClose)]
    fn chan_close(chan: &JsValue);
}

/// An open channel and its message callback; closed when dropped.
pub(crate) struct Channel {
    chan: JsValue,
    _on_message: Closure<dyn FnMut(String)>,
}

impl Channel {
    /// Joins the channel `name`; `None` where the page has no BroadcastChannel.
    pub(crate) fn open(name: &str, on_message: impl FnMut(String) + 'static) -> Option<Channel> {
        let cb = Closure::<dyn FnMut(String)>::new(on_message);
        let chan = chan_open(name, &cb);
        (!chan.is_null()).then_some(Channel {
            chan,
            _on_message: cb,
        })
    }

    /// Posts `message` to the channel's other members (never to this one).
    pub(crate) fn post(&self, message: &str) {
        chan_post(&self.chan, message);
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        chan_close(&self.chan);
    }
}
