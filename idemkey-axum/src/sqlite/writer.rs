//! The one writer connection of a SQLite file, on a thread of its own, with
//! group commit.
//!
//! SQLite admits one writer at a time and a durable commit costs one sync of
//! the WAL, so the writes of concurrent requests queue here (FIFO). While one
//! commit is syncing, the next ones wait; the writer then takes every write
//! that is waiting (at most [`MAX_BATCH`]) and runs them in one
//! `BEGIN IMMEDIATE` transaction, each inside a savepoint of its own, and
//! commits them with one sync. Each write still decides alone (a failed one is
//! rolled back to its savepoint, and the others keep theirs) and is answered
//! only after the commit that holds it is on disk; if that commit fails, every
//! write in it fails and nothing of them is kept. A write that waits alone is
//! committed alone, at once: nothing ever waits to fill a batch.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

use rusqlite::Connection;

use crate::store::{StoreError, StoreResult};

/// Most writes committed together: bounds how much one failed commit undoes
/// and how long the first write of a batch waits for the last.
pub const MAX_BATCH: usize = 64;

/// What a write does once its batch has committed (or failed): answer its caller.
type Deliver = Box<dyn FnOnce(StoreResult<()>) + Send>;
/// One queued write: runs on the connection (or learns why it cannot) and
/// returns how to answer once the batch's fate is known.
type Job = Box<dyn FnOnce(StoreResult<&mut Connection>) -> Deliver + Send>;

/// Sends writes to the writer thread; cheap to clone. The thread (and its
/// connection) ends when the last handle is dropped.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer thread on `conn`.
    pub fn start(conn: Connection, name: &str) -> StoreResult<Writer> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("sqlite-writer-{name}"))
            .spawn(move || serve(conn, queue))
            .map_err(|e| {
                StoreError::failed_by(format!("cannot start the {name} writer thread"), e)
            })?;
        Ok(Writer { jobs })
    }

    /// Runs `f` in the next batch and answers after that batch's commit.
    /// `f` sees the writes before it in the batch; it may open its own
    /// savepoints but not a transaction (`BEGIN`).
    pub async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel::<StoreResult<T>>();
        let job: Job = Box::new(move |conn| {
            // A caller that went away while queued (its request was
            // cancelled) gets no write: nothing would act on its outcome.
            if answer.is_closed() {
                return Box::new(|_| {});
            }
            let out = conn.and_then(|conn| in_savepoint(conn, f));
            Box::new(move |batch| {
                let _ = answer.send(batch.and(out));
            })
        });
        self.jobs
            .send(job)
            .map_err(|_| StoreError::failed("the SQLite writer thread has stopped"))?;
        answered
            .await
            .map_err(|_| StoreError::failed("the SQLite writer thread has stopped"))?
    }
}

/// Runs `f` inside a savepoint: kept if it succeeds, undone if it fails or
/// panics.
fn in_savepoint<T, F>(conn: &mut Connection, f: F) -> StoreResult<T>
where
    F: FnOnce(&mut Connection) -> rusqlite::Result<T>,
{
    conn.prepare_cached("SAVEPOINT write_job")?.execute([])?;
    let out = match catch_unwind(AssertUnwindSafe(|| f(conn))) {
        Ok(out) => out.map_err(StoreError::from),
        Err(_) => Err(StoreError::failed("a write panicked")),
    };
    if out.is_err() && !conn.is_autocommit() {
        conn.prepare_cached("ROLLBACK TO write_job")?.execute([])?;
    }
    if !conn.is_autocommit() {
        conn.prepare_cached("RELEASE write_job")?.execute([])?;
    }
    out
}

/// The writer thread: batch after batch until every handle is gone.
fn serve(mut conn: Connection, queue: mpsc::Receiver<Job>) {
    let mut waiting: VecDeque<Job> = VecDeque::new();
    loop {
        if waiting.is_empty() {
            match queue.recv() {
                Ok(job) => waiting.push_back(job),
                Err(_) => return,
            }
        }
        while waiting.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => waiting.push_back(job),
                Err(_) => break,
            }
        }
        commit_batch(&mut conn, &mut waiting);
    }
}

/// Runs the waiting writes in one transaction and answers them. A write left
/// in `waiting` has not run (SQLite ended the transaction under the batch)
/// and goes into the next one.
fn commit_batch(conn: &mut Connection, waiting: &mut VecDeque<Job>) {
    if let Err(e) = begin(conn) {
        for job in waiting.drain(..) {
            job(Err(e.clone()))(Ok(()));
        }
        return;
    }
    let mut ran: Vec<Deliver> = Vec::with_capacity(waiting.len());
    while let Some(job) = waiting.pop_front() {
        ran.push(job(Ok(&mut *conn)));
        // Some errors (a full disk, an I/O error) make SQLite roll the whole
        // transaction back: the writes before are gone, and a write run now
        // would commit on its own.
        if conn.is_autocommit() {
            let lost = StoreError::failed("the transaction was rolled back by SQLite");
            for deliver in ran {
                deliver(Err(lost.clone()));
            }
            return;
        }
    }
    let committed = commit(conn);
    for deliver in ran {
        deliver(committed.clone());
    }
}

fn begin(conn: &mut Connection) -> StoreResult<()> {
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    Ok(())
}

fn commit(conn: &mut Connection) -> StoreResult<()> {
    let done = conn
        .prepare_cached("COMMIT")
        .and_then(|mut s| s.execute([]))
        .map(|_| ());
    if done.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    Ok(done?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> (tempfile::TempDir, Writer) {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("w.db")).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER UNIQUE); INSERT INTO t VALUES (-1)")
            .unwrap();
        (dir, Writer::start(conn, "test").unwrap())
    }

    async fn count(w: &Writer) -> i64 {
        w.write(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .await
            .unwrap()
    }

    /// Writes queued together commit together, yet each keeps its own fate:
    /// one that fails undoes only itself.
    #[tokio::test]
    async fn a_failed_write_undoes_only_itself() {
        let (_dir, w) = writer();
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let w = w.clone();
                tokio::spawn(async move {
                    w.write(move |c| {
                        c.execute("INSERT INTO t (v) VALUES (?1)", [1000 + i])?;
                        // Every fifth write fails after writing.
                        c.execute(
                            "INSERT INTO t (v) VALUES (?1)",
                            [if i % 5 == 0 { -1 } else { 2000 + i }],
                        )
                    })
                    .await
                })
            })
            .collect();
        let mut failed = 0;
        for t in tasks {
            if t.await.unwrap().is_err() {
                failed += 1;
            }
        }
        assert_eq!(failed, 40);
        assert_eq!(count(&w).await, 1 + 160 * 2);
    }

    /// A write that panics is undone and answered; the writer goes on.
    #[tokio::test]
    async fn a_panicking_write_is_undone_and_the_writer_goes_on() {
        let (_dir, w) = writer();
        let r: StoreResult<()> = w
            .write(|c| {
                c.execute("INSERT INTO t (v) VALUES (1)", [])?;
                panic!("boom")
            })
            .await;
        assert!(r.is_err());
        w.write(|c| c.execute("INSERT INTO t (v) VALUES (2)", []))
            .await
            .unwrap();
        assert_eq!(count(&w).await, 2);
    }

    /// A write whose caller is gone before its turn is not run.
    #[tokio::test]
    async fn a_write_whose_caller_is_gone_is_not_run() {
        let (_dir, w) = writer();
        let (hold, held) = std::sync::mpsc::channel::<()>();
        let first = {
            let w = w.clone();
            tokio::spawn(async move {
                w.write(move |c| {
                    // Keeps the writer busy until the second write is dropped.
                    let _ = held.recv();
                    c.execute("INSERT INTO t (v) VALUES (1)", [])
                })
                .await
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let second = w.write(|c| c.execute("INSERT INTO t (v) VALUES (2)", []));
        // Polled once (queued), then dropped.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(50), second).await;
        hold.send(()).unwrap();
        first.await.unwrap().unwrap();
        assert_eq!(count(&w).await, 2, "-1 and 1; 2 was never written");
    }

    /// A write may not open a transaction of its own inside the batch.
    #[tokio::test]
    async fn a_write_cannot_begin_a_transaction() {
        let (_dir, w) = writer();
        let r = w.write(|c| c.execute_batch("BEGIN")).await;
        assert!(r.is_err());
        w.write(|c| c.execute("INSERT INTO t (v) VALUES (3)", []))
            .await
            .unwrap();
        assert_eq!(count(&w).await, 2);
    }
}
