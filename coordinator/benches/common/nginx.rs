//! The fast local target that counts: nginx in front of the fixture, one distinct URL per
//! target (`/t/N/mcp`), every HTTP exchange a line in its access log.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Nginx {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

impl Nginx {
    /// Start nginx (one process, no master) proxying to `upstream` (host:port of the fixture).
    pub fn start(upstream: &str) -> Result<Nginx, String> {
        let dir = std::env::temp_dir().join(format!("vantage-bench-nginx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let port = super::free_port();
        let d = dir.display();
        let conf = format!(
            "worker_processes 1; master_process off; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 4096; }}
http {{
  client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
  log_format exchange '$request_method $status';
  upstream fixture {{ server {upstream}; keepalive 64; }}
  server {{
    listen 127.0.0.1:{port};
    access_log {d}/access.log exchange;
    location ~ ^/t/[0-9]+/mcp$ {{
      rewrite ^ /mcp break;
      proxy_pass http://fixture; proxy_http_version 1.1; proxy_set_header Connection \"\";
      proxy_buffering off;
    }}
  }}
}}
"
        );
        std::fs::write(dir.join("nginx.conf"), conf).map_err(|e| e.to_string())?;
        let child = Command::new("nginx")
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("nginx: {e} (apt-get install nginx-light)"))?;
        let n = Nginx { child, dir, port };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                return Err("nginx did not start listening within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(n)
    }

    /// The URL of target `i`.
    pub fn url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/t/{i}/mcp", self.port)
    }

    /// HTTP exchanges served so far (lines in the access log).
    pub fn exchanges(&self) -> u64 {
        std::fs::read(self.dir.join("access.log"))
            .map(|b| b.iter().filter(|c| **c == b'\n').count() as u64)
            .unwrap_or(0)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
