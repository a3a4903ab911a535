//! Progress of one vantage's run, stage by stage, for a caller that shows it (a terminal).
//! The engine calls [`Progress::stage`] when each stage starts; nothing else depends on it.

use std::sync::Arc;

/// The stages of a run, in the order a client meets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressStage {
    Dns,
    Connect,
    Tls,
    /// The first MCP requests: `server/discover` and `initialize`, which tell the era.
    Era,
    Auth,
    Transport,
    /// Listing tools, resources and prompts (read-only).
    Listing,
}

impl ProgressStage {
    /// A plain word for people.
    pub fn as_str(self) -> &'static str {
        match self {
            ProgressStage::Dns => "DNS",
            ProgressStage::Connect => "connect",
            ProgressStage::Tls => "TLS",
            ProgressStage::Era => "era",
            ProgressStage::Auth => "authorization",
            ProgressStage::Transport => "transport",
            ProgressStage::Listing => "listing",
        }
    }
}

/// Told when each stage starts. Calls come from the engine's task; keep them cheap.
pub trait Progress: Send + Sync {
    fn stage(&self, stage: ProgressStage);
}

/// The engine's handle on an optional [`Progress`].
#[derive(Clone, Default)]
pub(crate) struct ProgressSink(Option<Arc<dyn Progress>>);

impl ProgressSink {
    pub(crate) fn new(p: Arc<dyn Progress>) -> Self {
        ProgressSink(Some(p))
    }

    pub(crate) fn stage(&self, stage: ProgressStage) {
        if let Some(p) = &self.0 {
            p.stage(stage);
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(on)"
        } else {
            "ProgressSink(off)"
        })
    }
}
