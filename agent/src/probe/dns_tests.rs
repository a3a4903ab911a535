//! DNS classification (issue 12, reproductions 2 and 5): the zone's answers are evidence,
//! the resolver's failures are not; and one lookup is bounded as a whole.

use super::*;
use crate::model::Outcome;

fn answer(rcode: &str, failed: bool) -> Answer {
    Answer {
        rcode: rcode.into(),
        failure: failed.then(|| format!("{rcode} from the resolver")),
        ..Default::default()
    }
}

#[test]
fn only_the_zones_answers_fail_dns_resolve() {
    let v = no_address(
        "mcp.lab.test",
        &answer("NXDOMAIN", false),
        &answer("TIMEOUT", true),
    );
    assert_eq!((v.outcome, v.cause), (Outcome::Fail, Some(Cause::Nxdomain)));
    let v = no_address(
        "mcp.lab.test",
        &answer("NOERROR", false),
        &answer("NOERROR", false),
    );
    assert_eq!((v.outcome, v.cause), (Outcome::Fail, Some(Cause::NoAnswer)));
    for (a, aaaa) in [
        (answer("TIMEOUT", true), answer("TIMEOUT", true)),
        (answer("SERVFAIL", true), answer("NOERROR", false)),
        (answer("NOERROR", false), answer("REFUSED", true)),
        (answer("ERROR", true), answer("ERROR", true)),
    ] {
        let v = no_address("mcp.lab.test", &a, &aaaa);
        assert_eq!(
            (v.outcome, v.severity, v.cause),
            (Outcome::Unknown, None, Some(Cause::ResolverError)),
            "{} / {}",
            a.rcode,
            aaaa.rcode
        );
        assert!(v.observed.contains("resolver failed"), "{}", v.observed);
    }
}

/// A name server that never answers, on UDP and TCP: one lookup takes at most the timeout
/// (it used to try UDP, then TCP, each for the whole timeout). The clock is tokio's paused
/// clock, so the measure is exact and the test never waits.
#[tokio::test(start_paused = true)]
async fn one_lookup_is_bounded_by_the_timeout_as_a_whole() {
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = udp.local_addr().unwrap();
    let tcp = match tokio::net::TcpListener::bind(addr).await {
        Ok(t) => t,
        Err(_) => return, // the port is taken for TCP by someone else: nothing to measure
    };
    let choice = ResolverChoice {
        nameservers: vec![addr],
    };
    let timeout = Duration::from_secs(3);
    let mut rec = Recorder::default();
    let started = tokio::time::Instant::now();
    let (obs, addrs) = resolve("mcp.lab.test", &choice, &[], timeout, &mut rec).await;
    let took = started.elapsed();
    drop((udp, tcp));
    assert!(addrs.is_empty());
    assert_eq!(obs.rcode, "TIMEOUT");
    assert!(
        took <= timeout,
        "one lookup took {took:?}, more than {timeout:?}"
    );
    let c = rec.get(CheckId::DnsResolve).unwrap();
    assert_eq!(
        (c.outcome, c.cause),
        (Outcome::Unknown, Some(Cause::ResolverError))
    );
}
