//! Where the run looks for the authorization boundary besides `server/discover`
//! (`probe::auth::boundary`): `tools/list` behind a public discovery, and the 2025-11-25
//! `initialize` of an endpoint whose discovery asked for authorization.

use std::time::Instant;

use serde_json::Value;

use crate::catalog::CheckId;
use crate::egress::EgressClient;
use crate::engine::{Engine, State};
use crate::model::{Era, Outcome};
use crate::probe::auth::boundary::{self, Paths};
use crate::probe::auth::AuthStage;
use crate::probe::era;
use crate::probe::http::{Exchange, ProbeRequest};
use crate::probe::verdict::{Recorder, Verdict};
use crate::progress::ProgressStage;
use crate::target::Target;

impl Engine {
    pub(crate) fn auth_stage<'a>(
        &'a self,
        target: &'a Target,
        client: &'a EgressClient,
        deadline: Instant,
    ) -> AuthStage<'a> {
        AuthStage {
            target,
            client,
            limits: &self.options().limits,
            budget: self.budget(deadline),
            credentials: &self.options().credentials,
            expect_auth: self.options().expect_auth,
        }
    }

    /// `server/discover` was served without a token: does `tools/list` ask for
    /// authorization? Asked on a 2026-07-28 server without a credential (every request past
    /// discovery would otherwise meet the boundary unnamed), and with one when the tools
    /// capability is advertised (its random-token probe is due there). When it does, the
    /// boundary runs from that answer; without a credential nothing past it can be observed,
    /// and `true` says the run stops here (the token probes follow in `protocol`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn boundary_behind_discover(
        &self,
        target: &Target,
        client: &EgressClient,
        deadline: Instant,
        rec: &mut Recorder,
        st: &mut State,
        era: Era,
        caps: &Value,
        initialize: Option<&Exchange>,
    ) -> bool {
        let token = self.options().credentials.token.as_ref();
        if !era.speaks_2026() || (token.is_some() && caps.get("tools").is_none()) {
            return false;
        }
        let stage = self.auth_stage(target, client, deadline);
        let tools_list = stage
            .send(&boundary::tools_list_request())
            .await
            .ok()
            .filter(boundary::shows_boundary);
        let ex = match (tools_list, initialize) {
            (Some(ex), _) => {
                st.paths = Paths {
                    tools_list: true,
                    tools_list_scope: boundary::challenge_scope(&ex),
                    ..Paths::default()
                };
                ex
            }
            // Without a credential, the initialize sent beside discovery is an
            // unauthenticated MCP request too: its Bearer challenge shows the boundary.
            (None, Some(i)) if token.is_none() && boundary::shows_boundary(i) => {
                st.paths = Paths {
                    initialize: true,
                    ..Paths::default()
                };
                i.clone()
            }
            _ => return false,
        };
        st.protected = true;
        st.progress.stage(ProgressStage::Auth);
        stage.run(&ex, rec).await;
        if token.is_none() {
            // discover worked: the server speaks 2026-07-28. An initialize the authorization
            // layer answered says nothing about the legacy path but that it is behind the
            // same boundary: no gap in what could be observed without a credential.
            let legacy_behind = initialize.filter(|i| boundary::asks_for_authorization(i));
            if let (Some(i), Some(Outcome::Unknown)) = (
                legacy_behind,
                rec.get(CheckId::EraDetect).map(|c| c.outcome),
            ) {
                rec.record_ms(
                    CheckId::EraDetect,
                    Verdict::pass(format!(
                        "the server speaks 2026-07-28 (server/discover works without a token); whether it also speaks 2025-11-25 is behind the authorization boundary (initialize without a token answered {})",
                        i.status
                    )),
                    0,
                );
            }
            rec.skip_rest(&format!(
                "the endpoint requires authorization ({} without a token answered {}) and no credential was given; name one with --token-env",
                if st.paths.tools_list { "tools/list" } else { "initialize" },
                ex.status
            ));
            return true;
        }
        false
    }

    /// Discovery asked for authorization: the other requests the token probes must also be
    /// refused on. `initialize` is the one the run sent without a token (no credential
    /// given), or `None` to send one now; a legacy path that serves it fails
    /// `auth.challenge` whatever credential was given.
    pub(crate) async fn boundary_beside_discover(
        &self,
        stage: &AuthStage<'_>,
        unauth: &Exchange,
        initialize: Option<&Exchange>,
        era: Era,
        rec: &mut Recorder,
        st: &mut State,
    ) {
        if era != Era::Modern {
            let sent;
            let init = match initialize {
                Some(i) => Some(i),
                None => {
                    sent = stage
                        .send(&ProbeRequest::legacy_initialize(era::INITIALIZE_ID))
                        .await
                        .ok();
                    sent.as_ref()
                }
            };
            st.paths.initialize = true;
            if let Some(mut v) = init.and_then(|i| boundary::legacy_open(unauth, i)) {
                st.paths.initialize_open = true;
                if let Some(c) = rec.get(CheckId::AuthChallenge) {
                    v.observed
                        .push_str(&format!("; server/discover's challenge: {}", c.observed));
                }
                rec.record_ms(CheckId::AuthChallenge, v, 0);
            }
        }
        if era != Era::Legacy {
            if let Ok(ex) = stage.send(&boundary::tools_list_request()).await {
                if boundary::shows_boundary(&ex) {
                    st.paths.tools_list = true;
                    st.paths.tools_list_scope = boundary::challenge_scope(&ex);
                }
            }
        }
    }
}
