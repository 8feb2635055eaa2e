//! nginx (Debian's, installed by `make tools`) as a reverse proxy in front of
//! one server, in a temporary prefix of its own: one process
//! (`master_process off`), killed when dropped.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx that proxies everything to one upstream.
pub struct Nginx {
    /// Where it listens.
    pub addr: SocketAddr,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// Starts nginx in front of `upstream`, with keep-alive connections to it
    /// (so what nginx forwards goes through hyper's framing again).
    pub fn start(upstream: SocketAddr) -> Nginx {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let conf = format!(
            "daemon off;\nmaster_process off;\nuser root root;\npid {d}/nginx.pid;\n\
             error_log {d}/error.log info;\nevents {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
               upstream app {{ server {upstream}; keepalive 8; }}\n\
               server {{\n    listen 127.0.0.1:{port};\n    client_max_body_size 1m;\n\
                 location / {{\n      proxy_pass http://app;\n      proxy_http_version 1.1;\n\
                   proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n    }}\n  }}\n}}\n"
        );
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("nginx.conf");
        let child = Command::new("nginx")
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf_path)
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx is not installed: `make tools` installs it (Debian's nginx)");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut nginx = Nginx {
            addr,
            child,
            _dir: dir,
        };
        let t0 = Instant::now();
        while TcpStream::connect(addr).is_err() {
            if let Ok(Some(status)) = nginx.child.try_wait() {
                let log = std::fs::read_to_string(nginx._dir.path().join("error.log"));
                panic!("nginx exited ({status}): {log:?}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "nginx did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
