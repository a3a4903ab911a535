//! A target's words reach a pull-request comment inert: a hostile body's HTML, links, images,
//! code spans, mentions and table pipes are escaped by the Markdown renderer.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vantage_coordinator::exit::Gate;
use vantage_coordinator::render::markdown;

use crate::support::check;

/// Short, so all of it fits in the excerpt the engine keeps of a body.
const BODY: &str = "<img src=x>&amp;[c](//e.x)![p](/p)`c`@oc #1|p**b**~~s~~_i_";

/// Answers every request 200 text/html with [`BODY`].
async fn hostile_target() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = sock.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    BODY.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(BODY.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}/mcp"), task)
}

#[tokio::test]
async fn a_hostile_body_cannot_add_html_links_images_or_mentions_to_markdown() {
    let (url, task) = hostile_target().await;
    let report = check(&url).await;
    task.abort();
    let json = serde_json::to_string(&report).unwrap();
    // The test is not vacuous: the hostile words are in the report.
    assert!(
        json.contains("<img src=x"),
        "the body never reached the report: {json}"
    );
    let md = markdown(&report, &Gate::default());
    for raw in [
        "<img", "[c]", "](//", "![p]", "`c`", "@oc", "oc #1", "|p", "&amp;", "**b**~~s", "_i_",
    ] {
        assert!(!md.contains(raw), "{raw:?} reached the Markdown raw:\n{md}");
    }
    // Escaped, not dropped: the reader still sees what the target sent.
    assert!(
        md.contains("&#60;img src=x&#62;&#38;amp;&#91;c&#93;(//e.x)!&#91;p&#93;(/p)&#96;c&#96;&#64;oc &#35;1&#124;p&#42;&#42;b&#42;&#42;&#126;&#126;s&#126;&#126;&#95;i&#95;"),
        "{md}"
    );
    // The renderer's own structure is intact: the table and the region's details.
    assert!(md.contains("| severity | finding | where | evidence | fix | spec |"));
    assert!(md.contains("<details><summary>local ("), "{md}");
}
