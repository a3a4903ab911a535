//! Helpers of the review reproductions (`review_*.rs`): a loopback server that answers
//! every request with bytes of the test's choosing (one request per connection), and the
//! `vantage` binary's output in every report format.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::evidence_support::head_and_length;
use crate::support::{vantage_env, Served};

/// What a raw server answers to one request (its head and body, as text).
pub(crate) type Respond = Arc<dyn Fn(&str) -> Vec<u8> + Send + Sync>;

/// A server on loopback that answers each request with `respond(request)` and closes.
pub(crate) async fn raw_server(respond: Respond) -> Served {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let respond = respond.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let Ok(n) = s.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    let Some((end, len)) = head_and_length(&text) else {
                        continue;
                    };
                    if buf.len() >= end + 4 + len {
                        let _ = s.write_all(&respond(&text)).await;
                        let _ = s.shutdown().await;
                        return;
                    }
                }
            });
        }
    });
    Served::spawned(addr, task)
}

/// An HTTP/1.1 response with `status`, extra raw header lines and `body`.
pub(crate) fn response(status: &str, headers: &[&[u8]], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nconnection: close\r\n").into_bytes();
    for h in headers {
        out.extend_from_slice(h);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

/// A JSON-RPC error body.
pub(crate) fn rpc_error(code: i64, message: &str) -> Vec<u8> {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

/// Every output of `vantage check URL EXTRA…` (stdout, stderr and the report file, in text,
/// JSON, JUnit and Markdown; then stdout and stderr of a text run with trace logging), and
/// the exit code of the JSON run.
pub(crate) async fn every_output(
    url: &str,
    extra: &[&str],
    env: &[(&str, &str)],
    dir: &std::path::Path,
) -> (Vec<String>, i32) {
    let mut all = Vec::new();
    let mut code = -1;
    for format in ["text", "json", "junit", "markdown"] {
        let file = dir.join(format!("r.{format}"));
        let file_s = file.display().to_string();
        let mut args = vec![
            "check", url, "--format", format, "--output", &file_s, "--color", "never",
        ];
        args.extend_from_slice(extra);
        let out = vantage_env(&args, env).await;
        if format == "json" {
            code = out.status.code().unwrap_or(-1);
        }
        all.push(String::from_utf8_lossy(&out.stdout).into_owned());
        all.push(String::from_utf8_lossy(&out.stderr).into_owned());
        all.push(
            std::fs::read_to_string(&file).unwrap_or_else(|e| {
                panic!("{format}: {e}: {}", String::from_utf8_lossy(&out.stderr))
            }),
        );
    }
    let mut args = vec!["check", url, "--color", "never", "-v"];
    args.extend_from_slice(extra);
    let mut env: Vec<(&str, &str)> = env.to_vec();
    env.push(("VANTAGE_LOG", "trace"));
    let out = vantage_env(&args, &env).await;
    all.push(String::from_utf8_lossy(&out.stdout).into_owned());
    all.push(String::from_utf8_lossy(&out.stderr).into_owned());
    (all, code)
}
