//! Payload fingerprints are keyed: HMAC-SHA256 under a secret that every
//! instance on a store and every restart share (kept in the store unless
//! `--fingerprint-secret-file` gives one), so what the server stores or
//! shows of a payload is no unkeyed hash of a card number.

mod common;

use sha2::{Digest, Sha256};

use common::*;

/// The fingerprint the first fault unit taken by `c` logged.
fn logged_fingerprint(s: &Server, c: &str) -> String {
    let f = get_json(s.addr, "/api/faults", c);
    f["taken"][0]["fingerprint"]
        .as_str()
        .unwrap_or_else(|| panic!("no fault taken: {f}"))
        .to_string()
}

/// Charges `key` with a fault unit that changes nothing but logs the fingerprint.
fn charge_logged(s: &Server, c: &str, key: &str) -> Resp {
    fault(s.addr, c, r#"{"mode":"delay-after-commit","delay_ms":0}"#);
    charge(s.addr, c, key, BODY)
}

fn instances_and_restarts_on_one_store_share_the_stored_secret(b: Backend) {
    let db = Db::new(b);
    let flags = ["--faults", "--provider-latency-ms", "5"];
    let one = Server::start_on(&db, &flags);
    let two = Server::start_on(&db, &flags);
    let (c, k) = (uid("fp"), uid("key"));
    let first = charge_logged(&one, &c, &k);
    assert_eq!(first.status, 201, "{}", first.text());
    // The same payload on the other instance is the same operation, not a 422.
    let on_two = charge(two.addr, &c, &k, BODY);
    assert!(on_two.replayed(), "{}", on_two.text());
    // Faults live in the memory of the instance that took them.
    let logged = logged_fingerprint(&one, &c);
    drop(one);
    drop(two);
    let again = Server::start_on(&db, &flags);
    let after_restart = charge(again.addr, &c, &k, BODY);
    assert!(after_restart.replayed(), "{}", after_restart.text());
    assert_eq!(after_restart.body, first.body);

    // Keyed: not the plain SHA-256 of the canonical body (card number included).
    let canonical = r#"{"amount":4200,"card":"4242424242424242","currency":"usd","items":[{"qty":2,"sku":"tee"}]}"#;
    let plain: String = Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(logged.starts_with("hmac-sha256:"), "{logged}");
    assert!(!logged.contains(&plain), "an unkeyed hash: {logged}");
    let stored = key_state_fingerprint(&db, &c, &k);
    assert_eq!(stored, logged, "one fingerprint, stored and shown");
}

fn key_state_fingerprint(db: &Db, c: &str, k: &str) -> String {
    db.sql(&format!(
        "SELECT fingerprint FROM idempotency_keys WHERE customer = {} AND idem_key = {}",
        Db::quote(c),
        Db::quote(k)
    ))
    .expect("a stored key")
}

fn a_secret_file_keys_the_fingerprints(b: Backend) {
    let db = Db::new(b);
    let (file_a, file_b) = (db.dir().join("a.secret"), db.dir().join("b.secret"));
    std::fs::write(&file_a, [b'a'; 32]).unwrap();
    std::fs::write(&file_b, [b'b'; 48]).unwrap();
    let with = |file: &std::path::Path| {
        let f = file.to_str().unwrap().to_string();
        Server::start_on(
            &db,
            &[
                "--faults",
                "--provider-latency-ms",
                "5",
                "--fingerprint-secret-file",
                &f,
            ],
        )
    };
    let (c, k) = (uid("fp-file"), uid("key"));
    let s = with(&file_a);
    assert_eq!(charge(s.addr, &c, &k, BODY).status, 201);
    drop(s);
    assert!(
        charge(with(&file_a).addr, &c, &k, BODY).replayed(),
        "same file, same key"
    );
    // Another secret: the same payload no longer matches what is stored.
    charge(with(&file_b).addr, &c, &k, BODY).assert_problem(422);
    assert_eq!(ledger(with(&file_a).addr, &c)["count"], 1);
}

both_stores!(
    instances_and_restarts_on_one_store_share_the_stored_secret,
    a_secret_file_keys_the_fingerprints,
);
