//! Cutting agents off when a configuration reload revokes or moves their token: the token an
//! agent attached with is kept with its session, and every reload checks it again against
//! the new [[agents]]. An agent whose token is gone, or now bound to another region, has its
//! stream ended at once with PERMISSION_DENIED and why; its jobs in flight end as its region's
//! error naming the reason; no job (and so no credential) goes to it any more.

use secrecy::{ExposeSecret, SecretString};
use tokio::sync::{mpsc, oneshot};

use super::service::{authenticate, AgentAuth};
use super::{Entry, JobOutcome, Registry, ToAgent};

/// The token a session attached with and how to end its stream.
pub(super) struct Binding {
    /// The [[agents]] entry's name it matched (for logs; never the token).
    name: String,
    token: SecretString,
    /// Ends the session's stream with PERMISSION_DENIED and the reason sent.
    kill: Option<oneshot::Sender<String>>,
}

/// An agent cut off by a reload, as logged (the token never appears).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub agent: String,
    pub name: String,
    pub region: String,
    pub jobs_lost: usize,
    pub reason: String,
}

/// Why `token`, attached for `region`, no longer holds under `agents`; `None` when it does.
fn verdict(agents: &[AgentAuth], token: &SecretString, region: &str) -> Option<String> {
    match authenticate(agents, token.expose_secret()) {
        None => Some(
            "this agent's token was revoked by a configuration reload (no [[agents]] entry has it any more); an agent started with --token-file reads the file again on its next attempt (at its shortest backoff when the file already holds a new token, otherwise after --backoff-max), so a rotated Secret needs nothing more; otherwise restart the agent with its current token".into(),
        ),
        Some(a) if a.region != region => Some(format!(
            "this agent's token was moved from region `{region}` to region `{}` by a configuration reload; reconnect it as an agent of `{}` or give it the token of `{region}`",
            a.region, a.region
        )),
        Some(_) => None,
    }
}

impl Registry {
    /// Add an agent that attached from `peer` with `token` under the [[agents]] entry
    /// `name`: a reload that revokes or moves that token cuts it off (see
    /// [`Registry::revoke_stale`]). Its id is made unique ([`Registry::register_from`]).
    #[allow(clippy::too_many_arguments)]
    pub fn register_bound(
        &self,
        id: String,
        region: String,
        version: String,
        tx: mpsc::Sender<ToAgent>,
        name: String,
        token: SecretString,
        kill: oneshot::Sender<String>,
        peer: String,
    ) -> u64 {
        let session = self.register_from(id, region, version, tx, Some(peer));
        if let Some(e) = self.lock().agents.get_mut(&session) {
            e.binding = Some(Binding {
                name,
                token,
                kill: Some(kill),
            });
        }
        session
    }

    /// Cut off every connected agent whose token no longer maps to its region under
    /// `agents` (removed, replaced, or now another region's). Agents whose token still
    /// holds keep their session. Logs one line per agent cut; returns them.
    pub fn revoke_stale(&self, agents: &[AgentAuth]) -> Vec<Cut> {
        self.revoke_where(agents, |_| true)
    }

    /// [`Registry::revoke_stale`] for one session only (an agent that registered while a
    /// reload was replacing the tokens). Returns the reason when it was cut.
    pub fn revoke_if_stale(&self, session: u64, agents: &[AgentAuth]) -> Option<String> {
        self.revoke_where(agents, |s| s == session)
            .pop()
            .map(|c| c.reason)
    }

    fn revoke_where(&self, agents: &[AgentAuth], pick: impl Fn(u64) -> bool) -> Vec<Cut> {
        let mut out = Vec::new();
        {
            // One critical section: no job can be dispatched to a session between its
            // verdict and its removal.
            let mut g = self.lock();
            let stale: Vec<(u64, Cut, Option<oneshot::Sender<String>>)> = g
                .agents
                .iter_mut()
                .filter(|(s, _)| pick(**s))
                .filter_map(|(s, e)| stale(e, agents).map(|(cut, kill)| (*s, cut, kill)))
                .collect();
            for (session, mut cut, kill) in stale {
                // The stream ends first, before anything still queued for it goes out.
                if let Some(kill) = kill {
                    let _ = kill.send(cut.reason.clone());
                }
                let reason = cut.reason.clone();
                cut.jobs_lost = g.remove(session, || JobOutcome::Revoked(reason.clone()));
                out.push(cut);
            }
        }
        for cut in &out {
            tracing::warn!(
                agent = %cut.agent,
                name = %cut.name,
                region = %cut.region,
                jobs_lost = cut.jobs_lost,
                "agent disconnected: {}",
                cut.reason
            );
        }
        out
    }
}

/// The cut for entry `e` when its token no longer holds, and its stream's kill switch.
fn stale(e: &mut Entry, agents: &[AgentAuth]) -> Option<(Cut, Option<oneshot::Sender<String>>)> {
    let b = e.binding.as_mut()?;
    let reason = verdict(agents, &b.token, &e.info.region)?;
    let cut = Cut {
        agent: e.info.id.clone(),
        name: b.name.clone(),
        region: e.info.region.clone(),
        jobs_lost: 0,
        reason,
    };
    Some((cut, b.kill.take()))
}

#[cfg(test)]
#[path = "revoke_tests.rs"]
pub(crate) mod tests;
