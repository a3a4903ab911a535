//! Shape: redirects are never followed; a 3xx on the endpoint is a finding, and another
//! host in Location is the worst case (clients drop Authorization on the way).

use super::http::Exchange;
use super::verdict::Verdict;
use crate::model::{Cause, Severity};
use crate::target::Target;

/// `redirect.none` on the discover exchange.
pub fn verdict(ex: &Exchange, target: &Target) -> Verdict {
    if !(300..400).contains(&ex.status) {
        return Verdict::pass(format!("{} (no redirect)", ex.status));
    }
    let location = ex.header("location").unwrap_or("");
    let resolved = target.url.join(location).ok();
    let other_host = resolved.as_ref().map(|u| {
        u.host_str()
            .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
            != Some(target.host.clone())
            && u.host_str().map(|h| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_ascii_lowercase()
            }) != Some(target.host.clone())
    });
    let method_note = if matches!(ex.status, 301..=303) {
        "; 301/302/303 turn POST into GET"
    } else {
        ""
    };
    match other_host {
        Some(true) => Verdict::fail(
            Severity::High,
            format!("{} to {location}: another host, so clients drop Authorization on the way{method_note}", ex.status),
        )
        .cause(Cause::CrossHost),
        _ => Verdict::fail(Severity::Medium, format!("{} to {location} (same host){method_note}", ex.status))
            .cause(Cause::SameHost),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Outcome;
    use crate::probe::http::Body;

    fn redirect(status: u16, location: &str) -> Exchange {
        let mut headers = http::HeaderMap::new();
        headers.insert("location", location.parse().unwrap());
        Exchange {
            status,
            headers,
            content_type: None,
            body: Body::Empty,
            elapsed_ms: 0,
            first_byte_ms: 0,
            capped: None,
        }
    }

    #[test]
    fn location_host_decides_cross_or_same_host() {
        let t = Target::parse("https://example.com/mcp").unwrap();
        let v = verdict(&redirect(301, "https://www.example.com/mcp"), &t);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Fail, Some(Severity::High), Some(Cause::CrossHost))
        );
        assert!(v.observed.contains("POST into GET"));
        let v = verdict(&redirect(307, "/mcp/"), &t);
        assert_eq!(
            (v.severity, v.cause),
            (Some(Severity::Medium), Some(Cause::SameHost))
        );
        let v = verdict(&redirect(308, "https://EXAMPLE.com./other"), &t);
        assert_eq!(v.cause, Some(Cause::SameHost));
        let ip = Target::parse("http://[::1]:8080/mcp").unwrap();
        let v = verdict(&redirect(308, "http://[::1]:8080/mcp"), &ip);
        assert_eq!(v.cause, Some(Cause::SameHost));
        let v = verdict(&redirect(308, "http://127.0.0.1:8080/mcp"), &ip);
        assert_eq!(v.cause, Some(Cause::CrossHost));
    }
}
