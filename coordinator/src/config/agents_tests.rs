//! `[[agents]]` entries sharing one token: refused at load (the same variable, the same file
//! by any spelling of its path) and when the secrets are read (two files, one value), naming
//! both entries and never the token.

use super::tests::load_text;
use super::*;

const TOKEN: &str = "tok-shared-4f1c9a";

/// eu-1 (region eu, `first`), us-1 (region us, `us`) and eu-2 (region us, `second`): token
/// sources as TOML lines.
fn agents(first: &str, us: &str, second: &str) -> String {
    format!(
        "[[agents]]\nname = \"eu-1\"\nregion = \"eu\"\n{first}\n[[agents]]\nname = \"us-1\"\nregion = \"us\"\n{us}\n[[agents]]\nname = \"eu-2\"\nregion = \"us\"\n{second}\n"
    )
}

fn assert_shared(e: &ConfigError, source: &str) {
    assert!(
        matches!(e, ConfigError::SharedToken { index: 2, name, first: 0, first_name, .. }
            if name == "eu-2" && first_name == "eu-1"),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&format!("`eu-2` (agents[2].{source}) has the same token as `eu-1` (agents[0]); each agent needs its own token")),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "the token is never named: {text}");
}

#[test]
fn two_agents_sharing_a_token_are_refused_naming_both_entries() {
    let dir = std::env::temp_dir().join(format!("vantage-cfg-{}-shared", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let (a, b, us) = (
        dir.join("eu.token"),
        dir.join("copy.token"),
        dir.join("us.token"),
    );
    std::fs::write(&a, TOKEN).unwrap();
    std::fs::write(&b, TOKEN).unwrap();
    std::fs::write(&us, "tok-us-other").unwrap();
    let file = |p: &std::path::Path| format!("token_file = \"{}\"", p.display());
    let us = file(&us);
    let env = vec![("VANTAGE_TEST_EU_TOKEN".to_string(), TOKEN.to_string())];

    // The same file, once by another spelling of its path: refused at load (`--check` too).
    let text = agents(&file(&a), &us, &file(&dir.join("sub/../eu.token")));
    assert_shared(
        &load_text("shared-file", &text, env.clone()).unwrap_err(),
        "token_file",
    );
    // The same variable.
    let by_env = "token_env = \"VANTAGE_TEST_EU_TOKEN\"";
    let text = agents(by_env, &us, by_env);
    assert_shared(
        &load_text("shared-env", &text, env.clone()).unwrap_err(),
        "token_env",
    );
    // Two files holding one value load, and are refused when the tokens are read (start and
    // reload both read them through `secrets`); distinct values are accepted.
    let cfg = load_text(
        "shared-value",
        &agents(&file(&a), &us, &file(&b)),
        env.clone(),
    )
    .expect("distinct sources load");
    let e = crate::reload::secrets(&cfg)
        .err()
        .expect("one value in two files is refused");
    assert_shared(&e, "token");
    std::fs::write(&b, "tok-eu-2-own").unwrap();
    let s = crate::reload::secrets(&cfg).expect("distinct tokens are accepted");
    assert_eq!(s.agents.len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A region of dots only (`.`, `..`) is refused in `[[agents]]` and `fleet.local_region`
/// with the rule, naming the key (red team round 11, nit 4).
#[test]
fn a_region_of_dots_only_is_refused_with_the_rule() {
    let agent = "[[agents]]\nname = \"a\"\nregion = \".\"\ntoken_env = \"X\"\n";
    let local = "[fleet]\nlocal_region = \"..\"\n";
    for (name, text, key, label) in [
        ("dots-agent", agent, "agents[0].region", "."),
        ("dots-local", local, "fleet.local_region", ".."),
    ] {
        let e = load_text(name, text, vec![]).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Invalid { key: k, .. } if k == key),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains(&format!("the region label `{label}` is only dots"))
                && text.ends_with(vantage_agent::region::RULE),
            "{text}"
        );
    }
}
