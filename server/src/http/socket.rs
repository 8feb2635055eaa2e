//! The socket under hyper: a deadline on writes that make no progress, and a
//! lingering close.
//!
//! hyper has a deadline for request heads but none for a client that stops
//! reading its answer, and it closes a connection without reading what the
//! client still sends (an unread body after a refusal, bytes after a broken
//! head). Closing a socket with unread bytes makes the kernel send a reset,
//! which can destroy the answer before the client read it; so after shutting
//! its write side the socket reads and discards for a moment.

use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::http::limits::{LINGER_LIMIT, LINGER_TIMEOUT, WRITE_TIMEOUT};

/// A connection's socket as hyper sees it.
pub struct Socket<S> {
    inner: S,
    /// When a write that makes no progress fails; `None` while writes progress.
    write_deadline: Option<Instant>,
    /// When the lingering close gives up; set once the write side is shut.
    linger_deadline: Option<Instant>,
    timer: Pin<Box<Sleep>>,
    /// Bytes discarded while lingering.
    drained: usize,
}

impl<S> Socket<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Socket {
            inner,
            write_deadline: None,
            linger_deadline: None,
            timer: Box::pin(tokio::time::sleep_until(Instant::now())),
            drained: 0,
        }
    }

    /// Polls the timer armed for `deadline`.
    fn poll_deadline(&mut self, cx: &mut Context<'_>, deadline: Instant) -> Poll<()> {
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        self.timer.as_mut().poll(cx)
    }

    /// The outcome of one write attempt: progress clears the deadline, no
    /// progress for [`WRITE_TIMEOUT`] fails.
    fn timed(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if r.is_ready() {
            self.write_deadline = None;
            return r;
        }
        let deadline = *self
            .write_deadline
            .get_or_insert_with(|| Instant::now() + WRITE_TIMEOUT);
        ready!(self.poll_deadline(cx, deadline));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client read nothing of the answer for 10 s",
        )))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Socket<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Socket<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.timed(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.timed(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    /// Shuts the write side, then reads and discards until the client
    /// closes, [`LINGER_LIMIT`] bytes or [`LINGER_TIMEOUT`].
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let deadline = match this.linger_deadline {
            Some(d) => d,
            None => {
                ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
                *this.linger_deadline.insert(Instant::now() + LINGER_TIMEOUT)
            }
        };
        let mut scratch = [0u8; 8 * 1024];
        loop {
            let mut rb = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) if !rb.filled().is_empty() => {
                    this.drained += rb.filled().len();
                    if this.drained > LINGER_LIMIT {
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(_) => return Poll::Ready(Ok(())),
                Poll::Pending => return this.poll_deadline(cx, deadline).map(Ok),
            }
        }
    }
}
