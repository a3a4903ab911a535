//! Shape: redirects are never followed; a 3xx on the endpoint is a finding, and another
//! origin in Location (scheme, host or port) is the worst case: clients drop Authorization
//! on a cross-origin redirect, and an https -> http downgrade sends it in clear text.

use url::Url;

use super::http::Exchange;
use super::verdict::Verdict;
use crate::egress::Redirected;
use crate::model::{Cause, Severity};
use crate::target::Target;

/// A URL's origin as RFC 6454 compares it: scheme, host (lower case, without a final dot or
/// IPv6 brackets) and port (the scheme's default when absent).
fn origin(u: &Url) -> Option<(String, String, u16)> {
    let host = u
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    Some((u.scheme().to_string(), host, u.port_or_known_default()?))
}

/// `redirect.none` on the discover exchange.
pub fn verdict(ex: &Exchange, target: &Target) -> Verdict {
    verdict_for(ex.status, ex.header("location"), target)
}

/// `redirect.none` over every answer the run's client noted as a redirect (checks.md 2.3:
/// redirects are never followed, on any request, not only the first): the answers to the
/// endpoint's URL (a metadata URL's are `auth.metadata-redirect`'s), judged one by one as
/// the first exchange is; the worst one decides (another origin, high, before the same
/// origin), naming its request and the others redirected. `None`: no request to the
/// endpoint was redirected.
pub fn verdict_all(seen: &[Redirected], target: &Target) -> Option<Verdict> {
    let mut judged: Vec<(&Redirected, Verdict)> = seen
        .iter()
        .filter(|r| r.url == target.url)
        .map(|r| (r, verdict_for(r.status, r.location.as_deref(), target)))
        // A GET or DELETE redirected within the origin is the low warning of its own SHOULD
        // (`transport.get`, `transport.delete`: answer 405 or serve it), not a redirect a
        // client's POST meets; to another origin it is `redirect.cross-host` like any other.
        .filter(|(r, v)| !(is_get_or_delete(&r.request) && v.cause == Some(Cause::SameHost)))
        .collect();
    // The worst first; among equals, by request (the answers to concurrent requests come in
    // any order, and the report must not depend on it).
    judged.sort_by(|(a, va), (b, vb)| {
        let rank = |v: &Verdict| std::cmp::Reverse((v.severity, v.cause == Some(Cause::CrossHost)));
        (rank(va), &a.request, a.status).cmp(&(rank(vb), &b.request, b.status))
    });
    let (worst, v) = judged.first()?;
    let mut observed = format!("{} answered {}{}", worst.request, v.observed, worst.note);
    let own = format!("{} {}", worst.request, worst.status);
    let mut others: Vec<String> = judged
        .iter()
        .map(|(r, _)| format!("{} {}", r.request, r.status))
        .filter(|one| *one != own)
        .collect();
    others.sort();
    others.dedup();
    if !others.is_empty() {
        const SHOWN: usize = 16;
        let more = others.len().saturating_sub(SHOWN);
        others.truncate(SHOWN);
        if more > 0 {
            others.push(format!("+{more} more"));
        }
        observed.push_str(&format!("; also redirected: {}", others.join(", ")));
    }
    Some(Verdict {
        observed,
        ..v.clone()
    })
}

/// Whether a noted request is a GET or a DELETE (its label starts with the HTTP method).
fn is_get_or_delete(request: &str) -> bool {
    matches!(request.split(' ').next(), Some("GET" | "DELETE"))
}

/// `redirect.none` on one answer: its status and Location.
fn verdict_for(status: u16, location: Option<&str>, target: &Target) -> Verdict {
    if !(300..400).contains(&status) {
        return Verdict::pass(format!("{status} (no redirect)"));
    }
    let method_note = if matches!(status, 301..=303) {
        "; 301/302/303 turn POST into GET"
    } else {
        ""
    };
    let Some(location) = location.filter(|l| !l.trim().is_empty()) else {
        return Verdict::fail(
            Severity::Medium,
            format!("{status} without a Location: a 3xx a client cannot follow, where an MCP answer was due"),
        )
        .cause(Cause::SameHost);
    };
    let resolved = target.url.join(location).ok();
    // Shown as a target is: a credential-named query value (and user information) of the
    // Location as `[redacted]`, whoever's it is (the target's own are scrubbed at capture).
    let location = crate::target::redacted(location);
    let Some(to) = resolved.as_ref().and_then(origin) else {
        return Verdict::fail(
            Severity::Medium,
            format!("{status} to {location:?}, which is not a URL clients can follow{method_note}"),
        )
        .cause(Cause::SameHost);
    };
    let from = (
        target.url.scheme().to_string(),
        target.host.clone(),
        target.port,
    );
    if target.https && to.0 == "http" {
        return Verdict::fail(
            Severity::High,
            format!("{status} to {location}: a downgrade from https to http, so requests and tokens would travel unencrypted{method_note}"),
        )
        .cause(Cause::CrossHost);
    }
    if to != from {
        let differs: Vec<&str> = [
            (to.0 != from.0, "scheme"),
            (to.1 != from.1, "host"),
            (to.2 != from.2, "port"),
        ]
        .into_iter()
        .filter_map(|(d, what)| d.then_some(what))
        .collect();
        return Verdict::fail(
            Severity::High,
            format!(
                "{status} to {location}: another origin (its {} differs), so clients drop Authorization on the way{method_note}",
                differs.join(" and ")
            ),
        )
        .cause(Cause::CrossHost);
    }
    // A fragment never reaches the server: `/mcp#a` asks for the endpoint again.
    let without_fragment = |u: &Url| {
        let mut u = u.clone();
        u.set_fragment(None);
        u
    };
    let to_itself = resolved.as_ref().map(without_fragment) == Some(without_fragment(&target.url));
    Verdict::fail(
        Severity::Medium,
        if to_itself {
            format!(
                "{status} to {location}: the endpoint's own URL, so a client that follows it loops"
            )
        } else {
            format!("{status} to {location} (same origin){method_note}")
        },
    )
    .cause(Cause::SameHost)
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

    /// Red team round 3: a 3xx without Location read "302 to  (same origin)", and one to
    /// the endpoint itself did not say it loops.
    #[test]
    fn no_location_and_a_redirect_to_itself_are_named() {
        let t = Target::parse("https://example.com/mcp").unwrap();
        let mut bare = redirect(302, "/x");
        bare.headers.clear();
        let v = verdict(&bare, &t);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Fail, Some(Severity::Medium), Some(Cause::SameHost))
        );
        assert!(
            v.observed.starts_with("302 without a Location"),
            "{}",
            v.observed
        );
        for to_itself in ["/mcp", "/mcp#a", "https://example.com/mcp"] {
            let v = verdict(&redirect(308, to_itself), &t);
            assert_eq!(v.severity, Some(Severity::Medium));
            assert!(
                v.observed.contains("the endpoint's own URL"),
                "{to_itself}: {}",
                v.observed
            );
        }
        // An empty Location is no Location.
        let v = verdict(&redirect(302, ""), &t);
        assert!(
            v.observed.starts_with("302 without a Location"),
            "{}",
            v.observed
        );
    }

    /// Red team round 15, defect 2: a Location that keeps a credential-named query value
    /// was shown as sent (the target's own values are also scrubbed at capture).
    #[test]
    fn a_credential_in_the_location_is_shown_redacted() {
        let t = Target::parse("https://example.com/mcp").unwrap();
        let v = verdict(
            &redirect(307, "https://other.example/moved?pat=Zq7SECRETvalue&v=2"),
            &t,
        );
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Fail, Some(Severity::High), Some(Cause::CrossHost))
        );
        assert!(
            v.observed.starts_with(
                "307 to https://other.example/moved?pat=[redacted]&v=2: another origin"
            ),
            "{}",
            v.observed
        );
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

    fn noted(url: &str, request: &str, status: u16, location: &str) -> Redirected {
        Redirected {
            url: Url::parse(url).unwrap(),
            request: request.into(),
            status,
            location: Some(location.into()),
            note: String::new(),
        }
    }

    /// Red team round 15, defect 5: only the first exchange was judged, so a cross-origin
    /// redirect of a notification, of GET/DELETE or of a list passed `redirect.none`. Every
    /// request to the endpoint counts, the worst (another origin) decides and names its
    /// request; a metadata URL's redirect is not the endpoint's.
    #[test]
    fn every_request_to_the_endpoint_is_judged_and_the_worst_names_its_request() {
        let t = Target::parse("http://127.0.0.1:3000/mcp").unwrap();
        assert_eq!(verdict_all(&[], &t), None);
        let metadata = noted(
            "http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp",
            "GET",
            302,
            "https://elsewhere.example/meta",
        );
        assert_eq!(verdict_all(std::slice::from_ref(&metadata), &t), None);
        let seen = [
            metadata,
            noted("http://127.0.0.1:3000/mcp", "GET", 307, "/mcp/"),
            noted(
                "http://127.0.0.1:3000/mcp",
                "POST notifications/initialized (a notification)",
                308,
                "http://127.0.0.2:3000/mcp",
            ),
            noted(
                "http://127.0.0.1:3000/mcp",
                "POST tools/list",
                308,
                "http://127.0.0.2:3000/mcp",
            ),
        ];
        let v = verdict_all(&seen, &t).expect("a verdict");
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Fail, Some(Severity::High), Some(Cause::CrossHost))
        );
        assert!(
            v.observed.starts_with(
                "POST notifications/initialized (a notification) answered 308 to http://127.0.0.2:3000/mcp: another origin (its host differs)"
            ),
            "{}",
            v.observed
        );
        assert!(
            v.observed
                .ends_with("; also redirected: POST tools/list 308"),
            "{}",
            v.observed
        );
        // A GET redirected within the origin is transport.get's low warning, not this check's.
        assert_eq!(verdict_all(&seen[1..2], &t), None);
        // A POST redirected within the origin: the same-host rule (medium).
        let same = noted("http://127.0.0.1:3000/mcp", "POST tools/list", 307, "/mcp/");
        let v = verdict_all(std::slice::from_ref(&same), &t).unwrap();
        assert_eq!(
            (v.severity, v.cause),
            (Some(Severity::Medium), Some(Cause::SameHost))
        );
        assert!(
            v.observed
                .starts_with("POST tools/list answered 307 to /mcp/ (same origin)"),
            "{}",
            v.observed
        );
    }

    /// The end of the run: a pass on the first exchange is replaced by what any later
    /// request showed; a failure as bad or worse recorded on the first exchange stays.
    #[test]
    fn the_run_s_redirects_replace_a_pass_but_not_an_equal_failure() {
        use crate::catalog::CheckId;
        use crate::probe::verdict::Recorder;
        let t = Target::parse("http://127.0.0.1:3000/mcp").unwrap();
        let log = crate::egress::RedirectLog::default();
        log.lock().unwrap().push(noted(
            "http://127.0.0.1:3000/mcp",
            "DELETE",
            301,
            "https://127.0.0.2/mcp",
        ));
        let mut rec = Recorder::default();
        rec.record_ms(CheckId::RedirectNone, Verdict::pass("200 (no redirect)"), 0);
        crate::protocol::redirects_seen(&mut rec, &t, &log);
        let c = rec.get(CheckId::RedirectNone).unwrap();
        assert_eq!(
            (c.outcome, c.severity, c.cause),
            (Outcome::Fail, Some(Severity::High), Some(Cause::CrossHost))
        );
        assert!(
            c.observed.starts_with("DELETE answered 301"),
            "{}",
            c.observed
        );
        let mut rec = Recorder::default();
        rec.record_ms(
            CheckId::RedirectNone,
            Verdict::fail(Severity::High, "308 to https://x.example/mcp").cause(Cause::CrossHost),
            0,
        );
        crate::protocol::redirects_seen(&mut rec, &t, &log);
        assert_eq!(
            rec.get(CheckId::RedirectNone).unwrap().observed,
            "308 to https://x.example/mcp"
        );
    }

    /// A token probe redirected says neither that the token was accepted nor that it was
    /// refused: `unknown` (it was a failure, "MUST get 401").
    #[test]
    fn a_token_probe_redirected_is_unknown() {
        let v = crate::probe::auth::tokens::must_refuse(
            &redirect(308, "https://127.0.0.2/mcp"),
            "a random bearer token",
        );
        assert_eq!(
            (v.outcome, v.cause),
            (Outcome::Unknown, Some(Cause::OtherReason)),
            "{}",
            v.observed
        );
        assert!(
            v.observed
                .contains("answered with a redirect (308 to https://127.0.0.2/mcp)"),
            "{}",
            v.observed
        );
    }

    /// Reproduction 6 of issue 12: the host alone decided, so another port or an https ->
    /// http downgrade to the same host read as a same-host (medium) redirect.
    #[test]
    fn another_port_or_a_downgrade_is_another_origin() {
        let t = Target::parse("https://same-host.example/mcp").unwrap();
        let v = verdict(&redirect(301, "https://same-host.example:9443/mcp"), &t);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Fail, Some(Severity::High), Some(Cause::CrossHost))
        );
        assert!(v.observed.contains("port differs"), "{}", v.observed);
        let v = verdict(&redirect(308, "http://same-host.example/mcp"), &t);
        assert_eq!(
            (v.severity, v.cause),
            (Some(Severity::High), Some(Cause::CrossHost))
        );
        assert!(v.observed.contains("downgrade"), "{}", v.observed);
        // The default port written out is the same origin.
        let v = verdict(&redirect(308, "https://same-host.example:443/mcp/"), &t);
        assert_eq!(
            (v.severity, v.cause),
            (Some(Severity::Medium), Some(Cause::SameHost))
        );
        // http -> https on the same host is an upgrade: another origin, high.
        let plain = Target::parse("http://same-host.example/mcp").unwrap();
        let v = verdict(&redirect(308, "https://same-host.example/mcp"), &plain);
        assert_eq!(v.severity, Some(Severity::High));
        assert!(v.observed.contains("scheme"), "{}", v.observed);
    }
}
