//! The Markdown summary of several endpoints keeps one row per endpoint, whatever the
//! target's URL holds (issue 15 review, item 5): a `|` in a path used to split the row.

use vantage_coordinator::exit::Gate;
use vantage_coordinator::render::{render_many, Format, RenderOptions};
use vantage_fixture::Fixture;

use crate::support::check;

#[tokio::test]
async fn a_pipe_in_a_target_stays_inside_its_summary_cell() {
    let fixture = Fixture::start(&[]).await.unwrap();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let odd = format!("http://127.0.0.1:{closed}/a|b");
    let reports = vec![check(&fixture.url()).await, check(&odd).await];
    assert!(reports[1].target.contains("a|b"), "{}", reports[1].target);
    let md = render_many(
        &reports,
        &RenderOptions {
            format: Format::Markdown,
            gate: Gate::default(),
            ..RenderOptions::default()
        },
        &[],
    );
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("| endpoint |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    for row in &rows {
        // Three cells: four unescaped pipes, and no code span left open.
        assert_eq!(row.matches('|').count(), 4, "{row}");
        assert_eq!(row.matches('`').count() % 2, 0, "{row}");
    }
    assert!(rows[1].contains("a&#124;b"), "{}", rows[1]);
}
