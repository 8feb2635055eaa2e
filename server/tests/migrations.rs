//! A database made by 0.1.0 (its schema verbatim, with a completed key, its
//! charge and an undelivered receipt event in it) is migrated by instances
//! starting together, and then served: the old key replays byte for byte,
//! the old event gets its receipt, new charges work.

mod common;

use std::time::{Duration, Instant};

use common::*;
use idemkey_server::idem::fingerprint::Fingerprinter;
use idemkey_server::ids::now_ms;

const SECRET: [u8; 32] = [7; 32];
/// The answer 0.1.0 stored for the old key, byte for byte.
const OLD_ANSWER: &str = r#"{"id":"ch_old1","object":"charge","key":"old-key","customer":"CUSTOMER","amount":4200,"currency":"usd","status":"succeeded","provider_ref":"pay_old1","created_at":1700000000000}"#;

/// The 0.1.0 schema and its rows, for `customer`.
fn old_database(db: &Db, customer: &str) {
    let (fixture, blob) = match db.backend {
        Backend::Sqlite => (
            include_str!("fixtures/schema-0.1.0-sqlite.sql"),
            "CAST({} AS BLOB)",
        ),
        Backend::Postgres => (
            include_str!("fixtures/schema-0.1.0-postgres.sql"),
            "convert_to({}, 'UTF8')",
        ),
    };
    let body: serde_json::Value = serde_json::from_str(BODY).unwrap();
    let fp = Fingerprinter::new(&SECRET).unwrap().of(&body);
    let now = now_ms();
    let answer = OLD_ANSWER.replace("CUSTOMER", customer);
    let q = Db::quote;
    let c = q(customer);
    let rows = format!(
        "INSERT INTO idempotency_keys (customer, idem_key, fingerprint, reservation, state, lock_owner,
             locked_at, created_at, expires_at, response_status, response_type, response_body, charge_id)
         VALUES ({c}, 'old-key', {fp}, 'op_old1', 'done', 'old', {now}, {now}, {exp}, 201,
             'application/json', {body}, 'ch_old1');
         INSERT INTO charges (id, customer, idem_key, reservation, amount, currency, status, provider_ref, created_at)
         VALUES ('ch_old1', {c}, 'old-key', 'op_old1', 4200, 'usd', 'succeeded', 'pay_old1', {now});
         INSERT INTO outbox_events (id, kind, customer, charge_id, amount, currency, created_at, available_at)
         VALUES ('evt_old1', 'charge.succeeded', {c}, 'ch_old1', 4200, 'usd', {now}, {now});",
        fp = q(&fp),
        exp = now + 86_400_000,
        body = blob.replace("{}", &q(&answer)),
    );
    match db.backend {
        Backend::Sqlite => {
            let conn = rusqlite::Connection::open(&db.file).unwrap();
            conn.execute_batch(fixture).unwrap();
            conn.execute_batch(&rows).unwrap();
        }
        Backend::Postgres => {
            db.sql(&format!("{fixture}\n{rows}"));
        }
    }
}

/// The versions of `scope` the database records, in order.
fn versions(db: &Db, scope: &str) -> String {
    db.sql(&match db.backend {
        Backend::Sqlite => format!(
            "SELECT group_concat(version) FROM (SELECT version FROM schema_migrations
                            WHERE scope = '{scope}' ORDER BY version)"
        ),
        Backend::Postgres => format!(
            "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations
                              WHERE scope = '{scope}'"
        ),
    })
    .unwrap_or_default()
}

fn a_database_of_0_1_0_is_migrated_and_serves_its_old_keys(b: Backend) {
    let db = Db::new(b);
    let customer = uid("old");
    old_database(&db, &customer);
    let versioned = db.sql(match b {
        Backend::Sqlite => "SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'",
        Backend::Postgres => "SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations'",
    });
    assert_eq!(versioned.as_deref(), Some("0"), "0.1.0 kept no versions");
    let secret = db.dir().join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    let secret = secret.to_str().unwrap().to_string();
    let args = [
        "--fingerprint-secret-file",
        &secret,
        "--provider-latency-ms",
        "5",
    ];
    // Three instances start at once on the old database: one migrates, the
    // others wait for it and find nothing to do.
    let servers: Vec<Server> = std::thread::scope(|s| {
        let starts: Vec<_> = (0..3)
            .map(|_| s.spawn(|| Server::start_on(&db, &args)))
            .collect();
        starts.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let want = match b {
        Backend::Sqlite => "1,2",
        Backend::Postgres => "1",
    };
    assert_eq!(
        versions(&db, "server"),
        want,
        "each migration recorded once"
    );
    // The key table's own migrations, under the crate's scope, reach the
    // server's database too (the route of each key came with them).
    let want = match b {
        Backend::Sqlite => "1,2,3,4",
        Backend::Postgres => "1,2,3",
    };
    assert_eq!(versions(&db, "idemkey"), want, "the crate's migrations");
    for s in &servers {
        let r = charge(s.addr, &customer, "old-key", BODY);
        assert_eq!(r.status, 201, "{}", r.text());
        assert!(r.replayed(), "the old key is not replayed");
        assert_eq!(
            r.text(),
            OLD_ANSWER.replace("CUSTOMER", &customer),
            "not byte for byte"
        );
        let changed = BODY.replace("4200", "4300");
        charge(s.addr, &customer, "old-key", &changed).assert_problem(422);
    }
    let addr = servers[0].addr;
    assert_eq!(charge_keys(&ledger(addr, &customer)), ["old-key"]);
    // The old event is delivered: one receipt.
    let t0 = Instant::now();
    loop {
        let receipts = get_json(addr, "/api/receipts", &customer);
        if receipts["count"] == 1 {
            assert_eq!(receipts["receipts"][0]["charge_id"], "ch_old1");
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no receipt for the old event: {receipts}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(charge(addr, &customer, "new-key", BODY).status, 201);
    assert_eq!(
        charge_keys(&ledger(addr, &customer)),
        ["old-key", "new-key"]
    );
}

fn a_database_migrated_by_a_newer_server_is_refused(b: Backend) {
    let db = Db::new(b);
    drop(Server::start_on(&db, &[]));
    db.sql("INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES ('server', 99, 'from the future', 0)");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_idemkey-server"))
        .args(["--addr", "127.0.0.1:0"])
        .args(db.args())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started on a newer schema");
    assert!(
        err.contains("version 99") && err.contains("newer release"),
        "{err}"
    );
}

both_stores!(
    a_database_of_0_1_0_is_migrated_and_serves_its_old_keys,
    a_database_migrated_by_a_newer_server_is_refused,
);
