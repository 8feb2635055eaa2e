//! The guard: every connection's bytes pass through it before hyper sees them.
//!
//! hyper refuses a malformed head with an empty body, accepts some ambiguous
//! ones, and never times out a stalled body. The guard reads each head itself
//! ([`HeadParser`]) and passes it on only once it is whole and acceptable;
//! a refusal becomes a problem+json answer written after any answers still
//! owed on the connection, and then the connection is drained briefly and
//! closed (so the answer is not destroyed by a reset). It delimits bodies
//! ([`ChunkedScanner`]) to find the next head, and puts deadlines on heads
//! ([`HEAD_TIMEOUT`]), bodies (a backstop behind the body reader's
//! [`BODY_TIMEOUT`]) and writes that make no progress ([`WRITE_TIMEOUT`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::http::chunked::{ChunkedScanner, Step};
use crate::http::head::{Framing, HeadParser, Scan};
use crate::http::limits::{
    BODY_GRACE, BODY_TIMEOUT, HEAD_TIMEOUT, LINGER_LIMIT, LINGER_TIMEOUT, WRITE_TIMEOUT,
};
use crate::http::problem::ApiError;

const READ_CHUNK: usize = 16 * 1024;

/// What the guard is reading.
enum Phase {
    /// A request head (bytes held back until it is whole).
    Head(HeadParser, Vec<u8>),
    /// The rest of a `Content-Length` body.
    Length(u64),
    /// A chunked body.
    Chunked(ChunkedScanner),
    /// Nothing more goes to hyper: it reads end-of-file.
    Closed,
}

impl Phase {
    fn head() -> Phase {
        Phase::Head(HeadParser::default(), Vec::new())
    }
}

/// A refusal by the guard, written when hyper shuts the connection down.
enum Refusal {
    None,
    /// These bytes, written up to the offset so far.
    Pending(Vec<u8>, usize),
    /// Written: the connection lingers before it closes.
    Sent,
}

/// A connection as hyper sees it: checked, delimited and timed.
pub struct Guarded<S> {
    inner: S,
    phase: Phase,
    /// Checked bytes hyper has not taken yet, from `ready_at` on.
    ready: Vec<u8>,
    ready_at: usize,
    /// The refusal to write once hyper is done with the connection.
    refusal: Refusal,
    read_deadline: Option<Instant>,
    read_timer: Pin<Box<Sleep>>,
    write_deadline: Option<Instant>,
    write_timer: Pin<Box<Sleep>>,
    /// The client may still be sending (a refusal, an unread or broken
    /// body): drain before closing, or the kernel answers its bytes with a
    /// reset that can destroy our last answer.
    linger: bool,
    /// Bytes discarded while lingering.
    drained: usize,
    shut: bool,
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_string())
}

/// The bytes of a problem+json answer that closes its connection.
fn refusal_bytes(e: &ApiError) -> Vec<u8> {
    let (status, ..) = e.status_code();
    let body = e.to_problem_json();
    let mut out = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

impl<S: AsyncRead + AsyncWrite + Unpin> Guarded<S> {
    /// Guards `inner`.
    pub fn new(inner: S) -> Self {
        let now = Instant::now();
        Guarded {
            inner,
            phase: Phase::head(),
            ready: Vec::new(),
            ready_at: 0,
            refusal: Refusal::None,
            read_deadline: None,
            read_timer: Box::pin(tokio::time::sleep_until(now)),
            write_deadline: None,
            write_timer: Box::pin(tokio::time::sleep_until(now)),
            linger: false,
            drained: 0,
            shut: false,
        }
    }

    fn refuse(&mut self, e: ApiError) {
        let (status, code, _) = e.status_code();
        tracing::debug!(
            status = status.as_u16(),
            code,
            "request refused by the HTTP layer"
        );
        self.refusal = Refusal::Pending(refusal_bytes(&e), 0);
        self.phase = Phase::Closed;
        self.linger = true;
    }

    /// Runs newly read bytes through the phases, moving checked ones to `ready`.
    fn take_in(&mut self, mut input: &[u8]) {
        while !input.is_empty() {
            let next = match &mut self.phase {
                Phase::Head(parser, held) => {
                    let (n, scan) = parser.feed(input);
                    held.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    match scan {
                        Scan::More => None,
                        Scan::Refuse(e) => {
                            self.refuse(e);
                            return;
                        }
                        Scan::Done(framing) => {
                            self.ready.extend_from_slice(&held[parser.leading()..]);
                            Some(match framing {
                                Framing::None => Phase::head(),
                                Framing::Length(n) => Phase::Length(n),
                                Framing::Chunked => Phase::Chunked(ChunkedScanner::default()),
                            })
                        }
                    }
                }
                Phase::Length(left) => {
                    let n = input
                        .len()
                        .min(usize::try_from(*left).unwrap_or(usize::MAX));
                    self.ready.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    *left -= n as u64;
                    (*left == 0).then(Phase::head)
                }
                Phase::Chunked(scanner) => {
                    let (n, step) = scanner.feed(input);
                    self.ready.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    match step {
                        Step::More => None,
                        Step::End => Some(Phase::head()),
                        // hyper decodes these bytes and tells the handler the
                        // body is broken; nothing after them is a request.
                        Step::Bad => {
                            self.linger = true;
                            Some(Phase::Closed)
                        }
                    }
                }
                Phase::Closed => return,
            };
            if let Some(p) = next {
                self.phase = p;
                self.read_deadline = None;
            }
        }
    }

    /// The deadline of what is being read now, set when hyper first asks.
    fn deadline(&mut self) -> Instant {
        let limit = match self.phase {
            Phase::Head(..) | Phase::Closed => HEAD_TIMEOUT,
            Phase::Length(_) | Phase::Chunked(_) => BODY_TIMEOUT + BODY_GRACE,
        };
        *self
            .read_deadline
            .get_or_insert_with(|| Instant::now() + limit)
    }

    /// The read deadline passed: close an idle connection silently, answer
    /// a partial head with 408, cut a body nobody finished in time.
    fn read_timed_out(&mut self) -> io::Result<()> {
        match &self.phase {
            Phase::Head(parser, _) if parser.started() => self.refuse(ApiError::RequestTimeout(
                "the request head did not arrive within 10 s",
            )),
            Phase::Head(..) | Phase::Closed => self.phase = Phase::Closed,
            Phase::Length(_) | Phase::Chunked(_) => {
                return Err(timed_out("request body timed out"))
            }
        }
        Ok(())
    }

    /// Writes to the socket; an attempt that makes no progress for
    /// [`WRITE_TIMEOUT`] fails.
    fn write_inner(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(r) => {
                self.write_deadline = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let deadline = *self
                    .write_deadline
                    .get_or_insert_with(|| Instant::now() + WRITE_TIMEOUT);
                if self.write_timer.deadline() != deadline {
                    self.write_timer.as_mut().reset(deadline);
                }
                match self.write_timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(timed_out("response write stalled"))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    /// Before closing: discard what the client still sends, for a moment.
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = *self
            .read_deadline
            .get_or_insert_with(|| Instant::now() + LINGER_TIMEOUT);
        if self.read_timer.deadline() != deadline {
            self.read_timer.as_mut().reset(deadline);
        }
        let mut scratch = [0u8; READ_CHUNK];
        loop {
            let mut rb = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) if !rb.filled().is_empty() => {
                    self.drained += rb.filled().len();
                    if self.drained > LINGER_LIMIT {
                        return Poll::Ready(());
                    }
                }
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return self.read_timer.as_mut().poll(cx),
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let mut scratch = [0u8; READ_CHUNK];
        loop {
            if this.ready_at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_at);
                buf.put_slice(&this.ready[this.ready_at..this.ready_at + n]);
                this.ready_at += n;
                if this.ready_at == this.ready.len() {
                    this.ready.clear();
                    this.ready_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if matches!(this.phase, Phase::Closed) {
                return Poll::Ready(Ok(()));
            }
            let deadline = this.deadline();
            let mut rb = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) if rb.filled().is_empty() => {
                    // The client shut its write side. Mid-head that is a
                    // broken request; otherwise hyper sees the end and still
                    // answers what it has (half-close is allowed).
                    match &this.phase {
                        Phase::Head(p, _) if p.started() => this.refuse(ApiError::BadRequest(
                            "the connection ended in the middle of the request head",
                        )),
                        _ => this.phase = Phase::Closed,
                    }
                }
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    this.take_in(&scratch[..n]);
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    if this.read_timer.deadline() != deadline {
                        this.read_timer.as_mut().reset(deadline);
                    }
                    if this.read_timer.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.read_timed_out()?;
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().write_inner(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    /// hyper is done: write the refusal (if any), shut the write side, and
    /// after a refusal linger before the socket is dropped.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while let Refusal::Pending(bytes, at) = std::mem::replace(&mut this.refusal, Refusal::None)
        {
            if at == bytes.len() {
                this.refusal = Refusal::Sent;
                break;
            }
            match this.write_inner(cx, &bytes[at..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => this.refusal = Refusal::Pending(bytes, at + n),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    this.refusal = Refusal::Pending(bytes, at);
                    return Poll::Pending;
                }
            }
        }
        if !this.shut {
            std::task::ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.shut = true;
            // A body hyper did not read to its end is still coming.
            this.linger |= matches!(this.phase, Phase::Length(_) | Phase::Chunked(_));
            this.read_deadline = None;
        }
        if this.linger {
            std::task::ready!(this.poll_linger(cx));
        }
        Poll::Ready(Ok(()))
    }
}
