//! A server whose tools list varies by connection (or whose order varies by request), checked
//! by a fleet of three agents on loopback (red team round 12, item 7). Every region reads
//! another list, or the same list in another order, because of the connection it drew: the
//! variance finding says so, and the cross-region comparison makes no regional finding of it
//! (it was `edge.divergent` medium regional naming every region, "read it 3 ways", and
//! `surface.order-differs` naming whichever region drew another order).

use std::time::Duration;

use serde_json::{json, Value};
use vantage_fixture::{Fault, Fixture};

use crate::evidence_support::{check_of, finding_ids, row, shape};
use crate::fleet::{check, wait_agents};
use crate::procs::{agent_per_region, coordinator};
use crate::support::tmpdir;

const REGIONS: [&str; 3] = ["ap", "eu", "us"];

/// The tools list as `region` read it: its digest and its names.
fn tools_read(report: &Value, region: &str) -> (String, Vec<String>) {
    let r = report["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["region"] == region)
        .unwrap_or_else(|| panic!("{region} missing: {report}"));
    let l = r["surface"]["lists"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "tools")
        .unwrap_or_else(|| panic!("{region} read no tools list: {r}"));
    let names = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    (l["digest"].as_str().unwrap().to_string(), names)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_that_varies_by_connection_is_no_regional_difference() {
    let dir = tmpdir("surface-variance");
    let c = coordinator(&dir, &REGIONS, "127.0.0.1:0", "127.0.0.1:0", "");
    let _agents = agent_per_region(&c.grpc, &REGIONS);
    wait_agents(&c, 3, Duration::from_secs(15)).await;

    // A tool named for the connection: every region reads another list, and sees its own
    // two connections differ.
    let fixture = Fixture::start(&[Fault::PerConnectionVariance])
        .await
        .unwrap();
    let report = check(&c, json!({"target": fixture.url()})).await;
    let digests: std::collections::BTreeSet<String> =
        REGIONS.iter().map(|r| tools_read(&report, r).0).collect();
    assert_eq!(digests.len(), 3, "the regions read 3 lists: {report}");
    for r in REGIONS {
        assert!(
            tools_read(&report, r).1[0].starts_with("session_"),
            "{r}: {report}"
        );
        assert_eq!(
            check_of(&report, r, "tools.no-per-connection-variance")["outcome"],
            "fail",
            "{r}"
        );
    }
    assert_eq!(
        shape(&report),
        vec![row(
            "tools.no-per-connection-variance",
            "medium",
            "global",
            &REGIONS
        )]
    );
    let ids = finding_ids(&report);
    assert!(!ids.iter().any(|i| i == "edge.divergent"), "{ids:?}");
    assert_eq!(report["decision"], "review");

    // The same tools in another order on every list request: the regions' orders differ
    // by the draw, which is tools.deterministic-order (low), never surface.order-differs.
    let fixture = Fixture::start(&[Fault::UnstableOrder]).await.unwrap();
    let report = check(&c, json!({"target": fixture.url()})).await;
    let mut names: Vec<Vec<String>> = REGIONS.iter().map(|r| tools_read(&report, r).1).collect();
    for n in &mut names {
        n.sort();
    }
    assert!(names.windows(2).all(|w| w[0] == w[1]), "{names:?}");
    let rows = shape(&report);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (id, severity, _, warned) = &rows[0];
    assert_eq!(
        (id.as_str(), severity.as_str()),
        ("tools.deterministic-order", "low")
    );
    for r in warned {
        assert_eq!(
            check_of(&report, r, "tools.deterministic-order")["outcome"],
            "warn",
            "{r}"
        );
    }
    let ids = finding_ids(&report);
    assert!(
        !ids.iter()
            .any(|i| i == "surface.order-differs" || i == "edge.divergent"),
        "{ids:?}"
    );
    assert_eq!(report["decision"], "pass");
}
