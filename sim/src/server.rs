//! The backend as the reference server keeps keys: the key, the charge and the answer
//! committed together; the same key and payload again replays the answer with
//! `Idempotent-Replayed: true`; the same key with another payload is refused (422); a key
//! whose first request still runs answers 409 with `Retry-After`. As a second mode it
//! forgets a key some time after it first saw it. Besides: faults before anything is
//! stored (5xx, 408, 425, 429 with `Retry-After`), and declines (402, a final failure that
//! charges nothing).

use std::collections::BTreeMap;

/// What the server holds for a key.
#[derive(Debug, Clone)]
enum Entry {
    /// Its first request runs.
    Running { body: String, first: f64 },
    /// Done: the answer stored with it.
    Done {
        body: String,
        first: f64,
        status: u16,
        answer: String,
    },
}

/// An HTTP answer as the server sends it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Status.
    pub status: u16,
    /// Body.
    pub body: String,
    /// `Retry-After`.
    pub retry_after: Option<String>,
    /// `Idempotent-Replayed`.
    pub replayed: Option<String>,
}

fn plain(status: u16, retry_after: Option<&str>) -> Reply {
    Reply {
        status,
        body: String::new(),
        retry_after: retry_after.map(Into::into),
        replayed: None,
    }
}

/// What the server does with a request that reached it.
pub enum Handled {
    /// Answers at once.
    Now(Reply),
    /// Starts the work; [`Server::commit`] finishes it.
    Started,
}

/// The server.
#[derive(Default)]
pub struct Server {
    keys: BTreeMap<String, Entry>,
    /// Keys it held and forgot.
    pub forgotten: Vec<String>,
    /// Forget a key this long after its first request (`None`: keep every key).
    pub forget_ms: Option<f64>,
    /// How many charges it made.
    pub charges: u64,
    /// Every order is the same basket: two orders' bodies, which differ only in the
    /// order's number the checks read, are the same payload to the server.
    pub same_basket: bool,
}

/// The payload as the server compares it: in a run of one basket, without the order's
/// number (`{"order":N,...}`).
fn payload(body: &str, same_basket: bool) -> &str {
    match body.find(',') {
        Some(i) if same_basket => &body[i + 1..],
        _ => body,
    }
}

impl Server {
    /// A server that keeps keys, or forgets each `forget_ms` after its first request.
    pub fn new(forget_ms: Option<f64>, same_basket: bool) -> Server {
        Server {
            forget_ms,
            same_basket,
            ..Server::default()
        }
    }

    /// A request with `key` and `body` reached the server at `now`; `decline`: the charge
    /// is declined if made.
    pub fn arrive(&mut self, key: &str, body: &str, now: f64, decline: bool) -> Handled {
        if let (Some(ttl), Some(e)) = (self.forget_ms, self.keys.get(key)) {
            let first = match e {
                Entry::Running { first, .. } | Entry::Done { first, .. } => *first,
            };
            if now >= first + ttl && matches!(e, Entry::Done { .. }) {
                self.keys.remove(key);
                self.forgotten.push(key.into());
            }
        }
        let same = |b: &str| payload(b, self.same_basket) == payload(body, self.same_basket);
        match self.keys.get(key) {
            Some(Entry::Running { body: b, .. }) if same(b) => Handled::Now(plain(409, Some("1"))),
            Some(Entry::Done {
                body: b,
                status,
                answer,
                ..
            }) if same(b) => Handled::Now(Reply {
                status: *status,
                body: answer.clone(),
                retry_after: None,
                replayed: Some("true".into()),
            }),
            Some(_) => Handled::Now(plain(422, None)),
            None => {
                let e = Entry::Running {
                    body: body.into(),
                    first: now,
                };
                self.keys.insert(key.into(), e);
                let _ = decline;
                Handled::Started
            }
        }
    }

    /// The first request of `key` is done: the charge (unless `decline`), stored
    /// with its answer, which is returned.
    pub fn commit(&mut self, key: &str, decline: bool) -> Reply {
        let (body, first) = match self.keys.get(key) {
            Some(Entry::Running { body, first }) => (body.clone(), *first),
            _ => return plain(500, None),
        };
        let (status, answer) = if decline {
            (402, "{\"error\":\"declined\"}".to_string())
        } else {
            self.charges += 1;
            (201, format!("{{\"charge\":{}}}", self.charges))
        };
        let e = Entry::Done {
            body,
            first,
            status,
            answer: answer.clone(),
        };
        self.keys.insert(key.into(), e);
        Reply {
            status,
            body: answer,
            retry_after: None,
            replayed: None,
        }
    }

    /// Whether the server's answer for `key` was a final failure (it charged nothing).
    pub fn failed(&self, key: &str) -> bool {
        matches!(self.keys.get(key), Some(Entry::Done { status, .. }) if !(200..300).contains(status))
    }
}

/// A fault before anything is stored: its answer.
pub fn fault(pick: usize, retry_after: bool) -> Reply {
    let statuses = [503, 500, 502, 504, 408, 425, 429];
    let s = statuses[pick % statuses.len()];
    let ra = (retry_after && matches!(s, 503 | 429 | 425)).then_some("1");
    plain(s, ra)
}
