//! Metadata discovery for the authorization boundary: the protected resource metadata (the
//! challenge's `resource_metadata`, else the well-known URIs), each named authorization
//! server's metadata candidates, and the redirects seen on the way. Every URL goes through
//! the egress policy like the target: a refused address is no evidence either way, so the
//! check it served is `unknown` with the refusal, and nothing from it reaches the report.
//! So is a URL that gave no answer, redirected, or answered for another reason
//! ([`super::unseen`]): "no metadata" is said only when every URL was observed.

use url::Url;

use super::metadata::{self, Fetched};
use super::unseen::{not_observed, Unseen};
use super::AuthStage;
use crate::egress::{self, refused_verdict as refused, EgressPolicy};
use crate::model::{Cause, Outcome, Severity};
use crate::probe::verdict::Verdict;

/// Authorization servers examined at most (a hostile list costs a bounded number of fetches).
const MAX_ISSUERS: usize = 4;

/// A metadata document (a JSON object).
type Doc = serde_json::Map<String, serde_json::Value>;

/// The metadata URLs tried for one document: a line each, and those not observed.
#[derive(Default)]
struct Tried {
    lines: Vec<String>,
    unseen: Vec<Unseen>,
}

impl AuthStage<'_> {
    fn policy(&self) -> &EgressPolicy {
        self.client.policy()
    }

    /// Fetch `url` (kept in `fetched`) and note in `tried` how it went: its JSON document,
    /// where it came from and why its type is not `application/json` by `rule` (if it is
    /// not), when it answered with one.
    async fn look(
        &self,
        url: Url,
        rule: &str,
        tried: &mut Tried,
        fetched: &mut Vec<Fetched>,
    ) -> Option<(Doc, String, Option<String>)> {
        let f = self.fetch(url).await;
        let doc = f.json().cloned();
        let place = f.place();
        let not_json = f.not_json_type(rule);
        match f.unseen(self.policy()) {
            Some(u) => {
                tried.lines.push(u.line.clone());
                tried.unseen.push(u);
            }
            None => tried.lines.push(f.describe(self.policy())),
        }
        fetched.push(f);
        doc.map(|d| (d, place, not_json))
    }

    /// `auth.prm`, and the authorization servers the metadata names.
    pub(super) async fn prm(
        &self,
        resource_metadata: Option<&str>,
        fetched: &mut Vec<Fetched>,
    ) -> (Verdict, Vec<String>) {
        let candidates: Vec<Url> = match resource_metadata {
            Some(u) => match self.target.url.join(u) {
                Ok(u) => vec![u],
                Err(e) => {
                    let v = Verdict::fail(
                        Severity::High,
                        format!("resource_metadata \"{u}\" is not a URL: {e}"),
                    );
                    return (v, Vec::new());
                }
            },
            None => metadata::prm_well_known(self.target),
        };
        let mut tried = Tried::default();
        for url in candidates {
            if let Some((doc, place, not_json)) = self
                .look(url, metadata::PRM_TYPE_RULE, &mut tried, fetched)
                .await
            {
                let (mut problems, found) = metadata::prm_problems(&doc, self.target);
                let v = if !problems.is_empty() {
                    problems.extend(not_json);
                    Verdict::fail(Severity::High, format!("{place}: {}", problems.join("; ")))
                } else if let Some(why) = not_json {
                    // A MUST broken, but the SDK clients read the body whatever its type:
                    // medium (checks.md 3), never a pass.
                    Verdict::fail(
                        Severity::Medium,
                        format!(
                            "{place}: {why}; the document itself is complete (resource matches; authorization_servers {})",
                            found.join(", ")
                        ),
                    )
                } else {
                    Verdict::pass(format!(
                        "{place}: resource matches; authorization_servers {}",
                        found.join(", ")
                    ))
                };
                return (v, found);
            }
        }
        // A URL not observed (no answer, a redirect, an answer for another reason, a
        // refusal by the egress policy) might have held the document: no evidence either way.
        let v = not_observed("protected resource metadata", &tried.unseen, &tried.lines)
            .unwrap_or_else(|| {
                Verdict::fail(
                    Severity::High,
                    format!("no protected resource metadata: {}", tried.lines.join("; ")),
                )
            });
        (v, Vec::new())
    }

    /// `auth.as-metadata` for the issuers `auth.prm` found.
    pub(super) async fn as_metadata(
        &self,
        prm: &Verdict,
        issuers: &[String],
        fetched: &mut Vec<Fetched>,
    ) -> Verdict {
        if issuers.is_empty() {
            return Verdict::skip(if prm.outcome == Outcome::Unknown {
                "the protected resource metadata was not observed, so no authorization server is known (auth.prm says why)"
            } else {
                "no authorization server is named"
            });
        }
        let mut problems = Vec::new();
        let mut unseen = Vec::new();
        let mut causes: Vec<Unseen> = Vec::new();
        let mut good = Vec::new();
        let mut typed = Vec::new();
        for issuer in issuers.iter().take(MAX_ISSUERS) {
            let Ok(url) = Url::parse(issuer) else {
                problems.push(format!("issuer \"{issuer}\" is not a URL"));
                continue;
            };
            let mut matched = false;
            let mut tried = Tried::default();
            for candidate in metadata::as_candidates(&url) {
                let Some((doc, place, not_json)) = self
                    .look(candidate, metadata::AS_TYPE_RULE, &mut tried, fetched)
                    .await
                else {
                    continue;
                };
                let got = doc
                    .get("issuer")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("(none)");
                if got != issuer {
                    tried
                        .lines
                        .push(format!("issuer \"{got}\" is not \"{issuer}\""));
                    continue;
                }
                matched = true;
                let mut p = metadata::as_problems(&doc);
                match not_json {
                    None if p.is_empty() => good.push(format!("{issuer} ({place})")),
                    // As for the protected resource metadata: a MUST broken, but clients
                    // read the body whatever its type: medium, never a pass.
                    Some(why) if p.is_empty() => typed.push(format!(
                        "{issuer} ({place}): {why}; the document itself is complete (identical issuer, S256)"
                    )),
                    _ => {
                        p.extend(not_json);
                        problems.push(format!("{issuer}: {}", p.join("; ")));
                    }
                }
                break;
            }
            if matched {
                continue;
            }
            // A candidate not observed (refused, no answer, a redirect, an answer for another
            // reason) might have held the metadata: no evidence for this issuer.
            let misses = tried.lines.join("; ");
            if tried.unseen.is_empty() {
                problems.push(format!(
                    "{issuer}: no metadata with an identical issuer ({misses})"
                ));
            } else {
                unseen.push(format!(
                    "{issuer}: its metadata was not observed ({misses})"
                ));
                causes.extend(tried.unseen);
            }
        }
        if !problems.is_empty() {
            problems.extend(typed);
            problems.extend(unseen);
            Verdict::fail(Severity::High, problems.join("; "))
        } else if !typed.is_empty() {
            typed.extend(unseen);
            Verdict::fail(Severity::Medium, typed.join("; "))
        } else if let Some(v) = not_observed("authorization server metadata", &causes, &unseen) {
            v
        } else {
            Verdict::pass(format!(
                "metadata with identical issuer and S256 for {}",
                good.join(", ")
            ))
        }
    }
}

/// `auth.metadata-redirect`: redirects on any metadata URL (never followed; a Location is
/// judged by the egress policy). Only URLs that answered are evidence.
pub(super) fn metadata_redirect(fetched: &[Fetched], policy: &EgressPolicy) -> Verdict {
    let redirects: Vec<(String, bool)> = fetched
        .iter()
        .filter_map(|f| {
            f.redirect().map(|(st, loc, cross)| {
                let note = egress::location_note(policy, &f.url, &loc);
                (format!("{} answered {st} to {loc}{note}", f.url), cross)
            })
        })
        .collect();
    let list = || {
        redirects
            .iter()
            .map(|(s, _)| s.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let answered = fetched.iter().filter(|f| f.answered()).count();
    let refusals: Vec<&str> = fetched.iter().filter_map(Fetched::refusal).collect();
    if redirects.iter().any(|(_, cross)| *cross) {
        Verdict::fail(
            Severity::High,
            format!("cross-host redirect on metadata: {}", list()),
        )
        .cause(Cause::CrossHost)
    } else if !redirects.is_empty() {
        Verdict::warn(
            Severity::Low,
            format!("same-host redirect on metadata: {}", list()),
        )
        .cause(Cause::SameHost)
    } else if answered == 0 && !refusals.is_empty() {
        refused(format!(
            "no metadata URL was fetched: {}",
            refusals.join("; ")
        ))
    } else if let (0, Some(Err(e))) = (answered, fetched.first().map(|f| &f.outcome)) {
        // Nothing answered: whether a metadata URL redirects was not observed.
        let silent: Vec<String> = fetched.iter().map(|f| f.describe(policy)).collect();
        Verdict::unknown(
            e.cause,
            format!("no metadata URL answered: {}", silent.join("; ")),
        )
    } else if answered == 0 {
        Verdict::skip("no metadata URL was fetched")
    } else {
        Verdict::pass(format!("{answered} metadata URL(s) answered, no redirect"))
    }
}
