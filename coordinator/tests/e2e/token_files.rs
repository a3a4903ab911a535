//! Two `vantage serve` without `server.api_tokens` on one machine: each writes its generated
//! token to a file of its own API port, `vantage check --coordinator URL` finds the one of
//! the URL's port, one exiting never removes the other's, a second one on a taken port
//! changes nothing, and a refused token (401) names where it came from.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use vantage_fixture::Fixture;

use crate::procs::{bin, serve_api, Proc};
use crate::support::Scratch;

/// An `XDG_RUNTIME_DIR` inside `dir`, where a local `vantage serve` writes the API token it
/// generates.
pub(crate) fn runtime_dir(dir: &Path) -> String {
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    runtime.display().to_string()
}

/// The token file of the local `vantage serve` whose API is `api`, under `xdg`.
pub(crate) fn token_file(xdg: &str, api: &str) -> PathBuf {
    let port = api.trim_end_matches('/').rsplit(':').next().unwrap();
    Path::new(xdg)
        .join("vantage")
        .join(format!("api-token-{port}"))
}

/// `vantage serve` with its runtime directory `xdg`, its API on `api`, no API token given.
pub(crate) fn serve(xdg: &str, api: &str) -> Proc {
    let mut cmd = Command::new(bin("vantage"));
    cmd.arg("serve")
        .env("XDG_RUNTIME_DIR", xdg)
        .env("VANTAGE_SERVER__API_LISTEN", api)
        .env("VANTAGE_SERVER__GRPC_LISTEN", "127.0.0.1:0")
        .env("VANTAGE_PROBE__ALLOW_NON_GLOBAL", "127.0.0.0/8")
        .env_remove("VANTAGE_API_TOKEN");
    Proc::spawn(cmd)
}

/// The API URL a `vantage serve` printed.
fn api_of(p: &Proc) -> String {
    serve_api(p).trim_end_matches('/').to_string()
}

async fn check(args: Vec<String>, env: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(bin("vantage"));
        cmd.arg("check")
            .args(args)
            .stdin(Stdio::null())
            .env_remove("VANTAGE_API_TOKEN");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    })
    .await
    .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// [`check`], which must refuse (exit 1): its stderr.
async fn refused(args: Vec<String>, env: Vec<(String, String)>) -> String {
    let o = check(args, env).await;
    let e = err(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_local_coordinators_keep_their_own_generated_tokens() {
    let dir = Scratch::new("tokfiles");
    let xdg = runtime_dir(&dir);
    let fixture = Fixture::start(&[]).await.unwrap();
    let mut a = serve(&xdg, "127.0.0.1:0");
    let mut b = serve(&xdg, "127.0.0.1:0");
    let (api_a, api_b) = (api_of(&a), api_of(&b));
    let file = |api: &str| token_file(&xdg, api);
    a.wait_for("API token written to", Duration::from_secs(5));
    b.wait_for("API token written to", Duration::from_secs(5));
    let (tok_a, tok_b) = (
        std::fs::read_to_string(file(&api_a)).unwrap(),
        std::fs::read_to_string(file(&api_b)).unwrap(),
    );
    assert_ne!(tok_a, tok_b, "two files, two tokens");
    let env = vec![("XDG_RUNTIME_DIR".to_string(), xdg.clone())];
    let run = |api: String| {
        check(
            vec![fixture.url(), "--coordinator".into(), api, "-q".into()],
            env.clone(),
        )
    };
    // Each check finds the token of its URL's port.
    for api in [&api_a, &api_b] {
        let o = run(api.clone()).await;
        assert_eq!(o.status.code(), Some(0), "{api}: {}", err(&o));
    }

    // A third one on a's port cannot bind: it fails and leaves a's token as it was.
    let taken = api_a.trim_start_matches("http://").to_string();
    let mut c = serve(&xdg, &taken);
    let status = c.wait_exit(Duration::from_secs(20));
    assert!(status.is_some_and(|s| !s.success()), "{}", c.output());
    assert!(c.output().contains("server.api_listen"), "{}", c.output());
    assert_eq!(std::fs::read_to_string(file(&api_a)).unwrap(), tok_a);

    // b exits: its file goes, a's stays and still works.
    b.signal("TERM");
    assert!(b
        .wait_exit(Duration::from_secs(30))
        .is_some_and(|s| s.success()));
    assert!(!file(&api_b).exists(), "b removed its own file");
    assert_eq!(std::fs::read_to_string(file(&api_a)).unwrap(), tok_a);
    let o = run(api_a.clone()).await;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));

    // A wrong token: the 401 says where it came from.
    let wrong = dir.join("wrong.token");
    std::fs::write(&wrong, "not-the-token\n").unwrap();
    let e = refused(
        vec![
            fixture.url(),
            "--coordinator".into(),
            api_a.clone(),
            "--api-token-file".into(),
            wrong.display().to_string(),
        ],
        env.clone(),
    )
    .await;
    assert!(
        e.contains(&format!(
            "the coordinator refused the API token from --api-token-file {}: 401",
            wrong.display()
        )),
        "{e}"
    );
    let e = refused(
        vec![fixture.url(), "--coordinator".into(), api_a.clone()],
        vec![
            ("XDG_RUNTIME_DIR".into(), xdg.clone()),
            ("VANTAGE_API_TOKEN".into(), "not-the-token".into()),
        ],
    )
    .await;
    assert!(
        e.contains("the coordinator refused the API token from $VANTAGE_API_TOKEN: 401"),
        "{e}"
    );
    // --api-token-env naming an unset variable is refused, not a silent fallback.
    let e = refused(
        vec![
            fixture.url(),
            "--coordinator".into(),
            api_a.clone(),
            "--api-token-env".into(),
            "VANTAGE_TEST_UNSET_TOKEN_VAR".into(),
        ],
        env.clone(),
    )
    .await;
    assert!(
        e.contains("--api-token-env VANTAGE_TEST_UNSET_TOKEN_VAR:"),
        "{e}"
    );
    a.signal("TERM");
    assert!(a
        .wait_exit(Duration::from_secs(30))
        .is_some_and(|s| s.success()));
    assert!(!file(&api_a).exists());
}
