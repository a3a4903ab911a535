//! The fleet: connected agents by region, their jobs in flight, and liveness. Plain domain
//! types: the gRPC service (`service`) puts them on the wire.

#[cfg(test)]
mod refused_tests;
mod revoke;
#[cfg(test)]
mod same_id_tests;
mod service;

pub use revoke::Cut;
pub use service::{AgentAuth, FleetService};

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use vantage_agent::model::RegionResult;
use vantage_agent::Job;

/// An agent as `GET /v1/agents` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentInfo {
    pub id: String,
    pub region: String,
    pub version: String,
    /// RFC 3339 UTC.
    pub connected_since: String,
    pub in_flight: u32,
    pub queued: u32,
    pub dropped: u64,
    /// Seconds since the Unix epoch of the last message from it.
    pub last_seen: f64,
}

/// What the coordinator sends an agent.
#[derive(Debug)]
pub enum ToAgent {
    /// Run this job; its result comes back under `id`.
    Job { id: String, job: Box<Job> },
    /// Stop the job `id` (its deadline passed).
    Cancel { id: String },
    /// The coordinator is going away: reconnect now (to its replacement).
    Reconnect { reason: String },
}

/// What an agent's heartbeat says about its load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    pub in_flight: u32,
    pub queued: u32,
    pub dropped: u64,
}

struct Entry {
    info: AgentInfo,
    last_seen: Instant,
    tx: mpsc::Sender<ToAgent>,
    dispatched: u32,
    /// The agent said it is shutting down: no new jobs for it.
    leaving: bool,
    /// The token it attached with, when it came over the wire: a reload checks it again.
    binding: Option<revoke::Binding>,
    /// Where it connected from (`ip:port`), when it came over the wire: for logs.
    peer: Option<String>,
}

/// How a dispatched job ended.
#[derive(Debug)]
pub enum JobOutcome {
    Done(Box<RegionResult>),
    /// The agent refused the job without running it, and said why.
    Refused(String),
    /// The agent disconnected or was dropped before answering.
    AgentLost,
    /// The coordinator cut the agent off before it answered (its token was revoked or moved
    /// to another region by a configuration reload), and why.
    Revoked(String),
    /// The agent answered with a result this coordinator cannot read (an agent newer than
    /// the coordinator: a check id it does not know), and why.
    Unusable {
        reason: String,
        agent_version: String,
    },
}

struct Pending {
    session: u64,
    tx: oneshot::Sender<JobOutcome>,
}

#[derive(Default)]
struct Inner {
    next_session: u64,
    agents: BTreeMap<u64, Entry>,
    pending: HashMap<String, Pending>,
    /// Jobs refused by an agent (without running them), per region, since the start.
    refused: BTreeMap<String, u64>,
}

impl Inner {
    /// Remove an agent; each of its jobs in flight ends with `outcome()`. Returns how many.
    fn remove(&mut self, session: u64, outcome: impl Fn() -> JobOutcome) -> usize {
        let g = self;
        g.agents.remove(&session);
        let lost: Vec<String> = g
            .pending
            .iter()
            .filter(|(_, p)| p.session == session)
            .map(|(k, _)| k.clone())
            .collect();
        let n = lost.len();
        for job in lost {
            if let Some(p) = g.pending.remove(&job) {
                let _ = p.tx.send(outcome());
            }
        }
        n
    }
}

/// The registry of connected agents. Cheap to share behind an `Arc`.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("agents", &self.agents().len())
            .finish()
    }
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add an agent; returns its session id.
    pub fn register(
        &self,
        id: String,
        region: String,
        version: String,
        tx: mpsc::Sender<ToAgent>,
    ) -> u64 {
        self.register_from(id, region, version, tx, None)
    }

    /// Add an agent that connected from `peer`; returns its session id. Its id is unique
    /// among connected agents: an id already in use (two agents started with one `--id`, or
    /// an agent that reconnected before its old session was noticed gone) gets the first
    /// free suffix `~2`, `~3`, … so that reports (`"agent"`), `GET /v1/agents` and logs tell
    /// the sessions apart. Never refused: a reconnecting agent must not be locked out by its
    /// own stale session. A WARN names the id and both peers.
    pub fn register_from(
        &self,
        id: String,
        region: String,
        version: String,
        tx: mpsc::Sender<ToAgent>,
        peer: Option<String>,
    ) -> u64 {
        let mut g = self.lock();
        g.next_session += 1;
        let session = g.next_session;
        let in_use = |g: &Inner, x: &str| g.agents.values().any(|e| e.info.id == x);
        let holder = g
            .agents
            .values()
            .find(|e| e.info.id == id)
            .map(|e| (e.info.region.clone(), e.peer.clone()));
        let given = match &holder {
            None => id.clone(),
            Some(_) => (2u64..)
                .map(|n| format!("{id}~{n}"))
                .find(|x| !in_use(&g, x))
                .unwrap_or_else(|| format!("{id}~{session}")),
        };
        let info = AgentInfo {
            id: given.clone(),
            region: region.clone(),
            version,
            connected_since: crate::clock::now_rfc3339(),
            in_flight: 0,
            queued: 0,
            dropped: 0,
            last_seen: crate::clock::unix_now(),
        };
        g.agents.insert(
            session,
            Entry {
                info,
                last_seen: Instant::now(),
                tx,
                dispatched: 0,
                leaving: false,
                binding: None,
                peer: peer.clone(),
            },
        );
        // Logged once the registry is free again.
        drop(g);
        if let Some((held_region, held_peer)) = holder {
            tracing::warn!(
                agent = %given,
                asked = %id,
                %region,
                peer = peer.as_deref().unwrap_or("unknown"),
                held_by = held_peer.as_deref().unwrap_or("unknown"),
                held_region = %held_region,
                "agent id `{id}` is already connected (from {}); this session is `{given}` in reports, GET /v1/agents and logs. Two agents with one --id: give each its own --id (or omit it); a reconnect of the same agent: its old session is dropped within fleet.agent_timeout",
                held_peer.as_deref().unwrap_or("unknown")
            );
        }
        session
    }

    /// The agent is shutting down: send it no new job (its running jobs may still finish).
    pub fn leaving(&self, session: u64) {
        if let Some(e) = self.lock().agents.get_mut(&session) {
            e.leaving = true;
        }
    }

    /// Tell every agent to reconnect (the coordinator is going away) and forget them: their
    /// streams end, and jobs still in flight end as `AgentLost`. Returns how many there were.
    pub fn close_all(&self, reason: &str) -> usize {
        let sessions: Vec<u64> = {
            let g = self.lock();
            for e in g.agents.values() {
                let _ = e.tx.try_send(ToAgent::Reconnect {
                    reason: reason.to_string(),
                });
            }
            g.agents.keys().copied().collect()
        };
        for s in &sessions {
            self.deregister(*s);
        }
        sessions.len()
    }

    /// Remove an agent; its jobs in flight end as `AgentLost`. Returns how many there were.
    pub fn deregister(&self, session: u64) -> usize {
        self.remove(session, || JobOutcome::AgentLost)
    }

    /// Remove an agent; each of its jobs in flight ends with `outcome()`.
    fn remove(&self, session: u64, outcome: impl Fn() -> JobOutcome) -> usize {
        self.lock().remove(session, outcome)
    }

    pub fn seen(&self, session: u64, hb: Option<Load>) {
        let mut g = self.lock();
        if let Some(e) = g.agents.get_mut(&session) {
            e.last_seen = Instant::now();
            e.info.last_seen = crate::clock::unix_now();
            if let Some(hb) = hb {
                e.info.in_flight = hb.in_flight;
                e.info.queued = hb.queued;
                e.info.dropped = hb.dropped;
            }
        }
    }

    /// Deliver how a job ended (a result, or the agent's refusal). A result names the agent
    /// that sent it. A refusal is counted for the agent's region
    /// (`vantage_region_jobs_refused_total`): a fault of the fleet's configuration that the
    /// target's alerts must not carry.
    pub fn complete(&self, session: u64, job_id: &str, outcome: JobOutcome) {
        let mut g = self.lock();
        let region = g.agents.get_mut(&session).map(|e| {
            e.dispatched = e.dispatched.saturating_sub(1);
            e.info.region.clone()
        });
        let agent = g.agents.get(&session).map(|e| e.info.id.clone());
        match g.pending.remove(job_id) {
            Some(p) if p.session == session => {
                let mut outcome = outcome;
                match (&mut outcome, region) {
                    (JobOutcome::Refused(_), Some(region)) => {
                        *g.refused.entry(region).or_default() += 1;
                    }
                    // The report names the agent that served the region (which of a
                    // region's agents has a broken resolver, say): from its session.
                    (JobOutcome::Done(r), _) => r.agent = agent,
                    _ => {}
                }
                let _ = p.tx.send(outcome);
            }
            Some(p) => {
                // A result from another agent than the one the job went to: refuse it.
                g.pending.insert(job_id.to_string(), p);
            }
            None => {}
        }
    }

    /// Send `job` to the least busy agent of `region` under `job_id`. `None` when the region
    /// has no agent.
    pub fn dispatch(
        &self,
        region: &str,
        job_id: &str,
        job: &Job,
    ) -> Option<oneshot::Receiver<JobOutcome>> {
        self.dispatch_except(region, job_id, job, &[])
            .map(|(_, rx)| rx)
    }

    /// [`Registry::dispatch`] to an agent of `region` other than the sessions in `except`
    /// (agents that refused this job already), with the session it went to.
    pub fn dispatch_except(
        &self,
        region: &str,
        job_id: &str,
        job: &Job,
        except: &[u64],
    ) -> Option<(u64, oneshot::Receiver<JobOutcome>)> {
        let mut g = self.lock();
        let session = g
            .agents
            .iter()
            .filter(|(s, e)| {
                e.info.region == region && !e.leaving && !e.tx.is_closed() && !except.contains(s)
            })
            .min_by_key(|(s, e)| (e.dispatched, e.info.in_flight, **s))
            .map(|(s, _)| *s)?;
        let entry = g.agents.get_mut(&session)?;
        let msg = ToAgent::Job {
            id: job_id.to_string(),
            job: Box::new(job.clone()),
        };
        if entry.tx.try_send(msg).is_err() {
            return None;
        }
        entry.dispatched += 1;
        let (tx, rx) = oneshot::channel();
        g.pending
            .insert(job_id.to_string(), Pending { session, tx });
        Some((session, rx))
    }

    /// The id of the agent on `session`, while it is connected.
    pub fn agent_id(&self, session: u64) -> Option<String> {
        self.lock().agents.get(&session).map(|e| e.info.id.clone())
    }

    /// Forget a job (its deadline passed); tell its agent to cancel it.
    pub fn abandon(&self, job_id: &str) {
        let mut g = self.lock();
        if let Some(p) = g.pending.remove(job_id) {
            if let Some(e) = g.agents.get_mut(&p.session) {
                e.dispatched = e.dispatched.saturating_sub(1);
                let _ = e.tx.try_send(ToAgent::Cancel {
                    id: job_id.to_string(),
                });
            }
        }
    }

    /// Drop agents silent for longer than `timeout`; returns how many.
    pub fn reap(&self, timeout: Duration) -> usize {
        let stale: Vec<(u64, AgentInfo)> = {
            let g = self.lock();
            g.agents
                .iter()
                .filter(|(_, e)| e.last_seen.elapsed() > timeout)
                .map(|(s, e)| (*s, e.info.clone()))
                .collect()
        };
        for (s, info) in &stale {
            let lost = self.deregister(*s);
            tracing::warn!(
                agent = %info.id,
                region = %info.region,
                jobs_lost = lost,
                "agent dropped: silent for longer than fleet.agent_timeout ({}); its jobs in flight count as missing",
                humantime::format_duration(timeout)
            );
        }
        stale.len()
    }

    pub fn agents(&self) -> Vec<AgentInfo> {
        self.lock()
            .agents
            .values()
            .map(|e| e.info.clone())
            .collect()
    }

    /// Jobs refused by an agent per region, since the coordinator started.
    pub fn refused_per_region(&self) -> BTreeMap<String, u64> {
        self.lock().refused.clone()
    }

    /// Connected agents per region.
    pub fn per_region(&self) -> BTreeMap<String, (usize, f64)> {
        let mut out: BTreeMap<String, (usize, f64)> = BTreeMap::new();
        for a in self.agents() {
            let e = out.entry(a.region.clone()).or_insert((0, 0.0));
            e.0 += 1;
            e.1 = e.1.max(a.last_seen);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job::new(vantage_agent::Target::parse("http://t/").unwrap())
    }

    #[tokio::test]
    async fn jobs_spread_over_a_regions_agents_and_lost_agents_fail_their_jobs() {
        let reg = Registry::default();
        let (tx1, mut rx1) = mpsc::channel(8);
        let (tx2, mut rx2) = mpsc::channel(8);
        let s1 = reg.register("a1".into(), "eu".into(), "v".into(), tx1);
        let _s2 = reg.register("a2".into(), "eu".into(), "v".into(), tx2);
        assert!(reg.dispatch("us", "x", &job()).is_none(), "no agent in us");
        let r1 = reg.dispatch("eu", "j1", &job()).unwrap();
        let _r2 = reg.dispatch("eu", "j2", &job()).unwrap();
        // One job each.
        assert!(rx1.try_recv().is_ok() && rx2.try_recv().is_ok());
        // The first agent disconnects: its job ends as lost, never as a pass.
        reg.deregister(s1);
        assert!(matches!(r1.await, Ok(JobOutcome::AgentLost)));
        assert_eq!(reg.agents().len(), 1);
    }

    #[tokio::test]
    async fn a_result_from_another_session_is_refused() {
        let reg = Registry::default();
        let (tx1, _rx1) = mpsc::channel(8);
        let (tx2, _rx2) = mpsc::channel(8);
        let s1 = reg.register("a1".into(), "eu".into(), "v".into(), tx1);
        let s2 = reg.register("a2".into(), "us".into(), "v".into(), tx2);
        let mut rx = reg.dispatch("eu", "j", &job()).unwrap();
        let done = |region: &str| {
            JobOutcome::Done(Box::new(RegionResult::absent(
                region,
                vantage_agent::model::RegionStatus::Complete,
            )))
        };
        reg.complete(s2, "j", done("us"));
        assert!(
            rx.try_recv().is_err(),
            "another agent cannot answer this job"
        );
        reg.complete(s1, "j", done("eu"));
        assert!(matches!(rx.try_recv(), Ok(JobOutcome::Done(_))));
    }
}
