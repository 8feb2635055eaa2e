//! Two parsers that disagree on where a request ends are how requests are
//! smuggled. The same ambiguous framings go to the server directly (hyper
//! frames them) and through nginx (nginx frames them, then hyper reads what
//! nginx forwards). Each first request is a charge, followed on the same
//! connection by a second, "smuggled" charge; what the two fronts let reach
//! the application is compared:
//! - where both accept the first request, both charge it alike, and every
//!   request the server served nginx served too, alike (the server closes
//!   after a chunked request, so it may serve fewer);
//! - after a first request the server refuses, nothing else on the
//!   connection is served;
//! - the server accepts nothing nginx refuses, but for the framings listed
//!   with the rule that makes them unambiguous.
//!
//! Where nginx accepts and hyper refuses (`5 x` as a chunk size, bare LF in
//! chunked framing) the server is the stricter one, which is safe.

mod common;

use std::net::SocketAddr;

use common::nginx::Nginx;
use common::*;

const FIRST: &str = r#"{"amount":4200,"currency":"usd"}"#;
const SMUGGLED: &str = r#"{"amount":666,"currency":"usd"}"#;

/// The head of a charge by `customer` with `key` and these framing lines.
fn head(customer: &str, key: &str, lines: &[&str]) -> String {
    let mut h = format!(
        "POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Customer-Id: {customer}\r\nIdempotency-Key: {key}\r\n"
    );
    for l in lines {
        h.push_str(l);
        h.push_str("\r\n");
    }
    h.push_str("\r\n");
    h
}

/// The second request: a charge of 666 that closes the connection.
fn smuggled(customer: &str) -> String {
    let cl = format!("Content-Length: {}", SMUGGLED.len());
    format!(
        "{}{SMUGGLED}",
        head(customer, "smuggled", &[&cl, "Connection: close"])
    )
}

fn chunk(body: &str) -> String {
    format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len())
}

/// One ambiguous framing: its name, its bytes for a customer, and, when the
/// server may accept what nginx refuses, the rule that makes it unambiguous
/// and whether the server must close the connection after it.
struct Case {
    name: &'static str,
    bytes: fn(&str) -> String,
    looser: Option<(&'static str, bool)>,
}

const fn case(name: &'static str, bytes: fn(&str) -> String) -> Case {
    Case {
        name,
        bytes,
        looser: None,
    }
}

fn cl() -> String {
    format!("Content-Length: {}", FIRST.len())
}

fn cases() -> Vec<Case> {
    vec![
        case("cl-then-te", |c| format!("{}{}{}", head(c, "a", &[&cl(), "Transfer-Encoding: chunked"]), chunk(FIRST), smuggled(c))),
        Case {
            name: "te-then-cl",
            bytes: |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding: chunked", &cl()]), chunk(FIRST), smuggled(c)),
            looser: Some(("Transfer-Encoding overrides Content-Length (RFC 9112, 6.3)", true)),
        },
        case("te-gzip-chunked", |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding: gzip, chunked"]), chunk(FIRST), smuggled(c))),
        case("te-chunked-gzip", |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding: chunked, gzip"]), chunk(FIRST), smuggled(c))),
        case("te-twice", |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"]), chunk(FIRST), smuggled(c))),
        case("te-identity", |c| format!("{}{FIRST}{}", head(c, "a", &["Transfer-Encoding: identity", &cl()]), smuggled(c))),
        case("te-space-before-colon", |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding : chunked"]), chunk(FIRST), smuggled(c))),
        case("te-xchunked", |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding: xchunked"]), chunk(FIRST), smuggled(c))),
        Case {
            name: "te-tab",
            bytes: |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding:\tchunked"]), chunk(FIRST), smuggled(c)),
            looser: Some(("a tab is optional whitespace around a field value (RFC 9110, 5.6.3): this is `chunked`", true)),
        },
        Case {
            name: "cl-twice-equal",
            bytes: |c| format!("{}{FIRST}{}", head(c, "a", &[&cl(), &cl()]), smuggled(c)),
            looser: Some(("equal Content-Length values are one valid length (RFC 9110, 8.6): every reading ends the body at the same byte", false)),
        },
        case("cl-twice-different", |c| format!("{}{FIRST}{}", head(c, "a", &[&cl(), "Content-Length: 0"]), smuggled(c))),
        case("cl-list", |c| format!("{}{FIRST}{}", head(c, "a", &[&format!("Content-Length: {0}, {0}", FIRST.len())]), smuggled(c))),
        case("cl-plus", |c| format!("{}{FIRST}{}", head(c, "a", &[&format!("Content-Length: +{}", FIRST.len())]), smuggled(c))),
        case("cl-space-inside", |c| format!("{}{FIRST}{}", head(c, "a", &["Content-Length: 3 2"]), smuggled(c))),
        case("cl-leading-zero", |c| format!("{}{FIRST}{}", head(c, "a", &[&format!("Content-Length: 0{}", FIRST.len())]), smuggled(c))),
        case("cl-nul", |c| format!("{}{FIRST}{}", head(c, "a", &[&format!("Content-Length: {}\0", FIRST.len())]), smuggled(c))),
        case("chunk-size-space-x", |c| format!("{}{:x} x\r\n{FIRST}\r\n0\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-size-0x", |c| format!("{}0x{:x}\r\n{FIRST}\r\n0\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-size-overflow", |c| format!("{}10000000000000000{:x}\r\n{FIRST}\r\n0\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-ext-after-space", |c| format!("{}{:x} ;a=b\r\n{FIRST}\r\n0\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-ext", |c| format!("{}{:x};a=b\r\n{FIRST}\r\n0\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-bare-lf", |c| format!("{}{:x}\n{FIRST}\n0\n\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-no-crlf-after-data", |c| format!("{}{:x}\r\n{FIRST}0\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("chunk-trailer", |c| format!("{}{:x}\r\n{FIRST}\r\n0\r\nX-T: 1\r\n\r\n{}", head(c, "a", &["Transfer-Encoding: chunked"]), FIRST.len(), smuggled(c))),
        case("head-bare-lf", |c| format!("{}{FIRST}{}", head(c, "a", &[&cl()]).replace("\r\n", "\n"), smuggled(c))),
        case("head-bare-cr", |c| format!("{}{FIRST}{}", head(c, "a", &["X: y\rZ: w", &cl()]), smuggled(c))),
        case("obs-fold-length", |c| format!("{}{FIRST}{}", head(c, "a", &["X: y", " Content-Length: 0", &cl()]), smuggled(c))),
        case("http10-chunked", |c| format!("{}{}{}", head(c, "a", &["Transfer-Encoding: chunked"]).replace("HTTP/1.1", "HTTP/1.0"), chunk(FIRST), smuggled(c))),
        case("http10-length", |c| format!("{}{FIRST}{}", head(c, "a", &[&cl()]).replace("HTTP/1.1", "HTTP/1.0"), smuggled(c))),
        case("no-length", |c| format!("{}{FIRST}{}", head(c, "a", &[]), smuggled(c))),
        case("host-twice", |c| format!("{}{FIRST}{}", head(c, "a", &["Host: y", &cl()]), smuggled(c))),
    ]
}

/// What one front made of a case: the first answer's status (`None`: no
/// answer), every status, and the charges it led to.
#[derive(Debug)]
struct Seen {
    first: Option<u16>,
    statuses: Vec<u16>,
    charges: Vec<(String, u64)>,
}

fn run(front: SocketAddr, server: SocketAddr, customer: &str, bytes: &str) -> Seen {
    let statuses: Vec<u16> = raw_all(front, bytes.as_bytes())
        .iter()
        .map(|r| r.status)
        .collect();
    let mut charges: Vec<(String, u64)> = ledger(server, customer)["charges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["key"].as_str().unwrap().to_string(),
                c["amount"].as_u64().unwrap(),
            )
        })
        .collect();
    charges.sort();
    Seen {
        first: statuses.first().copied(),
        statuses,
        charges,
    }
}

fn accepted(s: &Seen) -> bool {
    s.first.is_some_and(|st| (200..300).contains(&st))
}

#[test]
fn hyper_and_nginx_agree_on_where_requests_end() {
    let server = Server::start_with(Backend::Sqlite, &["--provider-latency-ms", "2"]);
    let nginx = Nginx::start(server.addr);
    let tag = uid("agree");
    let mut wrong = Vec::new();
    let mut table = Vec::new();
    for case in cases() {
        let (cd, cn) = (
            format!("{tag}-{}-d", case.name),
            format!("{tag}-{}-n", case.name),
        );
        let direct = run(server.addr, server.addr, &cd, &(case.bytes)(&cd));
        let proxied = run(nginx.addr, server.addr, &cn, &(case.bytes)(&cn));
        table.push(format!(
            "{:<26} hyper {:?} {:?} | nginx {:?} {:?}",
            case.name, direct.statuses, direct.charges, proxied.statuses, proxied.charges
        ));
        if direct.statuses.iter().any(|&s| s >= 500) {
            wrong.push(format!(
                "{}: the server answered {:?}",
                case.name, direct.statuses
            ));
        }
        let first_only = [("a".to_string(), 4200)];
        let both_readings = [("a".to_string(), 4200), ("smuggled".to_string(), 666)];
        match (accepted(&direct), accepted(&proxied)) {
            (true, true)
                if !direct.charges.contains(&first_only[0])
                    || !direct.charges.iter().all(|c| proxied.charges.contains(c)) =>
            {
                wrong.push(format!(
                    "{}: both accept, but hyper made {:?} and nginx {:?}",
                    case.name, direct.charges, proxied.charges
                ))
            }
            (false, _) if !direct.charges.is_empty() => wrong.push(format!(
                "{}: the server refused the first request ({:?}) and still served {:?}",
                case.name, direct.first, direct.charges
            )),
            (true, false) => match case.looser {
                None => wrong.push(format!(
                    "{}: nginx refuses ({:?}) what the server accepts ({:?} {:?})",
                    case.name, proxied.first, direct.first, direct.charges
                )),
                Some((_, closes)) => {
                    let fine = direct.charges == first_only
                        || (!closes && direct.charges == both_readings);
                    if !fine {
                        wrong.push(format!(
                            "{}: accepted, but charged {:?}",
                            case.name, direct.charges
                        ))
                    }
                }
            },
            _ => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n\nall cases:\n{}",
        wrong.join("\n"),
        table.join("\n")
    );
    eprintln!("{}", table.join("\n"));
}
