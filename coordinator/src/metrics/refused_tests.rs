//! Red team round 12 (D3): a region whose agent refuses every job was "ready" in every
//! exported series. The fleet's refusals are exported per region, as a counter from 0.

use tokio::sync::mpsc;
use vantage_agent::Job;

use super::*;
use crate::fleet::JobOutcome;

#[tokio::test]
async fn jobs_an_agent_refused_are_exported_per_region_from_0() {
    let m = Metrics::new(Registry::new()).unwrap();
    let fleet = Fleet::default();
    let regions = ["a".to_string(), "d".to_string()];
    let text = m.render(&fleet, &regions);
    for line in [
        "# TYPE vantage_region_jobs_refused_total counter",
        "vantage_region_jobs_refused_total{region=\"a\"} 0",
        "vantage_region_jobs_refused_total{region=\"d\"} 0",
    ] {
        assert!(text.contains(line), "{line} missing:\n{text}");
    }
    let (tx, _rx) = mpsc::channel(8);
    let d = fleet.register("ag-d".into(), "d".into(), "v".into(), tx);
    let job = Job::new(vantage_agent::Target::parse("http://t/").unwrap());
    for id in ["j1", "j2", "j3"] {
        let _rx = fleet.dispatch("d", id, &job).unwrap();
        fleet.complete(d, id, JobOutcome::Refused("ceiling".into()));
    }
    let text = m.render(&fleet, &regions);
    assert!(
        text.contains("vantage_region_jobs_refused_total{region=\"d\"} 3"),
        "{text}"
    );
    assert!(text.contains("vantage_region_jobs_refused_total{region=\"a\"} 0"));
    // Rendering again does not count twice; a region that left loses the series.
    let text = m.render(&fleet, &["d".to_string()]);
    assert!(text.contains("vantage_region_jobs_refused_total{region=\"d\"} 3"));
    assert!(
        !text.contains("vantage_region_jobs_refused_total{region=\"a\"}"),
        "{text}"
    );
}
