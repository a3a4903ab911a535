//! Validating an API request into a check request: every refusal a 400 (or 413) whose
//! message names the fix; nothing starts on bad input.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use vantage_agent::Target;

use super::types::NewCheck;
use super::{Api, ApiError};
use crate::checks::CheckRequest;

pub(super) const MAX_DEADLINE: Duration = Duration::from_secs(600);

pub(super) fn duration(what: &str, s: &str, max: Duration) -> Result<Duration, ApiError> {
    let d = humantime::parse_duration(s).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_duration",
            format!("{what} `{s}`: {e}; write e.g. 30s"),
        )
    })?;
    if d > max {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_duration",
            format!("{what} is at most {}", humantime::format_duration(max)),
        ));
    }
    if d.is_zero() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_duration",
            format!("{what} `{s}` must be greater than zero; write e.g. 30s (or omit it for the default)"),
        ));
    }
    Ok(d)
}

/// Validate a request body into a check request.
pub(super) fn validate(
    api: &Api,
    body: Result<Bytes, BytesRejection>,
) -> Result<CheckRequest, ApiError> {
    let all_regions = api.checks.regions();
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the body is over {} bytes", api.max_body_bytes),
            )
        } else {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_body", e.body_text())
        }
    })?;
    const EXPECTED: &str = "expected {\"target\": URL, \"regions\": [..], \"credential\": NAME, \"expect_auth\": bool, \"deadline\": DURATION}";
    let invalid = |why: String| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            format!("{why}; {EXPECTED}"),
        )
    };
    // Any JSON but an object is named as such (serde would read an array as the fields in
    // order, and say "expected a string").
    let kind = match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => Some("an array"),
        Some(b'"') => Some("a string"),
        Some(b'0'..=b'9' | b'-') => Some("a number"),
        Some(b't' | b'f') => Some("a boolean"),
        Some(b'n') => Some("null"),
        // An object, or not JSON at all: serde says where.
        _ => None,
    };
    if let Some(kind) = kind {
        return Err(invalid(format!("the body is {kind}, not a JSON object")));
    }
    let b: NewCheck = serde_json::from_slice(&body).map_err(|e| invalid(e.to_string()))?;
    let target = Target::parse(&b.target).map_err(|e| {
        let message = match e {
            // The parser's words are for the command line (--token-env): say what an API
            // caller does instead.
            vantage_agent::target::TargetError::Userinfo => "the URL carries user information (user:password@); remove it: credentials never travel in a URL. Configure the token as a [[credentials]] entry on the coordinator and name it with \"credential\"".to_string(),
            e => e.to_string(),
        };
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_target", message)
    })?;
    let regions = match b.regions {
        None => all_regions.clone(),
        Some(r) if r.is_empty() => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_regions",
                "regions is empty; omit it for every region",
            ))
        }
        Some(r) => {
            if let Some(bad) = r.iter().find(|x| !all_regions.contains(x)) {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "unknown_region",
                    format!(
                        "unknown region `{bad}`; configured: {}",
                        all_regions.join(", ")
                    ),
                ));
            }
            let mut r = r;
            r.sort();
            r.dedup();
            r
        }
    };
    let credential = match b.credential {
        None => None,
        Some(name) => match api.checks.credential(&name) {
            Some(secret) => Some((name, secret)),
            None => {
                let known = api.checks.credential_names();
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "unknown_credential",
                    format!(
                        "unknown credential `{name}`; configured: {}",
                        if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        },
    };
    let deadline = match b.deadline {
        Some(s) => duration("deadline", &s, MAX_DEADLINE)?,
        None => api.default_deadline,
    };
    Ok(CheckRequest {
        target,
        regions,
        credential,
        expect_auth: b.expect_auth,
        deadline,
        baseline: None,
    })
}
