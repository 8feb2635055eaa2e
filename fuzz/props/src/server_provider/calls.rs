//! The calls the provider service's property makes: its API's requests with customers,
//! keys, operations and bodies that are valid, nearly valid or garbage.

use arbitrary::{Result, Unstructured};
use idemkey_server::provider::DECLINED_CARD;
use serde_json::{json, Value};

const KEYS: &[&str] = &["k1", "k2", "\"k1\""];
pub(super) const OPS: &[&str] = &["op_1", "op_2", "op 3&x=%"];

/// A header value: one of a few valid ones, or arbitrary bytes.
fn header(u: &mut Unstructured, valid: &[&str]) -> Result<Option<Vec<u8>>> {
    Ok(match u.int_in_range(0..=7)? {
        0 => None,
        1 => Some(u.arbitrary::<Vec<u8>>()?),
        2 => Some(valid[0].repeat(u.int_in_range(100..=300)?).into_bytes()),
        n => Some(valid[n as usize % valid.len()].as_bytes().to_vec()),
    })
}

/// A JSON value for a member: the right type mostly, sometimes not.
fn member(u: &mut Unstructured, good: Value) -> Result<Option<Value>> {
    Ok(match u.int_in_range(0..=9)? {
        0 => None,
        1 => Some(Value::Null),
        2 => Some(json!(u.arbitrary::<String>()?)),
        3 => Some(json!(u.arbitrary::<i64>()?)),
        4 => Some(json!(u.arbitrary::<u64>()?)),
        5 => Some(json!(u.arbitrary::<f64>()?)),
        _ => Some(good),
    })
}

#[derive(Debug)]
pub(super) enum Call {
    Pay {
        customer: Option<Vec<u8>>,
        key: Option<Vec<u8>>,
        body: Vec<u8>,
    },
    Find {
        customer: Option<Vec<u8>>,
        key: Option<Vec<u8>>,
        query: String,
    },
    Stats(Option<Vec<u8>>),
    Forget(Option<Vec<u8>>),
    Other {
        method: Vec<u8>,
        path: String,
        body: Vec<u8>,
    },
}

pub(super) fn call(u: &mut Unstructured, me: &str) -> Result<Call> {
    let customers = [me, me, me, "someone-else"];
    Ok(match u.int_in_range(0..=9)? {
        0..=4 => {
            let body = if u.ratio(1, 8)? {
                u.arbitrary::<Vec<u8>>()?
            } else {
                let mut b = serde_json::Map::new();
                let op = OPS[u.choose_index(OPS.len())?];
                let card = [DECLINED_CARD, "4242424242424242"][u.choose_index(2)?];
                let fields = [
                    ("operation", json!(op)),
                    ("amount", json!(u.int_in_range(0..=100_000_000u64)?)),
                    (
                        "currency",
                        json!(["usd", "eur", "USD", ""][u.choose_index(4)?]),
                    ),
                    ("card", json!(card)),
                ];
                for (name, good) in fields {
                    if let Some(v) = member(u, good)? {
                        b.insert(name.into(), v);
                    }
                }
                if u.ratio(1, 10)? {
                    b.insert(u.arbitrary()?, json!(u.arbitrary::<String>()?));
                }
                serde_json::to_vec(&b).expect("a map serialises")
            };
            Call::Pay {
                customer: header(u, &customers)?,
                key: header(u, KEYS)?,
                body,
            }
        }
        5 | 6 => {
            let query = if u.ratio(1, 6)? {
                u.arbitrary()?
            } else {
                let op = OPS[u.choose_index(OPS.len())?];
                format!("operation={}", form_encode(op))
            };
            Call::Find {
                customer: header(u, &customers)?,
                key: header(u, KEYS)?,
                query,
            }
        }
        7 => Call::Stats(header(u, &customers)?),
        8 => Call::Forget(header(u, &customers)?),
        _ => Call::Other {
            method: u.arbitrary()?,
            path: u.arbitrary()?,
            body: u.arbitrary()?,
        },
    })
}

/// `s` as a form-urlencoded value.
pub(super) fn form_encode(s: &str) -> String {
    s.replace('%', "%25")
        .replace(' ', "+")
        .replace('&', "%26")
        .replace('=', "%3D")
}
