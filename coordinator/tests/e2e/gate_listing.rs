//! A listing nobody read is never evidence, and a baseline does not stand in for it (fresh
//! user round 8, item 10): a server whose `server/discover` declares no capabilities is
//! blocked on `discover.shape`; a baseline that accepts `discover.shape` leaves the gate
//! `unknown` (exit 4), naming the listing checks that were not observed, never `passed`
//! (exit 0) on a tool surface nothing read. The lists a dual-era server's `initialize`
//! advertised are read in its 2025-11-25 session; the 2026-07-28 ones stay unobserved.

use serde_json::Value;
use vantage_fixture::{Fault, Fixture};

use crate::evidence_support::{check_of, finding, finding_ids};
use crate::support::{vantage_env, Scratch};

/// The value of `name="…"` on JUnit's root element.
fn root_count(xml: &str, name: &str) -> usize {
    let root = xml.split("<testsuites ").nth(1).unwrap_or_default();
    let root = root.split('>').next().unwrap_or_default();
    root.split(&format!(" {name}=\""))
        .nth(1)
        .and_then(|v| v.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} on <testsuites>: {xml}"))
}

#[tokio::test]
async fn accepting_discover_shape_never_passes_a_listing_nobody_read() {
    for (faults, era, name) in [
        (vec![Fault::DiscoverNoCapabilities], "dual", "nocaps-dual"),
        (
            vec![Fault::DiscoverNoCapabilities, Fault::ModernOnly],
            "modern",
            "nocaps-modern",
        ),
    ] {
        let fixture = Fixture::start(&faults).await.unwrap();
        let url = fixture.url();
        let dir = Scratch::new(name);
        let (report, base, xml) = (
            dir.join("report.json"),
            dir.join("baseline.toml"),
            dir.join("junit.xml"),
        );
        let (report_s, base_s, xml_s) = (
            report.to_str().unwrap(),
            base.to_str().unwrap(),
            xml.to_str().unwrap(),
        );

        // Without a baseline: blocked on discover.shape; the unread listing is named.
        let out = vantage_env(&["check", &url, "-f", "json", "-o", report_s], &[]).await;
        assert_eq!(out.status.code(), Some(2), "{name}");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(doc["decision"], "blocked", "{name}");
        assert_eq!(doc["era"], era, "{name}");
        assert_eq!(
            finding(&doc, "discover.shape")["severity"],
            "high",
            "{name}"
        );
        let incomplete = finding(&doc, "probe.incomplete");
        let evidence = incomplete["evidence"].to_string();
        for needle in [
            "caps.discover-matches-handlers",
            "cache.hints",
            "listen.sse",
            "server/discover declared no capabilities",
        ] {
            assert!(evidence.contains(needle), "{name}: {needle}: {evidence}");
        }
        let tools = check_of(&doc, "local", "tools.list-shape");
        if era == "dual" {
            // Read in the 2025-11-25 session initialize opened: evidence, a pass.
            assert_eq!(tools["outcome"], "pass", "{name}: {tools}");
            assert_eq!(doc["regions"][0]["surface"]["era"], "legacy", "{name}");
        } else {
            assert_eq!(tools["outcome"], "unknown", "{name}: {tools}");
            assert!(evidence.contains("tools.list-shape"), "{name}: {evidence}");
        }

        // The baseline accepts discover.shape (probe.incomplete cannot be accepted).
        let out = vantage_env(
            &[
                "baseline", "--from", report_s, "-o", base_s, "--reason", "t", "--days", "5",
            ],
            &[],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        let written = std::fs::read_to_string(&base).unwrap();
        assert!(
            written.contains("finding = \"discover.shape\""),
            "{written}"
        );
        assert!(
            !written.contains("finding = \"probe.incomplete\""),
            "{written}"
        );

        // With it: unknown, exit 4, naming what was not observed; never passed.
        let out = vantage_env(&["check", &url, "--baseline", base_s, "-f", "json"], &[]).await;
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(4), "{name}: {}", doc["gate"]);
        assert_eq!(
            finding(&doc, "discover.shape")["accepted"]["status"],
            "accepted",
            "{name}"
        );
        assert!(finding_ids(&doc).contains(&"probe.incomplete".to_string()));
        assert_eq!(doc["gate"]["result"], "unknown", "{name}");
        let line = doc["gate"]["line"].as_str().unwrap();
        assert!(
            line.starts_with(
                "gate: unknown (exit 4: with discover.shape accepted by the baseline, what is left was not observed: local: "
            ),
            "{name}: {line}"
        );
        for needle in [
            "caps.discover-matches-handlers",
            "server/discover declared no capabilities",
        ] {
            assert!(line.contains(needle), "{name}: {needle}: {line}");
        }

        // JUnit agrees: no failure (discover.shape is accepted), an error (not observed).
        let out = vantage_env(
            &[
                "check",
                &url,
                "--baseline",
                base_s,
                "-f",
                "junit",
                "-o",
                xml_s,
            ],
            &[],
        )
        .await;
        assert_eq!(out.status.code(), Some(4), "{name}");
        let xml = std::fs::read_to_string(&xml).unwrap();
        assert_eq!(root_count(&xml, "failures"), 0, "{name}: {xml}");
        assert!(root_count(&xml, "errors") > 0, "{name}: {xml}");
    }
}
