//! On PostgreSQL every statement is bounded by the database itself, not only
//! by the caller's wait: a statement that outlives its timeout is cancelled
//! by the server, so nothing keeps running on a connection that went back to
//! the pool; and the pool's size and waits are settings.

mod common;

use std::str::FromStr;
use std::time::{Duration, Instant};

use idemkey_axum::postgres;

use common::pg;

/// A fresh database's URL.
async fn url() -> String {
    tokio::task::spawn_blocking(|| pg::Pg::shared().fresh_database())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_longer_than_the_default_timeout_is_cancelled_by_the_database() {
    let pool = postgres::pool(tokio_postgres::Config::from_str(&url().await).unwrap()).unwrap();
    let c = pool.get().await.unwrap();
    let started = Instant::now();
    let slept = tokio::time::timeout(
        Duration::from_secs(15),
        c.batch_execute("SELECT pg_sleep(30)"),
    )
    .await
    .expect("the database let the statement run on");
    let e = slept.expect_err("a 30 s statement");
    assert_eq!(
        e.code().map(|c| c.code()),
        Some("57014"),
        "cancelled by statement_timeout: {e}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_and_its_statements_are_bounded_as_the_settings_say() {
    let cfg = tokio_postgres::Config::from_str(&url().await).unwrap();
    let settings = postgres::PgSettings::default()
        .max_connections(1)
        .wait(Duration::from_millis(300))
        .statement_timeout(Duration::from_millis(300))
        .op_timeout(Duration::from_secs(1));
    let pool = postgres::pool_with(cfg.clone(), settings).unwrap();
    let c = pool.get().await.unwrap();
    let started = Instant::now();
    let e = c.batch_execute("SELECT pg_sleep(3)").await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("57014"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // One connection: a second caller waits the setting's wait, then fails.
    let started = Instant::now();
    assert!(pool.get().await.is_err(), "the pool holds one connection");
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(c);
    // A migration is not bound by it.
    let mut c = pool.get().await.unwrap();
    const SLOW: &[idemkey_axum::Migration] = &[idemkey_axum::Migration {
        version: 1,
        name: "slow",
        sql: &["SELECT pg_sleep(0.5)"],
    }];
    postgres::migrate(&mut c, "slow", SLOW).await.unwrap();

    // Settings out of range are refused, and say which.
    for (bad, says) in [
        (
            postgres::PgSettings::default().max_connections(0),
            "connection",
        ),
        (postgres::PgSettings::default().wait(Duration::ZERO), "wait"),
        (
            postgres::PgSettings::default().statement_timeout(Duration::from_secs(60)),
            "statement timeout",
        ),
    ] {
        let e = postgres::pool_with(cfg.clone(), bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}");
    }
}
