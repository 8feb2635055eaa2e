//! Process-level behaviour: the one stdout line, graceful shutdown, the default
//! database path, flag errors, static files and CORS.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_idemkey-server");

fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
}

fn graceful_on(b: Backend, sig: &str) {
    let db = Db::new(b);
    let mut child = Command::new(BIN)
        .args([
            "--addr",
            "127.0.0.1:0",
            "--provider-latency-ms",
            "800",
            "--log-level",
            "warn",
        ])
        .args(db.args())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("listening on http://127.0.0.1:") && line.ends_with('\n'),
        "{line:?}"
    );
    let addr: std::net::SocketAddr = line
        .trim()
        .trim_start_matches("listening on http://")
        .parse()
        .unwrap();
    assert_ne!(addr.port(), 0, "the real port is printed");

    // A request in flight when the signal arrives still gets its answer.
    let inflight = std::thread::spawn(move || charge(addr, "c", "k", BODY));
    // Signal only once the request is inside the server (phase 1 committed),
    // not after a sleep that a slow machine could outrun.
    wait_reserved(&db, "c", "k");
    signal(child.id(), sig);
    let r = inflight.join().unwrap();
    assert_eq!(r.status, 201);
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "no exit after {sig}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status:?}");
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "stdout carries exactly one line");
}

fn one_stdout_line_and_graceful_shutdown_on_sigterm(b: Backend) {
    graceful_on(b, "-TERM");
}

fn graceful_shutdown_on_sigint(b: Backend) {
    graceful_on(b, "-INT");
}

#[test]
fn default_db_is_data_idemkey_db_and_its_directory_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["--addr", "127.0.0.1:0", "--log-level", "error"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on "));
    let exists = dir.path().join("data").join("idemkey.db").is_file();
    let _ = child.kill();
    let _ = child.wait();
    assert!(exists, "./data/idemkey.db was not created");
}

#[test]
fn bad_flags_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flags.db");
    let short = dir.path().join("short.secret");
    std::fs::write(&short, b"too short to key anything").unwrap();
    let short = short.to_str().unwrap();
    for args in [
        vec!["--fingerprint-secret-file", "/nonexistent/secret"],
        vec!["--fingerprint-secret-file", short],
        vec!["--key-ttl", "0"],
        vec!["--key-ttl", "soon"],
        vec!["--lock-timeout", "-1s"],
        // A TTL not far longer than the lock timeout.
        vec!["--key-ttl", "1m", "--lock-timeout", "30s"],
        vec!["--provider-latency-ms", "x"],
        vec!["--addr", "not-an-address"],
        vec!["--no-such-flag"],
        vec!["--replay-cache", "-1"],
        vec!["--replay-cache", "1000001"],
        // The ledger reset of --faults deletes keys other instances' caches hold.
        vec!["--replay-cache", "10", "--faults"],
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .arg("--db")
            .arg(&db)
            .args(["--log-level", "error"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        assert!(!out.stderr.is_empty(), "{args:?} gave no message");
    }
}

fn static_dir_at_root_and_pkg_dir_at_pkg_with_module_content_types(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(www.join("index.html"), "<!doctype html><title>demo</title>").unwrap();
    std::fs::write(www.join("app.js"), "export const x = 1;").unwrap();
    std::fs::write(pkg.join("idemkey_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(pkg.join("idemkey.js"), "export default 1;").unwrap();
    let s = Server::start_with(
        b,
        &[
            "--static",
            www.to_str().unwrap(),
            "--pkg",
            pkg.to_str().unwrap(),
        ],
    );

    let index = request(s.addr, "GET", "/", &[], b"");
    assert_eq!(index.status, 200);
    assert!(index
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert!(index.text().contains("<title>demo</title>"));
    let js = request(s.addr, "GET", "/app.js", &[], b"");
    assert_eq!(
        (js.status, js.header("content-type")),
        (200, Some("text/javascript"))
    );
    let wasm = request(s.addr, "GET", "/pkg/idemkey_bg.wasm", &[], b"");
    assert_eq!(
        (wasm.status, wasm.header("content-type")),
        (200, Some("application/wasm"))
    );
    assert_eq!(wasm.body, b"\0asm\x01\0\0\0");
    let glue = request(s.addr, "GET", "/pkg/idemkey.js", &[], b"");
    assert_eq!(
        (glue.status, glue.header("content-type")),
        (200, Some("text/javascript"))
    );
    assert_eq!(
        request(s.addr, "GET", "/missing.html", &[], b"").status,
        404
    );
    assert_eq!(
        request(s.addr, "GET", "/pkg/../www/index.html", &[], b"").status / 100,
        4,
        "no path traversal"
    );
    // The API still wins over the static fallback.
    request(s.addr, "GET", "/api/unknown", &[], b"").assert_problem(404);
    assert_eq!(request(s.addr, "GET", "/healthz", &[], b"").status, 200);
}

fn cors_flag_answers_preflights_and_exposes_the_idempotency_headers(b: Backend) {
    let s = Server::start_with(b, &["--cors", "--provider-latency-ms", "5"]);
    let origin = "http://127.0.0.1:9999";
    let pre = request(
        s.addr,
        "OPTIONS",
        "/api/charges",
        &[
            ("Origin", origin),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type,idempotency-key,x-customer-id",
            ),
        ],
        b"",
    );
    assert_eq!(pre.status / 100, 2);
    assert_eq!(pre.header("access-control-allow-origin"), Some(origin));
    assert!(pre
        .header("access-control-allow-methods")
        .unwrap()
        .to_ascii_uppercase()
        .contains("POST"));
    assert!(pre
        .header("access-control-allow-headers")
        .unwrap()
        .to_ascii_lowercase()
        .contains("idempotency-key"));
    let r = request(
        s.addr,
        "POST",
        "/api/charges",
        &[
            ("Origin", origin),
            ("Content-Type", "application/json"),
            ("Idempotency-Key", "cors-1"),
        ],
        BODY.as_bytes(),
    );
    assert_eq!(r.status, 201);
    assert_eq!(r.header("access-control-allow-origin"), Some(origin));
    let exposed = r
        .header("access-control-expose-headers")
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        exposed.contains("idempotent-replayed") && exposed.contains("retry-after"),
        "{exposed}"
    );

    let plain = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let r = request(
        plain.addr,
        "GET",
        "/api/charges",
        &[("Origin", origin)],
        b"",
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin"),
        None,
        "no CORS without --cors"
    );
}

both_stores!(
    one_stdout_line_and_graceful_shutdown_on_sigterm,
    graceful_shutdown_on_sigint,
    static_dir_at_root_and_pkg_dir_at_pkg_with_module_content_types,
    cors_flag_answers_preflights_and_exposes_the_idempotency_headers,
);
