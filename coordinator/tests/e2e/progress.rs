//! The engine's progress hook: each stage is announced when it starts, in client order, and
//! only the stages that run.

use std::sync::{Arc, Mutex};

use vantage_agent::probe::dns::ResolverChoice;
use vantage_agent::progress::{Progress, ProgressStage as S};
use vantage_agent::{Credentials, Engine, ProbeOptions, Target};
use vantage_fixture::{Fault, Fixture, FIXTURE_TOKEN};

use crate::support::{options, LabCa, LabDns, TlsFront};

#[derive(Default)]
struct Recorded(Mutex<Vec<S>>);

impl Progress for Recorded {
    fn stage(&self, stage: S) {
        self.0.lock().unwrap().push(stage);
    }
}

async fn stages(url: &str, opts: ProbeOptions) -> Vec<S> {
    let rec = Arc::new(Recorded::default());
    let engine = Engine::new(opts).unwrap();
    let result = engine
        .run_with_progress(&Target::parse(url).unwrap(), rec.clone())
        .await;
    assert_eq!(result.status, vantage_agent::model::RegionStatus::Complete);
    let seen = rec.0.lock().unwrap().clone();
    seen
}

#[tokio::test]
async fn each_stage_is_announced_when_it_starts() {
    let plain = Fixture::start(&[]).await.unwrap();
    assert_eq!(
        stages(&plain.url(), options()).await,
        [S::Dns, S::Connect, S::Era, S::Transport, S::Listing]
    );

    let protected = Fixture::start(&[Fault::Protected]).await.unwrap();
    let mut opts = options();
    opts.credentials = Credentials {
        token: Some(FIXTURE_TOKEN.to_string().into()),
        ..Credentials::default()
    };
    assert_eq!(
        stages(&protected.url(), opts).await,
        [
            S::Dns,
            S::Connect,
            S::Era,
            S::Auth,
            S::Transport,
            S::Listing
        ]
    );

    let ca = LabCa::new();
    let dns = LabDns::start(&[("mcp.vantage.test", &["127.0.0.1"])]).await;
    let (cert, key) = ca.leaf(&["mcp.vantage.test"], 90);
    let front = TlsFront::start(plain.addr, &cert, &key).await;
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    opts.extra_ca_pem = Some(ca.ca_pem.clone().into_bytes());
    opts.assume_global = vec!["127.0.0.0/8".parse().unwrap()];
    let url = format!("https://mcp.vantage.test:{}/mcp", front.addr.port());
    assert_eq!(
        stages(&url, opts).await,
        [S::Dns, S::Connect, S::Tls, S::Era, S::Transport, S::Listing]
    );

    // With listing off, the run stops after the transport checks and never announces it.
    let mut opts = options();
    opts.listing = None;
    assert_eq!(
        stages(&plain.url(), opts).await,
        [S::Dns, S::Connect, S::Era, S::Transport]
    );

    // A name that does not resolve stops after DNS: later stages are never announced.
    let mut opts = options();
    opts.resolver = ResolverChoice {
        nameservers: vec![dns.addr],
    };
    assert_eq!(
        stages("https://absent.vantage.test/mcp", opts).await,
        [S::Dns]
    );
}
