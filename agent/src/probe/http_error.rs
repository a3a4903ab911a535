//! Why an exchange produced no response, in plain words with a cause: the client library's
//! errors (I/O, TLS, hyper's) mapped to what happened, by the stage that failed (connect,
//! TLS, first byte, body), never its error chain.

use std::time::Duration;

use super::http::{fmt_wait, ExchangeError};
use crate::egress::EgressError;
use crate::model::Cause;

/// The request went out on a connection and nothing came back: not a status line, not a
/// byte. (The engine only sends after `net.connect` reached the same address.)
pub(super) fn first_byte_timeout(budget: Duration) -> ExchangeError {
    ExchangeError {
        cause: Cause::Timeout,
        message: format!(
            "accepted the connection, never answered within {} (no status line: timed out waiting for the first byte)",
            fmt_wait(budget)
        ),
    }
}

/// Map a client error to a cause, walking the source chain for the I/O or TLS error. The
/// message names the stage that failed: connect, TLS, first byte or body.
pub fn classify_reqwest(e: &reqwest::Error, budget: Duration) -> ExchangeError {
    // The egress policy's resolver refused every address of a name, or found none.
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(egress) = err.downcast_ref::<EgressError>() {
            return egress.clone().into();
        }
        source = err.source();
    }
    if e.is_timeout() && e.is_connect() {
        return ExchangeError {
            cause: Cause::Timeout,
            message: format!(
                "connect: no connection (TCP, then TLS for https) within {}",
                fmt_wait(budget)
            ),
        };
    }
    if e.is_timeout() {
        return first_byte_timeout(budget);
    }
    let stage = if e.is_connect() { "connect: " } else { "" };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            // A TLS error travels inside an I/O error (its source() skips it): an alert
            // after the handshake (a client certificate required) is read this way.
            if let Some(tls) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return ExchangeError {
                    cause: Cause::Tls,
                    message: format!("TLS: {}", super::tls::tls_words(tls)),
                };
            }
            if let Some(cause) = io_cause(io) {
                return ExchangeError {
                    cause,
                    message: format!("{stage}{io}"),
                };
            }
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return ExchangeError {
                cause: Cause::Tls,
                message: format!("TLS handshake: {}", super::tls::tls_words(tls)),
            };
        }
        source = err.source();
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut innermost: &(dyn std::error::Error + 'static) = e;
    while let Some(err) = source {
        if let Some(h) = err.downcast_ref::<hyper::Error>() {
            if let Some(plain) = hyper_words(h) {
                return plain;
            }
        }
        innermost = err;
        source = err.source();
    }
    // Plain words, not the client library's chain ("error sending request for url (…):
    // client error (SendRequest): …"): the innermost error says what happened.
    ExchangeError {
        cause: Cause::Malformed,
        message: format!("{stage}the request failed: {innermost}"),
    }
}

/// What the client's header cap (hyper's default read buffer of 8 KiB + 400 KiB, and its 100
/// header fields) stopping a response head says.
pub const HEADER_CAP_WORDS: &str = "headers over 408 KiB (or more than 100 header fields), the vantage's cap: this vantage stopped reading the answer's header block, so it was not seen whole";

/// The HTTP client's own bound on a chunked body's framing that stopped reading a body, if
/// that is what `e` is: hyper refuses more than 16 KiB of chunk extensions in a body, and a
/// trailer section over 16 KiB or 100 fields. RFC 9112 sets no such limit, so a target that
/// sends more did nothing wrong that was seen: the read stopped at the vantage's cap (as the
/// body size cap), never "the connection ended". The name completes "the … cap".
pub fn client_body_cap(e: &reqwest::Error) -> Option<&'static str> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::InvalidData {
                // hyper's words (proto/h1/decode.rs), the only way it tells them apart.
                let words = io.to_string();
                if words.contains("chunk extensions over limit") {
                    return Some(CHUNK_EXTENSION_CAP);
                }
                if words.contains("chunk trailers bytes over limit")
                    || words.contains("chunk trailers count overflow")
                {
                    return Some(TRAILER_CAP);
                }
            }
        }
        source = err.source();
    }
    None
}

/// The HTTP client's bound on a body's chunk extensions, as "the … cap" names it.
pub const CHUNK_EXTENSION_CAP: &str = "16 KiB chunk-extension";
/// The HTTP client's bound on a chunked body's trailer section, as "the … cap" names it.
pub const TRAILER_CAP: &str = "trailer (16 KiB or 100 fields)";

/// What a hyper error means, in plain words, with its cause.
fn hyper_words(h: &hyper::Error) -> Option<ExchangeError> {
    let (cause, message) = if h.is_incomplete_message() || h.is_canceled() || h.is_closed() {
        (
            Cause::Reset,
            "the connection was closed before a response (no status line)",
        )
    } else if h.is_parse_too_large() {
        // hyper's own bounds on a response head (its read buffer, 100 header fields): the
        // vantage stopped reading, so the headers were not seen whole; no evidence about
        // whether they are valid HTTP.
        (Cause::SizeCap, HEADER_CAP_WORDS)
    } else if h.is_parse() || h.is_parse_status() {
        (
            Cause::Malformed,
            "the answer was not valid HTTP (its status line or headers could not be read)",
        )
    } else if h.is_timeout() {
        (Cause::Timeout, "no response in time")
    } else {
        return None;
    };
    Some(ExchangeError {
        cause,
        message: message.into(),
    })
}

pub fn io_cause(io: &std::io::Error) -> Option<Cause> {
    use std::io::ErrorKind as K;
    Some(match io.kind() {
        K::ConnectionRefused => Cause::Refused,
        K::TimedOut => Cause::Timeout,
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            Cause::Reset
        }
        K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable => Cause::Unreachable,
        _ => return None,
    })
}
