use super::*;

#[test]
fn ids_are_unique_dotted_and_parse_back() {
    let mut seen = std::collections::BTreeSet::new();
    for c in CheckId::ALL {
        assert!(seen.insert(c.as_str()), "duplicate {c}");
        assert!(c.as_str().contains('.'), "{c}");
        assert_eq!(c.as_str().parse::<CheckId>(), Ok(*c));
    }
    let mut seen = std::collections::BTreeSet::new();
    for f in FindingId::ALL {
        assert!(seen.insert(f.as_str()), "duplicate {f}");
        assert_eq!(f.as_str().parse::<FindingId>(), Ok(*f));
    }
    assert_eq!(
        "transport.gett".parse::<CheckId>(),
        Err(UnknownId {
            what: "check id",
            id: "transport.gett".into()
        })
    );
    assert!("dns.a-record".parse::<FindingId>().is_err());
    // A finding named after its check carries the check's string.
    assert_eq!(
        FindingId::TransportGet.as_str(),
        CheckId::TransportGet.as_str()
    );
}

#[test]
fn ids_travel_as_their_strings() {
    let json = serde_json::to_string(&[CheckId::HeadersMissingMethod]).unwrap();
    assert_eq!(json, r#"["headers.missing-method"]"#);
    let back: Vec<CheckId> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, vec![CheckId::HeadersMissingMethod]);
    let err = serde_json::from_str::<FindingId>(r#""egress.blockd""#).unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown finding id `egress.blockd`"),
        "{err}"
    );
}

#[test]
fn the_declared_order_is_the_client_order() {
    let mut sorted = CheckId::ALL.to_vec();
    sorted.sort();
    assert_eq!(sorted, CheckId::ALL);
    // Stages run in this order, except the authorization boundary, which runs between the
    // redirect check and era detection.
    let stages: Vec<Stage> = CheckId::ALL.iter().map(|c| c.stage()).collect();
    let first = |s: Stage| stages.iter().position(|x| *x == s).unwrap();
    assert!(first(Stage::Dns) < first(Stage::Net));
    assert!(first(Stage::Net) < first(Stage::Tls));
    assert!(first(Stage::Tls) < first(Stage::Shape));
    assert!(first(Stage::Shape) < first(Stage::Auth));
    assert!(first(Stage::Auth) < first(Stage::Era));
    assert!(first(Stage::Era) < first(Stage::Transport));
    assert!(first(Stage::Transport) < first(Stage::Listing));
}

#[test]
fn each_condition_of_observation_has_exactly_one_check() {
    for ev in [
        Evidence::Resolved,
        Evidence::Connected,
        Evidence::Handshake,
        Evidence::Answered,
    ] {
        let proving: Vec<CheckId> = CheckId::ALL
            .iter()
            .copied()
            .filter(|c| c.spec().evidence == Some(ev))
            .collect();
        assert_eq!(proving.len(), 1, "{ev:?}: {proving:?}");
    }
}

/// The source file named for a check exists and speaks of it, by its variant or its id.
#[test]
fn every_check_names_the_file_that_observes_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for c in CheckId::ALL {
        let path = root.join(c.spec().source);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{c}: {}: {e}", path.display()));
        let variant = format!("CheckId::{c:?}");
        let quoted = format!("`{c}`");
        assert!(
            text.contains(&variant) || text.contains(&quoted),
            "{c}: {} mentions neither {variant} nor {quoted}",
            path.display()
        );
    }
}

#[test]
fn raising_lists_default_and_conditional_mappings() {
    assert_eq!(
        raising(FindingId::AuthInvalidTokenAccepted)
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>(),
        vec![CheckId::AuthGarbageToken, CheckId::AuthWrongAudience]
    );
    assert_eq!(
        raising(FindingId::DnsNoARecord),
        vec![(CheckId::DnsARecord, None)]
    );
    assert!(raising(FindingId::FleetRegionMissing).is_empty());
    assert_eq!(
        in_stage(Stage::Auth).count(),
        7,
        "the seven authorization checks of checks.md 2.5"
    );
}
