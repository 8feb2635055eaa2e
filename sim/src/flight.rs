//! A try in flight between a page and the server, as the world keeps it (net.rs moves it).

use crate::ids::PageId;

/// One try in flight.
pub struct Req {
    /// The page that sent it.
    pub page: PageId,
    /// Its machine.
    pub inst: u64,
    /// Its key.
    pub key: String,
    /// Its body.
    pub body: String,
    /// Answered, failed or timed out: nothing more reaches the page.
    pub done: bool,
    /// The server declines the charge, if it makes one.
    pub decline: bool,
    /// How long before its key's expiry it left, ms (by its page's clock; negative: after).
    pub before_expiry: f64,
}

impl Req {
    /// Whether it is `page`'s and still on its way.
    pub fn from(&self, page: PageId) -> bool {
        self.page == page && !self.done
    }
}
