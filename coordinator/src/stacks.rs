//! Fixes that name the stack, when the wire proved it: a region's check that failed carried
//! a fingerprint (an SDK's own error string, nginx's error page or `Server` header, a CDN's
//! headers; `vantage_agent::stack`), and this table has a fix for that finding on that
//! stack. The finding's fix is then the stack's, and the report says which evidence
//! identified it. Without a fingerprint, or without an entry here, the generic fix stays.

use vantage_agent::catalog::FindingId::{self, *};
use vantage_agent::model::RegionResult;
use vantage_agent::stack::Stack;

use crate::report::{Finding, StackNote};

/// One fix: for `finding` on `stack`, when the failing check's observation contains
/// `needle` and the fingerprint contains `print` (each if given).
struct Fix {
    finding: FindingId,
    stack: Stack,
    needle: Option<&'static str>,
    print: Option<&'static str>,
    fix: &'static str,
}

/// nginx's own error page (not merely nginx in the path).
const NGINX_PAGE: Option<&str> = Some("page signed nginx");

const NGINX_HEADERS: &str = "the MCP request headers do not reach the server: remove any `proxy_set_header Mcp-Method \"\";` (or Mcp-Name, MCP-Protocol-Version) in the MCP `location`, keep `proxy_pass_request_headers on;`, and leave `ignore_invalid_headers` at its default.";
const NGINX_INTERCEPT: &str = "the error page is nginx's own: `proxy_intercept_errors on;` or an `error_page` for 4xx replaces the server's JSON-RPC body. Turn interception off in the MCP `location` so the server's answer reaches clients.";
const CLOUDFRONT_HEADERS: &str = "CloudFront forwards only the headers its origin request policy lists: add Mcp-Method, Mcp-Name, MCP-Protocol-Version and Mcp-Session-Id to the policy (or use AllViewer) for the MCP path.";

const FIXES: &[Fix] = &[
    Fix { finding: DiscoverShape, stack: Stack::Nginx, needle: Some("-32020"), print: None, fix: NGINX_HEADERS },
    Fix { finding: EdgeDivergent, stack: Stack::Nginx, needle: Some("-32020"), print: None, fix: NGINX_HEADERS },
    Fix { finding: DiscoverShape, stack: Stack::Cloudfront, needle: Some("-32020"), print: None, fix: CLOUDFRONT_HEADERS },
    Fix { finding: EdgeDivergent, stack: Stack::Cloudfront, needle: Some("-32020"), print: None, fix: CLOUDFRONT_HEADERS },
    Fix {
        finding: TransportGet,
        stack: Stack::Nginx,
        needle: None, print: None,
        fix: "GET on the MCP location is answered by nginx itself (a `return`, `try_files` or an index page). Pass GET to the MCP server with the same `proxy_pass`, or answer it with `return 405;` and `add_header Allow POST always;`.",
    },
    Fix { finding: MethodUnknown, stack: Stack::Nginx, needle: Some("-32020"), print: None, fix: NGINX_HEADERS },
    Fix { finding: MethodUnknown, stack: Stack::Nginx, needle: None, print: NGINX_PAGE, fix: NGINX_INTERCEPT },
    Fix { finding: JsonrpcErrorBody, stack: Stack::Nginx, needle: None, print: NGINX_PAGE, fix: NGINX_INTERCEPT },
    Fix {
        finding: MethodUnknown,
        stack: Stack::Cloudflare,
        needle: None, print: None,
        fix: "Cloudflare answered instead of the server (a WAF or managed rule, see the cf-ray): add a WAF skip rule for POST requests to the MCP path, so the server's JSON-RPC 404 reaches clients.",
    },
    Fix {
        finding: JsonrpcErrorBody,
        stack: Stack::Cloudflare,
        needle: None, print: None,
        fix: "Cloudflare answered the refusals with its own pages (see the cf-ray): add a WAF skip rule for the MCP path so the server's JSON-RPC errors reach clients.",
    },
    Fix {
        finding: EraLegacyOnly,
        stack: Stack::TypescriptSdk,
        needle: None, print: None,
        fix: "this is the 1.x transport (`@modelcontextprotocol/sdk`, \"Server not initialized\" before initialize). Move to `@modelcontextprotocol/server` 2.x and `createMcpHandler`, which serves 2026-07-28 and keeps a 2025-11-25 fallback (`legacy: 'stateless'`).",
    },
    Fix {
        finding: EraLegacyOnly,
        stack: Stack::PythonSdk,
        needle: None, print: None,
        fix: "upgrade `mcp` to a 2.x release (`MCPServer`), which serves 2026-07-28 beside 2025-11-25.",
    },
    Fix {
        finding: TransportDelete,
        stack: Stack::PythonSdk,
        needle: Some("Allow"), print: None,
        fix: "the stateless transport answers DELETE 405 without `Allow` (\"Session termination not supported\"): add `Allow: POST` in a middleware in front of `streamable_http_app()`, or let a proxy add it.",
    },
];

/// Whether `finding` is one a failure of `check` in `region` stands behind.
fn behind(f: &Finding, region: &RegionResult, check: vantage_agent::catalog::CheckId) -> bool {
    if f.id == EdgeDivergent {
        let prefix = format!("{}: {check} ", region.region);
        return f.evidence.iter().any(|e| e.starts_with(&prefix));
    }
    check.findings().any(|id| id == f.id)
}

/// Give each finding the fix of the stack its failing checks proved, and say why.
pub fn annotate(findings: &mut [Finding], regions: &[RegionResult]) {
    for f in findings.iter_mut() {
        'found: for r in regions.iter().filter(|r| f.regions.contains(&r.region)) {
            for s in &r.stacks {
                if !behind(f, r, s.check) {
                    continue;
                }
                let observed = r.check(s.check).map(|c| c.observed.as_str()).unwrap_or("");
                let rule = FIXES.iter().find(|x| {
                    x.finding == f.id
                        && x.stack == s.stack
                        && x.needle.is_none_or(|n| observed.contains(n))
                        && x.print.is_none_or(|p| s.evidence.contains(p))
                });
                if let Some(rule) = rule {
                    f.remediation = format!("{}: {}", s.stack.label(), rule.fix);
                    f.stack = Some(StackNote {
                        stack: s.stack,
                        evidence: format!("{}: {}: {}", r.region, s.check, s.evidence),
                    });
                    break 'found;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use vantage_agent::catalog::CheckId;
    use vantage_agent::model::Severity;
    use vantage_agent::stack::StackSighting;

    use super::*;
    use crate::test_reports::{clean, fail, report};

    /// `regions` merged into a report, its findings annotated once more (`assemble` does it
    /// too) with the stacks the regions proved.
    fn annotated(regions: Vec<RegionResult>) -> crate::report::Report {
        let mut r = report(regions);
        let regions = r.regions.clone();
        annotate(&mut r.findings, &regions);
        r
    }

    fn sighting(r: &mut RegionResult, check: CheckId, stack: Stack, evidence: &str) {
        r.stacks.push(StackSighting {
            check,
            stack,
            evidence: evidence.into(),
        });
    }

    #[test]
    fn a_proven_stack_gets_its_fix_and_the_evidence_is_named() {
        let mut eu = clean("eu");
        fail(
            &mut eu,
            "method.unknown",
            Severity::High,
            "404 text/html body \"<html>…nginx\"",
        );
        sighting(
            &mut eu,
            CheckId::MethodUnknown,
            Stack::Nginx,
            "404 page signed nginx",
        );
        let r = annotated(vec![eu]);
        let f = r.finding(FindingId::MethodUnknown).unwrap();
        assert!(
            f.remediation
                .starts_with("nginx: the error page is nginx's own"),
            "{}",
            f.remediation
        );
        assert_eq!(
            f.stack,
            Some(StackNote {
                stack: Stack::Nginx,
                evidence: "eu: method.unknown: 404 page signed nginx".into()
            })
        );
    }

    #[test]
    fn no_fingerprint_or_no_entry_keeps_the_generic_fix() {
        let mut eu = clean("eu");
        fail(&mut eu, "method.unknown", Severity::High, "404 text/html");
        let generic = report(vec![eu.clone()])
            .finding(FindingId::MethodUnknown)
            .unwrap()
            .remediation
            .clone();
        let r = annotated(vec![eu.clone()]);
        assert_eq!(
            r.finding(FindingId::MethodUnknown).unwrap().remediation,
            generic
        );
        // A stack with no fix for this finding.
        sighting(
            &mut eu,
            CheckId::MethodUnknown,
            Stack::Vercel,
            "x-vercel-id: x",
        );
        let r = annotated(vec![eu]);
        let f = r.finding(FindingId::MethodUnknown).unwrap();
        assert_eq!(
            (f.remediation.as_str(), f.stack.is_none()),
            (generic.as_str(), true)
        );
    }

    #[test]
    fn the_needle_must_be_in_the_evidence() {
        // nginx in the path of a discover.shape failure that is not a header refusal.
        let mut eu = clean("eu");
        fail(
            &mut eu,
            "discover.shape",
            Severity::High,
            "200 application/json: ttlMs missing",
        );
        sighting(
            &mut eu,
            CheckId::DiscoverShape,
            Stack::Nginx,
            "Server: nginx",
        );
        let r = annotated(vec![eu.clone()]);
        assert!(r.finding(FindingId::DiscoverShape).unwrap().stack.is_none());
        fail(
            &mut eu,
            "discover.shape",
            Severity::High,
            "400 application/json JSON-RPC error -32020",
        );
        let r = annotated(vec![eu]);
        assert!(r
            .finding(FindingId::DiscoverShape)
            .unwrap()
            .remediation
            .contains("proxy_pass_request_headers"));
    }
}
