//! Every limit and timeout of the HTTP layer, in one place.
//!
//! hyper enforces the head ones (its `http1::Builder` settings, in
//! `accept`), tower-http the body ones (layers, in `rules`), the socket
//! wrapper the write deadline and the lingering close, the accept loop the
//! connection cap. Values are what a payment API needs, not what a file
//! server would: heads are small, bodies at most 64 KiB.

use std::time::Duration;

/// Largest accepted request body (a charge, a fault request): beyond it, 413.
pub const BODY_LIMIT: usize = 64 * 1024;
/// Longest request target (path and query), in bytes: beyond it, 414.
pub const MAX_URI_LEN: usize = 8 * 1024;
/// Largest request head: hyper's read buffer (a head that does not fit is
/// refused with 431; it bounds the memory of a connection that dribbles a
/// head, too), and exactly so by the request rules.
pub const MAX_HEAD_LEN: usize = 32 * 1024;
/// Most header lines in one head: beyond it, hyper answers 431.
pub const MAX_HEADERS: usize = 100;

/// Time allowed for a whole request head, from when hyper starts waiting
/// for one (an idle keep-alive connection included); then hyper closes the
/// connection without an answer.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Time allowed for a whole request body, from when the request reached the
/// router (64 KiB in 10 s is 6.5 KB/s: any real client is far faster): then
/// 408, and the connection closes.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a response write may make no progress (a client that never reads)
/// before the connection is cut.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Once an answer is sent and the write side shut, the connection is read
/// and discarded for up to this long (or [`LINGER_LIMIT`] bytes) before it
/// is closed, so that the answer is not destroyed by a reset.
pub const LINGER_TIMEOUT: Duration = Duration::from_secs(2);
/// Most bytes discarded while lingering.
pub const LINGER_LIMIT: usize = 8 * 1024 * 1024;

/// File descriptors kept free of connections: the listener, stdio, the
/// database files of every pooled connection, the provider's.
pub const FD_RESERVE: usize = 64;
/// Connections served at once when the file limit is unknown or tiny, and at
/// most ever.
pub const MIN_CONNECTIONS: usize = 16;
/// Most connections served at once, whatever the file limit: each may hold
/// a read buffer of up to [`MAX_HEAD_LEN`], so this bounds that memory too
/// (about 4096 × 32 KiB at worst).
pub const MAX_CONNECTIONS: usize = 4096;
/// First and longest pause after a failed `accept` (EMFILE, ENFILE, ENOBUFS);
/// the pause doubles while accept keeps failing.
pub const ACCEPT_BACKOFF: (Duration, Duration) =
    (Duration::from_millis(10), Duration::from_secs(1));

/// How many connections are served at once: the soft open-file limit less
/// [`FD_RESERVE`], within [`MIN_CONNECTIONS`]..=[`MAX_CONNECTIONS`]. Beyond
/// it new connections wait in the listen backlog instead of making `accept`
/// fail with EMFILE for everyone.
pub fn max_connections() -> usize {
    open_file_limit()
        .unwrap_or(1024)
        .saturating_sub(FD_RESERVE)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// The soft RLIMIT_NOFILE, from `/proc/self/limits` (Linux; `None` elsewhere
/// or when unlimited).
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    parse_open_files(&limits)
}

fn parse_open_files(limits: &str) -> Option<usize> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_file_limit_is_read() {
        let sample = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max open files            256                  4096                 files     \n";
        assert_eq!(parse_open_files(sample), Some(256));
        assert_eq!(
            parse_open_files("Max open files  unlimited  unlimited  files"),
            None
        );
        assert_eq!(parse_open_files(""), None);
        let n = max_connections();
        assert!((MIN_CONNECTIONS..=MAX_CONNECTIONS).contains(&n), "{n}");
    }
}
