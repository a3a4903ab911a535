//! The cost of the listing stage: a full check, listing included, of a 200-tool server
//! (the fixture with 195 generated tools after its five, 50 a page) against today's check of
//! the same server with the listing off (`ProbeOptions::listing = None`), in the same run on
//! the same machine, one in-process vantage on loopback.
//!
//! The fixture counts the HTTP exchanges of each check (`Fixture::requests`), with the listing
//! and without it.
//!
//! Run: `cargo bench -p vantage-coordinator --bench listing` (prints medians and the ratio,
//! writes `listing.json` for `.ci/bench-tables`; it asserts nothing about time: machines here
//! are shared and noisy).

mod common;

use vantage_agent::surface::ListKind;
use vantage_agent::{Engine, Job, ProbeOptions, Target};
use vantage_fixture::{Fixture, SurfaceConfig};

fn main() {
    let runs = common::env_or("VANTAGE_BENCH_RUNS", 100) as usize;
    let rt = common::runtime();
    rt.block_on(async {
        let surface = SurfaceConfig {
            extra_tools: 195,
            page_size: 50,
        };
        let fixture = Fixture::start_with(&[], surface).await.expect("fixture");
        let job = Job::new(Target::parse(&fixture.url()).expect("url"));
        let with = Engine::new(ProbeOptions::default()).expect("engine");
        let without = Engine::new(ProbeOptions {
            listing: None,
            ..ProbeOptions::default()
        })
        .expect("engine");

        // One check to show what the listing read.
        let report = vantage_coordinator::local::check(&with, &job).await;
        let tools = report.regions[0]
            .surface
            .as_ref()
            .and_then(|s| s.list(ListKind::Tools).cloned())
            .expect("tools listed");
        assert!(tools.complete && tools.count == 200, "{tools:?}");

        for _ in 0..10 {
            let _ = vantage_coordinator::local::check(&with, &job).await;
            let _ = vantage_coordinator::local::check(&without, &job).await;
        }
        // Interleaved, so that the machine's noise falls on both alike.
        let (mut full, mut today) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        let (mut exchanges_full, mut exchanges_today) = (0, 0);
        for _ in 0..runs {
            let (took, exchanges, _) = common::timed_check(&fixture, &with, &job).await;
            full.push(took);
            exchanges_full = exchanges;
            let (took, exchanges, _) = common::timed_check(&fixture, &without, &job).await;
            today.push(took);
            exchanges_today = exchanges;
        }
        let (fm, fp) = common::median_p99_ms(full);
        let (tm, tp) = common::median_p99_ms(today);
        println!(
            "bench listing (a {}-tool server, {} pages of tools, {} bytes of tool definitions, loopback, {runs} runs each)",
            tools.count, tools.pages, tools.bytes
        );
        println!("  full check with listing       median {fm:8.2} ms   p99 {fp:8.2} ms   ({exchanges_full} HTTP exchanges)");
        println!("  today's check (listing off)   median {tm:8.2} ms   p99 {tp:8.2} ms   ({exchanges_today} HTTP exchanges)");
        println!(
            "  ratio (median)                {:8.2}x   (+{:.2} ms for the lists: tools twice, resources, templates, prompts, a bogus cursor, listen)",
            fm / tm,
            fm - tm
        );
        common::write_results(
            "listing",
            &serde_json::json!({
                "runs": runs,
                "tools": tools.count,
                "pages": tools.pages,
                "bytes": tools.bytes,
                "full_median_ms": fm,
                "full_p99_ms": fp,
                "today_median_ms": tm,
                "today_p99_ms": tp,
                "ratio": fm / tm,
                "exchanges_full": exchanges_full,
                "exchanges_today": exchanges_today,
            }),
        );
    });
}
