//! Where the run looks for the authorization boundary besides `server/discover`
//! (`probe::auth::boundary`): `tools/list`, `tools/call` and `subscriptions/listen` behind a
//! public discovery; beside a discovery that asked for authorization, `tools/list`,
//! `tools/call` (and `subscriptions/listen` when the capabilities are known) without a token,
//! and the 2025-11-25 `initialize`.

use serde_json::Value;

use crate::catalog::CheckId;
use crate::engine::Engine;
use crate::model::{CheckResult, Era, Outcome, Severity};
use futures::future::join_all;

use crate::probe::auth::boundary::{self, Behind, Beside};
use crate::probe::auth::AuthStage;
use crate::probe::era;
use crate::probe::http::{Exchange, ProbeRequest};
use crate::probe::listing::listen;
use crate::probe::verdict::Verdict;
use crate::progress::ProgressStage;
use crate::protocol::Run;

impl Engine {
    pub(crate) fn auth_stage<'a>(&'a self, run: &Run<'a>) -> AuthStage<'a> {
        AuthStage {
            target: run.target,
            client: run.client,
            limits: &self.options().limits,
            budget: self.budget(run.deadline),
            deadline: run.deadline,
            credentials: &self.options().credentials,
            expect_auth: self.options().expect_auth,
        }
    }

    /// `server/discover` was served without a token: does a request past it ask for
    /// authorization? `tools/list` first; without a credential then the `initialize` sent
    /// beside discovery; then `tools/call` and `subscriptions/listen` (a server may protect
    /// only the requests that act or hold a stream). Asked on a 2026-07-28 server without a
    /// credential (every request past discovery would otherwise meet the boundary unnamed),
    /// and with one whenever the capabilities make such a request valid (the random-token
    /// probe is due on each that asks). When one does, the boundary runs from that answer,
    /// and a request asked here whose token-less answer was not observed (no answer, 429,
    /// 502-504, a bare 500 or 403) leaves the random token's verdict `unknown`, as beside a
    /// protected discovery; when none does, such an answer is no boundary (an open server
    /// stays open). Without a credential nothing past it can be observed, and `true` says
    /// the run stops here (the token probes follow in `protocol`).
    pub(crate) async fn boundary_behind_discover(
        &self,
        run: &mut Run<'_>,
        era: Era,
        caps: &Value,
        initialize: Option<&Exchange>,
    ) -> bool {
        let token = self.options().credentials.token.as_ref();
        let mut candidates = Behind::candidates(caps, listen::filter(caps));
        if token.is_none() && !candidates.contains(&Behind::ToolsList) {
            // Without a credential tools/list is asked whatever is advertised.
            candidates.insert(0, Behind::ToolsList);
        }
        if !era.speaks_2026() || candidates.is_empty() {
            return false;
        }
        let stage = self.auth_stage(run);
        let ask = |b: Behind| {
            let stage = &stage;
            async move {
                let got = stage.send_read(&b.request(b.id()), b.read()).await;
                (b, got)
            }
        };
        let shows = |got: &Result<Exchange, _>| got.as_ref().is_ok_and(boundary::shows_boundary);
        let init_shows = initialize.filter(|i| token.is_none() && boundary::shows_boundary(i));
        // Without a credential the first request that shows the boundary is enough: tools/list,
        // else the initialize already answered, else the rest; with one, every request is
        // asked (each that shows it gets the random token).
        let mut answers = Vec::new();
        if token.is_none() {
            answers.push(ask(candidates.remove(0)).await);
            if !shows(&answers[0].1) && init_shows.is_none() {
                answers.extend(join_all(candidates.into_iter().map(ask)).await);
            }
        } else {
            answers = join_all(candidates.into_iter().map(ask)).await;
        }
        let mut found: Vec<(Behind, Exchange)> = Vec::new();
        let mut unseen = Vec::new();
        for (b, got) in answers {
            match got {
                Ok(ex) if boundary::shows_boundary(&ex) => found.push((b, ex)),
                got => unseen.extend(boundary::not_observed(&got).map(|o| (b.method(), o))),
            }
        }
        let (method, ex) = match (found.first(), init_shows) {
            (Some((b, ex)), _) => (b.method(), ex.clone()),
            (None, Some(i)) => {
                // Without a credential, the initialize sent beside discovery is an
                // unauthenticated MCP request too: its Bearer challenge shows the boundary.
                run.st.paths.initialize = true;
                ("initialize", i.clone())
            }
            // No boundary anywhere: an open server. A request not observed here (one 429)
            // is no reason to doubt that (nothing asked for authorization).
            (None, None) => return false,
        };
        // The boundary is there: a request whose token-less answer was not observed may sit
        // behind it too, so whether the random token must be refused there is unknown.
        run.st.paths.unseen = unseen;
        run.st.paths.behind = found
            .iter()
            .map(|(b, ex)| (b.clone(), boundary::challenge_scope(ex)))
            .collect();
        run.st.protected = true;
        run.st.progress.stage(ProgressStage::Auth);
        stage.run(&ex, run.rec).await;
        // One rule with server/discover's: a request the authorization layer answered 403
        // without a token fails auth.challenge, high, naming the request (the one the
        // challenge was judged on too).
        let answers: Vec<(&str, &Exchange)> = found
            .iter()
            .map(|(b, ex)| (b.method(), ex))
            .chain(found.is_empty().then_some(("initialize", &ex)))
            .collect();
        if let Some(v) = boundary::no_token_403(&answers) {
            let first = run.rec.get(CheckId::AuthChallenge).cloned();
            run.rec.record_ms(
                CheckId::AuthChallenge,
                with_open(first, vec![v], &format!("{method}'s challenge")),
                0,
            );
        }
        if token.is_none() {
            // discover worked: the server speaks 2026-07-28. An initialize the authorization
            // layer answered says nothing about the legacy path but that it is behind the
            // same boundary: no gap in what could be observed without a credential.
            let legacy_behind = initialize.filter(|i| boundary::asks_for_authorization(i));
            if let (Some(i), Some(Outcome::Unknown)) = (
                legacy_behind,
                run.rec.get(CheckId::EraDetect).map(|c| c.outcome),
            ) {
                run.rec.record_ms(
                    CheckId::EraDetect,
                    Verdict::pass(format!(
                        "the server speaks 2026-07-28 (server/discover works without a token); whether it also speaks 2025-11-25 is behind the authorization boundary (initialize without a token answered {})",
                        i.status
                    )),
                    0,
                );
            }
            run.rec.skip_rest(&format!(
                "the endpoint requires authorization ({method} without a token answered {}) and no credential was given; name one with --token-env",
                ex.status
            ));
            return true;
        }
        false
    }

    /// Discovery asked for authorization: the other requests the token probes must also be
    /// refused on. `initialize` is the one the run sent without a token (no credential
    /// given), or `None` to send one now; a legacy path that serves it fails
    /// `auth.challenge` whatever credential was given. Past discovery (era not legacy-only)
    /// `tools/list` and `tools/call` (a tool no server has) are asked without a token, and
    /// `subscriptions/listen` when `caps` (the capabilities an authenticated discover
    /// answered; unknown without a credential) make it valid, all at once: each that shows
    /// the boundary gets the random token too; one the MCP layer serves without a token is
    /// a bypass (`auth.challenge`, [`boundary::beside`]); one not observed leaves the
    /// random token's verdict `unknown` with the reason.
    pub(crate) async fn boundary_beside_discover(
        &self,
        stage: &AuthStage<'_>,
        unauth: &Exchange,
        initialize: Option<&Exchange>,
        era: Era,
        caps: Option<&Value>,
        run: &mut Run<'_>,
    ) {
        let mut asked = Vec::new();
        if era != Era::Legacy {
            asked.extend([Behind::ToolsList, Behind::ToolsCall]);
            asked.extend(caps.and_then(listen::filter).map(Behind::Listen));
        }
        let ask = |b: Behind| async move {
            let got = stage.send_read(&b.request(b.id()), b.read()).await;
            (b, got)
        };
        let legacy = async {
            match (era, initialize) {
                (Era::Modern, _) => None,
                (_, Some(i)) => Some(Ok(i.clone())),
                (_, None) => Some(
                    stage
                        .send(&ProbeRequest::legacy_initialize(era::INITIALIZE_ID))
                        .await,
                ),
            }
        };
        let (init, answers) = tokio::join!(legacy, join_all(asked.into_iter().map(ask)));
        let mut open: Vec<Verdict> = Vec::new();
        if let Some(init) = init {
            run.st.paths.initialize = true;
            if let Some(v) = init
                .as_ref()
                .ok()
                .and_then(|i| boundary::legacy_open(unauth, i))
            {
                run.st.paths.initialize_open = true;
                open.push(v);
            }
            // Not observed (no answer, 429, 503, a bare 500, ...): whether the legacy path
            // asks for authorization is unknown, never a pass (red team round 18, D2).
            run.st.paths.initialize_unseen = boundary::initialize_not_observed(&init);
        }
        let mut forbidden: Vec<(&str, Exchange)> = Vec::new();
        for (b, got) in answers {
            match boundary::beside(unauth, &b, &got) {
                Beside::Boundary => {
                    let scope = got.as_ref().ok().and_then(boundary::challenge_scope);
                    run.st.paths.behind.push((b, scope));
                }
                Beside::Forbidden => {
                    if let Ok(ex) = &got {
                        forbidden.push((b.method(), ex.clone()));
                    }
                    let scope = got.as_ref().ok().and_then(boundary::challenge_scope);
                    run.st.paths.behind.push((b, scope));
                }
                Beside::Open(v) => open.push(v),
                Beside::Unseen(o) => run.st.paths.unseen.push((b.method(), o)),
                Beside::NotMcp => {}
            }
        }
        let forbidden: Vec<(&str, &Exchange)> = forbidden.iter().map(|(m, ex)| (*m, ex)).collect();
        open.extend(boundary::no_token_403(&forbidden));
        if !open.is_empty() {
            let discover = run.rec.get(CheckId::AuthChallenge).cloned();
            run.rec.record_ms(
                CheckId::AuthChallenge,
                with_open(discover, open, "server/discover's challenge"),
                0,
            );
        }
        if let Some(o) = &run.st.paths.initialize_unseen {
            let v =
                boundary::challenge_with_initialize_unseen(run.rec.get(CheckId::AuthChallenge), o);
            run.rec.record_ms(CheckId::AuthChallenge, v, 0);
        }
    }
}

/// `auth.challenge` once requests past a protected discovery were served (or answered by
/// the MCP layer, or answered 403 by the authorization layer) without a token: the worst of
/// those verdicts and the challenge's own (`discover`, the verdict on the challenge the
/// boundary was judged from, named `label`), every observation named (the challenge's
/// last).
fn with_open(discover: Option<CheckResult>, open: Vec<Verdict>, label: &str) -> Verdict {
    let rank = |o: Outcome, s: Option<Severity>| match o {
        Outcome::Fail => 2 + s.map_or(0, |s| s as usize),
        Outcome::Warn => 1,
        _ => 0,
    };
    let mut worst = open
        .iter()
        .max_by_key(|v| rank(v.outcome, v.severity))
        .cloned()
        .unwrap_or_else(|| Verdict::skip(""));
    worst.observed = open
        .iter()
        .map(|v| v.observed.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    if let Some(c) = discover {
        if rank(c.outcome, c.severity) > rank(worst.outcome, worst.severity) {
            worst.outcome = c.outcome;
            worst.severity = c.severity;
            worst.cause = c.cause;
        }
        worst
            .observed
            .push_str(&format!("; {label}: {}", c.observed));
    }
    worst
}
