//! A child process of a test (the server, the provider service, a receipt
//! worker): stderr into a log file, the first stdout line read with a
//! deadline and the rest drained, SIGKILL when dropped.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running child process.
pub struct Proc {
    child: Child,
    /// Its stderr log.
    pub log: PathBuf,
}

impl Proc {
    /// Spawns `cmd` with stdin closed, stderr into `log` and stdout piped;
    /// returns it with the first line it printed (empty if none within 30 s).
    pub fn start(mut cmd: Command, log: &Path) -> (Proc, String) {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).expect("log file"))
            .spawn()
            .expect("spawn idemkey-server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            // Keep draining so that extra output would not block the child;
            // the CLI test checks there is none.
            let mut rest = String::new();
            let _ = reader.read_to_string(&mut rest);
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let p = Proc {
            child,
            log: log.to_path_buf(),
        };
        (p, line.trim().to_string())
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, no shutdown.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to exit by itself (e.g. an abort fault).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Its stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
    }
}
