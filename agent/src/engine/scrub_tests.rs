//! The engine's last pass over what the target chose outside the checks (`scrub_extra`):
//! stack evidence, the surface's item names and stopped reason, DNS CNAMEs.

use super::*;

#[test]
fn every_string_the_target_chose_outside_the_checks_loses_every_piece_of_a_token() {
    use crate::surface::{ListKind, ListSurface, Surface, SurfaceItem};
    let tok = "Zq7Kp2Lm9Xw4Rt8Vn3Bc6Hj1Yd5Fg0Ss";
    let engine = Engine::new(ProbeOptions {
        credentials: Credentials {
            token: Some(tok.to_string().into()),
            ..Credentials::default()
        },
        ..ProbeOptions::default()
    })
    .unwrap();
    let item = |name: String| SurfaceItem {
        name,
        digest: "0".repeat(16),
    };
    let mut st = State {
        stacks: vec![crate::stack::StackSighting {
            check: CheckId::MethodUnknown,
            stack: crate::stack::Stack::Nginx,
            evidence: format!("server: nginx/{}", &tok[3..14]),
        }],
        surface: Some(Surface {
            era: Era::Modern,
            bounds: crate::surface::ListingBounds::default(),
            lists: vec![ListSurface {
                kind: ListKind::Tools,
                digest: String::new(),
                set_digest: String::new(),
                count: 3,
                pages: 1,
                bytes: 1,
                complete: false,
                stopped: Some(format!("stopped at {}", &tok[20..])),
                items: vec![
                    item(format!("a {}", &tok[1..17])),
                    item(format!("b {}", &tok[16..])),
                    item(format!("add_{}", &tok[..7])),
                ],
                items_truncated: false,
            }],
        }),
        dns: Some(crate::model::DnsObservation {
            cname: vec![format!("{}.example.com", &tok[8..20])],
            ..Default::default()
        }),
        ..State::default()
    };
    engine.scrub_extra(&mut st);
    assert_eq!(st.stacks[0].evidence, "server: nginx/[redacted]");
    let list = &st.surface.as_ref().unwrap().lists[0];
    let names: Vec<&str> = list.items.iter().map(|i| i.name.as_str()).collect();
    // A piece of 7 characters is left alone.
    assert_eq!(
        names,
        [
            "a [redacted]",
            "b [redacted]",
            &format!("add_{}", &tok[..7])
        ]
    );
    assert_eq!(list.stopped.as_deref(), Some("stopped at [redacted]"));
    assert_eq!(st.dns.unwrap().cname, ["[redacted].example.com"]);
}
