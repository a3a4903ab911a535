//! A mutation fuzzer for every parser that reads target-controlled bytes, on the stable
//! toolchain (an equivalent of `cargo fuzz` here): `WWW-Authenticate`, SSE framing,
//! JSON-RPC response classification and the verdicts built on it, URL and `Location`
//! handling, protected resource and authorization server metadata.
//!
//! Each target runs for `VANTAGE_FUZZ_SECONDS` (default 1) from a seed corpus, with byte
//! mutations and splices, and checks invariants besides "no panic". A failing input is
//! written to `target/fuzz-crashes/<target>/` and the test fails naming it; fixed crashes
//! are kept in `tests/fuzz-regressions/<target>/` and replayed on every run.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use http::HeaderMap;
use serde_json::Value;
use vantage_agent::model::{Era, Outcome};
use vantage_agent::probe::auth::{challenge, metadata};
use vantage_agent::probe::era;
use vantage_agent::probe::http::{parse_rpc, Body, Exchange};
use vantage_agent::probe::sse::SseParser;
use vantage_agent::probe::{redirect, transport};
use vantage_agent::Target;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Mutate `input` with bytes drawn from `dict` and random bytes.
fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>], dict: &[&[u8]]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(out.len() + 1);
                let d = dict[rng.below(dict.len())];
                out.splice(i..i, d.iter().copied());
            }
            2 if !out.is_empty() => {
                let i = rng.below(out.len());
                let j = (i + rng.below(16)).min(out.len());
                out.drain(i..j);
            }
            3 => {
                let i = rng.below(out.len() + 1);
                out.insert(i, rng.next() as u8);
            }
            4 if !out.is_empty() => {
                let i = rng.below(out.len());
                let j = (i + rng.below(32)).min(out.len());
                let chunk = out[i..j].to_vec();
                let k = rng.below(out.len() + 1);
                out.splice(k..k, chunk);
            }
            5 => {
                let other = &corpus[rng.below(corpus.len())];
                let i = rng.below(out.len() + 1);
                let j = rng.below(other.len() + 1);
                out.truncate(i);
                out.extend_from_slice(&other[j..]);
            }
            _ => out.truncate(rng.below(out.len() + 1)),
        }
    }
    out.truncate(4096);
    out
}

fn budget() -> Duration {
    let secs: f64 = std::env::var("VANTAGE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs)
}

fn regressions(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect()
}

/// Run `check` on the seeds, the kept regressions, then mutations until the budget is spent.
fn fuzz(target: &str, seeds: &[&[u8]], dict: &[&[u8]], check: impl Fn(&[u8])) {
    let mut corpus: Vec<Vec<u8>> = seeds.iter().map(|s| s.to_vec()).collect();
    corpus.extend(regressions(target));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ target.len() as u64);
    let deadline = Instant::now() + budget();
    let mut runs = 0u64;
    let mut i = 0;
    loop {
        let input = if i < corpus.len() {
            corpus[i].clone()
        } else {
            let base = corpus[rng.below(corpus.len())].clone();
            mutate(&mut rng, &base, &corpus, dict)
        };
        i += 1;
        runs += 1;
        if catch_unwind(AssertUnwindSafe(|| check(&input))).is_err() {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/fuzz-crashes")
                .join(target);
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("crash-{runs}"));
            let _ = std::fs::write(&path, &input);
            panic!(
                "{target}: input {:?} failed; saved to {}",
                String::from_utf8_lossy(&input),
                path.display()
            );
        }
        if i >= corpus.len() && Instant::now() > deadline {
            break;
        }
        // Keep inputs that parse differently enough to be interesting (cheap corpus growth).
        if runs % 97 == 0 && corpus.len() < 512 {
            corpus.push(input);
        }
    }
    eprintln!("fuzz {target}: {runs} inputs");
    assert!(runs > 100, "{target}: the budget allowed too few runs");
}

#[test]
fn fuzz_www_authenticate() {
    fuzz(
        "www-authenticate",
        &[
            br#"Bearer resource_metadata="https://a/b", scope="x y""#,
            br#"Basic realm="r", Bearer error="invalid_token", error_description="a \"b\"""#,
            b"Negotiate, Bearer",
            b"Basic dXNlcjpwYXNz==, Bearer scope=x",
        ],
        &[
            b"\"",
            b"\\",
            b",",
            b"=",
            b" ",
            b"Bearer ",
            b"realm=",
            b"\t",
            b"==",
            "é".as_bytes(),
        ],
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(challenges) = challenge::parse(&[&text]) {
                for c in challenges {
                    assert!(!c.scheme.is_empty(), "a challenge without a scheme");
                    for (k, _) in &c.params {
                        assert!(!k.is_empty() && k.chars().all(|ch| !ch.is_ascii_uppercase()));
                    }
                }
            }
        },
    );
}

#[test]
fn fuzz_sse_framing() {
    fuzz(
        "sse",
        &[
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
            b": ping\r\n\r\ndata: x\rdata: y\r\r",
            b"id: 1\nretry: 10\ndata\n\n",
        ],
        &[
            b"\n", b"\r", b"\r\n", b"data: ", b":", b"event:", b"{}", b"\n\n",
        ],
        |input| {
            let mut p = SseParser::new(64);
            let mut total = 0;
            for chunk in input.chunks(7) {
                match p.feed(chunk) {
                    Ok(events) => {
                        for e in events {
                            total += e.data.len();
                        }
                    }
                    Err(cap) => {
                        assert_eq!(cap, "SSE line size");
                        return;
                    }
                }
            }
            assert!(total <= input.len(), "events hold more data than was read");
        },
    );
}

fn exchange(status: u16, ct: &str, body: Body, headers: HeaderMap) -> Exchange {
    Exchange {
        status,
        headers,
        content_type: Some(ct.into()),
        body,
        elapsed_ms: 0,
        first_byte_ms: 0,
        capped: None,
    }
}

#[test]
fn fuzz_json_rpc_classification_and_verdicts() {
    fuzz(
        "json-rpc",
        &[
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"x","data":{"supported":["2026-07-28"],"requested":"1999-01-01"}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}}"#,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601}}"#,
        ],
        &[b"{", b"}", b"[", b"]", b"\"", b":", b",", b"null", b"-32022", b"\"result\"", b"\"error\"", b"1e999"],
        |input| {
            let Ok(v) = serde_json::from_slice::<Value>(input) else { return };
            let _ = parse_rpc(&v);
            for status in [200u16, 202, 400, 403, 404, 405, 500] {
                let ex = exchange(status, "application/json", Body::Json(v.clone()), HeaderMap::new());
                for era_ in [Era::Modern, Era::Dual] {
                    for probe in transport::TransportProbe::MODERN {
                        let verdict = probe.evaluate(&ex, era_);
                        if matches!(verdict.outcome, Outcome::Fail | Outcome::Warn) {
                            assert!(verdict.severity.is_some(), "{probe:?}: a problem without a severity");
                            assert!(verdict.severity <= Some(probe.check().spec().max_severity), "{probe:?}: above the catalogue's highest severity");
                        }
                    }
                }
                let shape = era::discover_shape(&ex, &serde_json::json!(1));
                if shape.outcome == Outcome::Pass {
                    assert_eq!(status, 200);
                }
                let _ = era::classify(Some(&ex), Some(&ex), None);
            }
        },
    );
}

#[test]
fn fuzz_urls_and_locations() {
    fuzz(
        "url-location",
        &[
            b"https://www.example.com/mcp",
            b"/mcp/v2",
            b"//evil.example/x",
            b"http://[::1]:8080/mcp",
            b"HTTPS://EXAMPLE.com./a?b#c",
        ],
        &[
            b"/", b":", b"@", b"[", b"]", b"%", b"#", b"?", b"..", b"\\", b"http://", b"xn--",
        ],
        |input| {
            let text = String::from_utf8_lossy(input).to_string();
            if let Ok(t) = Target::parse(&text) {
                assert!(matches!(t.url.scheme(), "http" | "https"));
                assert!(t.url.username().is_empty() && t.url.password().is_none());
            }
            let base = Target::parse("https://example.com/mcp").unwrap();
            let mut headers = HeaderMap::new();
            if let Ok(v) = http::HeaderValue::from_bytes(input) {
                headers.insert("location", v);
                let v =
                    redirect::verdict(&exchange(308, "text/plain", Body::Empty, headers), &base);
                assert_eq!(v.outcome, Outcome::Fail, "a 3xx is always a finding");
                assert!(v.cause.is_some());
            }
        },
    );
}

#[test]
fn fuzz_authorization_metadata() {
    fuzz(
        "auth-metadata",
        &[
            br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"]}"#,
            br#"{"issuer":"https://as","code_challenge_methods_supported":["S256"],"token_endpoint":"http://x/t"}"#,
        ],
        &[b"\"resource\"", b"\"authorization_servers\"", b"[", b"]", b"{", b"}", b"\"S256\"", b"null", b"\"https://\""],
        |input| {
            let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(input) else { return };
            let t = Target::parse("https://mcp.example.com/mcp").unwrap();
            let (problems, issuers) = metadata::prm_problems(&doc, &t);
            if problems.is_empty() {
                assert!(!issuers.is_empty(), "accepted metadata must name an authorization server");
                assert_eq!(doc.get("resource").and_then(Value::as_str), Some("https://mcp.example.com/mcp"));
            }
            let _ = metadata::as_problems(&doc);
            for issuer in issuers {
                if let Ok(u) = url::Url::parse(&issuer) {
                    let n = metadata::as_candidates(&u).len();
                    assert!(n == 2 || n == 3, "{issuer}: {n} candidates");
                }
            }
        },
    );
}
