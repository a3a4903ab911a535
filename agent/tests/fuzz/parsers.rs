//! Targets for the parsers of headers, SSE framing, JSON-RPC bodies, URLs and metadata.

use http::HeaderMap;
use serde_json::Value;
use vantage_agent::egress::EgressPolicy;
use vantage_agent::model::{Era, Outcome};
use vantage_agent::probe::auth::{challenge, metadata};
use vantage_agent::probe::era;
use vantage_agent::probe::http::{classify_body, parse_rpc, Body, Exchange, Limits};
use vantage_agent::probe::sse::SseParser;
use vantage_agent::probe::{redirect, transport};
use vantage_agent::Target;

use crate::fuzz;

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

pub fn exchange(status: u16, ct: &str, body: Body, headers: HeaderMap) -> Exchange {
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
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"trunc"#,
            b"<html><body>502 Bad Gateway</body></html>",
        ],
        &[b"{", b"}", b"[", b"]", b"\"", b":", b",", b"null", b"-32022", b"\"result\"", b"\"error\"", b"1e999"],
        |input| {
            // The body as the engine classifies it: invalid JSON is kept (an excerpt marked
            // invalid_json) and every verdict must hold on it as on valid JSON.
            let body = classify_body(input, Some("application/json"), &Limits::default(), false);
            let valid = !input.is_empty() && serde_json::from_slice::<Value>(input).is_ok();
            assert_eq!(matches!(body, Body::Json(_)), valid, "JSON exactly when it parses");
            if let Body::Json(v) = &body {
                let _ = parse_rpc(v);
            }
            for status in [200u16, 202, 400, 403, 404, 405, 500] {
                let ex = exchange(status, "application/json", body.clone(), HeaderMap::new());
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
            br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com""#,
        ],
        &[b"\"resource\"", b"\"authorization_servers\"", b"[", b"]", b"{", b"}", b"\"S256\"", b"null", b"\"https://\""],
        |input| {
            // Every input goes through the fetch's classification, invalid JSON included:
            // only a JSON object served with a 200 is metadata.
            let body = classify_body(input, Some("application/json"), &Limits::default(), false);
            let fetched = metadata::Fetched {
                url: url::Url::parse("https://mcp.example.com/.well-known/oauth-protected-resource/mcp").unwrap(),
                outcome: Ok(exchange(200, "application/json", body.clone(), HeaderMap::new())),
                peer: None,
            };
            let described = fetched.describe(&EgressPolicy::default());
            assert!(described.starts_with("https://mcp.example.com/"), "{described}");
            let Some(doc) = fetched.json().cloned() else {
                assert!(!matches!(body, Body::Json(Value::Object(_))), "an object not taken as metadata");
                return;
            };
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
