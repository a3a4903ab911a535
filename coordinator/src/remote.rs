//! `vantage check --coordinator URL`: submit the check to a fleet, follow its regions as they
//! report, and render the merged report exactly as the local mode does.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use secrecy::ExposeSecret;
use vantage_agent::{credentials, Target};
use vantage_coordinator::api::types::{Accepted, ErrorBody, NewCheck};
use vantage_coordinator::report::Report;

use crate::args::{CheckArgs, Fleet};
use crate::output::live;
use vantage_coordinator::render::Undecided;

/// The API's base URL, refused with the fix when it lacks its scheme (`127.0.0.1:8080`).
fn coordinator_url(given: &str) -> anyhow::Result<String> {
    let shown = vantage_agent::target::redacted(given);
    let fix = || {
        format!(
            "--coordinator {shown}: give the API's URL with its scheme, e.g. http://{}",
            shown.trim_start_matches("//")
        )
    };
    let url = url::Url::parse(given).map_err(|_| anyhow::anyhow!(fix()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        bail!(fix());
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!("--coordinator {shown}: the URL carries user information (user:password@), which is never sent; the API takes its token from --api-token-env or --api-token-file");
    }
    Ok(given.trim_end_matches('/').to_string())
}

/// The API token and where it came from (for a 401's message): --api-token-file, else the
/// variable --api-token-env names (`VANTAGE_API_TOKEN` by default), else the token a `vantage
/// serve` on this machine generated for the API's port (it prints the path).
/// `Ok(None)` when none was given and none was generated: the caller says so, once it
/// knows `base` is the API at all.
fn api_token(fleet: &Fleet, base: &str) -> anyhow::Result<Option<(secrecy::SecretString, String)>> {
    if let Some(path) = &fleet.api_token_file {
        let token = credentials::from_file(path).with_context(|| "--api-token-file".to_string())?;
        return Ok(Some((
            token,
            format!("--api-token-file {}", path.display()),
        )));
    }
    let env = fleet.api_token_env.as_deref().unwrap_or(DEFAULT_TOKEN_ENV);
    match credentials::from_env(env) {
        Ok(token) => return Ok(Some((token, format!("${env}")))),
        // Named on purpose: never fall back to another token behind the caller's back.
        Err(e) if fleet.api_token_env.is_some() => {
            bail!("--api-token-env {env}: {e}; export {env} with the coordinator's API token, or drop the flag to use {DEFAULT_TOKEN_ENV} or the token a local `vantage serve` generated")
        }
        Err(_) => {}
    }
    let port = url::Url::parse(base)
        .ok()
        .and_then(|u| u.port_or_known_default())
        .unwrap_or(8080);
    let generated = vantage_coordinator::token_file::default_path(port);
    if generated.is_file() {
        tracing::info!(path = %generated.display(), "{DEFAULT_TOKEN_ENV} is not set: using the API token a local `vantage serve` generated for port {port}");
        let token = credentials::from_file(&generated)
            .with_context(|| "the generated API token".to_string())?;
        return Ok(Some((
            token,
            format!(
                "the token a local `vantage serve` generated for port {port} ({})",
                generated.display()
            ),
        )));
    }
    Ok(None)
}

/// What to say when no token was given: where one would come from.
fn no_token(fleet: &Fleet, base: &str) -> String {
    let env = fleet.api_token_env.as_deref().unwrap_or(DEFAULT_TOKEN_ENV);
    let port = url::Url::parse(base)
        .ok()
        .and_then(|u| u.port_or_known_default())
        .unwrap_or(8080);
    format!(
        "the coordinator's API needs a token: export {env} with it, or give --api-token-file PATH (a `vantage serve` without server.api_tokens prints where it wrote one; for port {port} on this machine that would be {}, and no `vantage serve` here has written it)",
        vantage_coordinator::token_file::default_path(port).display()
    )
}

/// Whether `base` answers as the coordinator's API: `GET /v1/agents` without a token is a
/// 401 with the API's JSON error there, and nowhere else (the metrics port and an agent's
/// health port answer `/healthz` too). The likely mistake behind a missing token is another
/// port, and that is what to say first.
async fn not_the_api(client: &reqwest::Client, base: &str, timeout: Duration) -> Option<String> {
    match client.get(format!("{base}/v1/agents")).send().await {
        Err(e) => Some(unreachable(base, &e, timeout)),
        Ok(resp) => {
            let status = resp.status();
            let body = resp.text().await.unwrap_or_default();
            let the_api = status == reqwest::StatusCode::UNAUTHORIZED
                && serde_json::from_str::<ErrorBody>(&body).is_ok();
            (!the_api).then(|| format!("--coordinator {base}: {}", api_error(status, &body)))
        }
    }
}

/// The variable `--api-token-env` names unless given.
const DEFAULT_TOKEN_ENV: &str = "VANTAGE_API_TOKEN";

/// How long past `--timeout` the client waits for the coordinator to report: the fleet ends
/// the check at the deadline it was sent, then merges and answers.
const API_MARGIN: Duration = Duration::from_secs(10);

/// The API client's whole wait (`--timeout` plus [`API_MARGIN`]), in words for a message.
fn api_wait(timeout: Duration) -> String {
    format!(
        "--timeout {} plus {} for the coordinator to report",
        humantime::format_duration(timeout),
        humantime::format_duration(API_MARGIN)
    )
}

/// Why the API did not answer, with the likely mistake.
fn unreachable(base: &str, e: &reqwest::Error, timeout: Duration) -> String {
    let chain = cause(e);
    let plain_answer = chain.contains("corrupt message") || chain.contains("InvalidContentType");
    let hint = if base.starts_with("https://") && plain_answer {
        "it answered in plain HTTP, not TLS: write --coordinator http://… (the API serves TLS only with [server.tls])"
    } else if e.is_connect() {
        "is the coordinator running? Its API listens on server.api_listen (default 127.0.0.1:8080)"
    } else if e.is_timeout() {
        return format!(
            "--coordinator {base}: the API did not answer in time (within {}): is it overloaded, or another service that accepts and never answers? A longer --timeout waits longer",
            api_wait(timeout)
        );
    } else {
        "this does not answer like the coordinator's HTTP API: is it the agents' gRPC port (server.grpc_listen, default 50051)? The API is on server.api_listen (default 8080)"
    };
    format!("--coordinator {base}: the API did not answer ({chain}); {hint}")
}

fn api_error(status: reqwest::StatusCode, body: &str) -> String {
    if let Ok(e) = serde_json::from_str::<ErrorBody>(body) {
        return format!(
            "{} ({}): {}",
            status.as_u16(),
            e.error.code,
            e.error.message
        );
    }
    match serde_json::from_str::<serde_json::Value>(body) {
        // JSON, but not the API's error shape: shown as it came.
        Ok(_) => format!("{} (error): {body}", status.as_u16()),
        // Not JSON: whatever answered is not the coordinator's HTTP API.
        Err(_) => {
            let body = body.trim();
            let seen = if body.is_empty() {
                "an empty body".to_string()
            } else {
                format!("`{}`", body.chars().take(200).collect::<String>())
            };
            format!(
                "{} with {seen}, which is not the coordinator's API (its errors are JSON): is --coordinator an agent's health port (--listen, default 9101) or another service? The API listens on server.api_listen (default 127.0.0.1:8080)",
                status.as_u16()
            )
        }
    }
}

/// Flags that shape this machine's vantage mean nothing to a fleet: refused with the place
/// that does it there, before anything is sent (never accepted and silently unused).
fn refuse_local_flags(args: &CheckArgs) -> anyhow::Result<()> {
    if args.probe.check_timeout.is_some() {
        bail!("--check-timeout is not sent to a fleet: each agent times one exchange with its own --check-timeout (vantage-agent), and the coordinator's in-process vantage with probe.check_timeout in its configuration; --timeout sets this check's overall deadline. Drop the flag");
    }
    if args.probe.listen_window.is_some() {
        bail!("--listen-window is not sent to a fleet: each agent watches a subscriptions/listen stream for its own --listen-window (vantage-agent; 250ms by default, as the coordinator's in-process vantage). Drop the flag");
    }
    if args.probe.no_ipv6 {
        bail!("--no-ipv6 is not sent to a fleet: whether a vantage has IPv6 is its own network's fact (vantage-agent --no-ipv6, the chart's agent.ipv6: false, probe.ipv6 = false for the coordinator's in-process vantage). Drop the flag");
    }
    if !args.probe.nameserver.is_empty() {
        bail!("--nameserver is not sent to a fleet: each agent asks its region's resolver, or the one its own --nameserver names (vantage-agent); the coordinator's in-process vantage uses the system resolver. Drop the flag");
    }
    if let Some(region) = &args.region {
        bail!("--region names this machine's vantage, and with --coordinator none runs here: choose the fleet's regions with --regions (e.g. --regions {region}) and drop --region");
    }
    if args.probe.ca_file.is_some() {
        let plain = args
            .fleet
            .coordinator
            .as_deref()
            .is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("http://"));
        if plain {
            bail!("--ca-file trusts a CA for an https:// coordinator's API, and this coordinator is plain http://, so it would do nothing; the agents trust a lab CA for targets with vantage-agent --target-ca-file (the in-process vantage with probe.ca_file in the coordinator's configuration). Drop the flag");
        }
    }
    Ok(())
}

/// What the fleet returned for the endpoints: their reports in order, the endpoints that have
/// none (`undecided`, after the reports: the coordinator went away before they were decided),
/// and whether the coordinator went away.
pub struct FleetRun {
    pub reports: Vec<Report>,
    pub undecided: Vec<Undecided>,
    pub gone: bool,
}

/// Check each target through the fleet, one API check each (the API takes one target per
/// check), and return the merged reports in order.
pub async fn check(args: &CheckArgs, targets: &[Target]) -> anyhow::Result<FleetRun> {
    if args.probe.auth.names_a_token() {
        bail!("with --coordinator, tokens live on the coordinator: name a configured credential with --credential NAME");
    }
    // The fleet's egress policy is the coordinator's to set: a caller of the API must not be
    // able to widen where the agents connect. Refused here, never silently ignored.
    if !args.probe.assume_global.is_empty() {
        bail!("--assume-global is not sent to a fleet: every agent takes probe.assume_global from the coordinator's configuration; set it there (or VANTAGE_PROBE__ASSUME_GLOBAL) and drop the flag");
    }
    if !args.probe.allow_non_global.is_empty() {
        bail!("--allow-non-global is not sent to a fleet: every agent takes probe.allow_non_global from the coordinator's configuration; set it there (or VANTAGE_PROBE__ALLOW_NON_GLOBAL) and drop the flag");
    }
    refuse_local_flags(args)?;
    let base = coordinator_url(args.fleet.coordinator.as_deref().unwrap_or_default())?;
    let base = base.as_str();
    let token = api_token(&args.fleet, base)?;
    let ca = vantage_agent::pem::read_certificates_opt("--ca-file", args.probe.ca_file.as_deref())?;
    let tls = vantage_agent::probe::tls::client_config(ca.as_deref())?;
    let client = reqwest::Client::builder()
        .use_preconfigured_tls((*tls).clone())
        // The overall deadline bounds every wait on the API (a request's own wait below).
        .timeout(args.probe.deadline() + API_MARGIN)
        .build()
        .context("building the HTTP client")?;
    let Some((token, token_source)) = token else {
        if let Some(why) = not_the_api(&client, base, args.probe.deadline()).await {
            bail!(why);
        }
        bail!(no_token(&args.fleet, base));
    };
    let mut reports = Vec::with_capacity(targets.len());
    for (i, target) in targets.iter().enumerate() {
        match one(args, &client, base, (&token, &token_source), target).await? {
            Followed::Done(report) => reports.push(*report),
            Followed::Gone { id, why, partial } => {
                let gone = format!(
                    "the coordinator at {base} went away while check {id} was running ({why})"
                );
                let formed = crate::gone::gone_report(target, &args.fleet.regions, partial, &gone);
                let at = vantage_coordinator::clock::now_rfc3339();
                // Without --regions no report can be formed: the endpoint is still in the
                // document, unknown (exit 4) with why, never left out. So is every endpoint
                // after it, which was never submitted.
                let mut undecided = Vec::new();
                if formed.is_none() {
                    undecided.push(Undecided {
                        target: target.to_string(),
                        why: format!("{gone}; the check named no --regions, so which regions it would have covered is not known here and nothing was decided"),
                        at: at.clone(),
                    });
                }
                let rest = &targets[i + 1..];
                undecided.extend(rest.iter().map(|t| Undecided {
                    target: t.to_string(),
                    why: format!("not checked: {gone}, while checking {target}"),
                    at: at.clone(),
                }));
                let file = args.output.file().map(|p| p.display().to_string());
                let written = match &file {
                    Some(file) => format!("is written to {file}"),
                    None => "follows".into(),
                };
                let what = match &formed {
                    Some(_) => format!(
                        "; its report (decision unknown, fleet.region-missing for the regions that did not report) {written}"
                    ),
                    None => format!(
                        "; it {written} as unknown without a report (exit 4): the check named no --regions, so which regions it would have covered is not known here"
                    ),
                };
                let after = match rest.len() {
                    0 => String::new(),
                    n => format!(
                        "; {n} endpoint(s) after it were not checked, each unknown (exit 4) in the summary"
                    ),
                };
                eprintln!(
                    "unknown for {target}: {gone}; the check's regions did not report, so nothing was decided{what}{after}. Run the check again once the coordinator is back"
                );
                reports.extend(formed);
                return Ok(FleetRun {
                    reports,
                    undecided,
                    gone: true,
                });
            }
        }
    }
    Ok(FleetRun {
        reports,
        undecided: Vec::new(),
        gone: false,
    })
}

async fn one(
    args: &CheckArgs,
    client: &reqwest::Client,
    base: &str,
    (token, token_source): (&secrecy::SecretString, &str),
    target: &Target,
) -> anyhow::Result<Followed> {
    let body = NewCheck {
        target: target.as_str().to_string(),
        regions: (!args.fleet.regions.is_empty()).then(|| args.fleet.regions.clone()),
        credential: args.fleet.credential.clone(),
        expect_auth: args.probe.auth.expect_auth,
        deadline: Some(humantime::format_duration(args.probe.deadline()).to_string()),
    };
    let give_up = Instant::now() + args.probe.deadline() + API_MARGIN;
    let resp = client
        .post(format!("{base}/v1/checks"))
        .bearer_auth(token.expose_secret())
        .json(&body)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!(unreachable(base, &e, args.probe.deadline())))?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        bail!(
            "the coordinator refused the API token from {token_source}: {}; give the token of this coordinator's server.api_tokens (--api-token-file PATH or --api-token-env NAME)",
            api_error(status, &text)
        );
    }
    if !status.is_success() {
        bail!(
            "the coordinator refused the check: {}",
            api_error(status, &text)
        );
    }
    let id = serde_json::from_str::<Accepted>(&text)
        .map(|a| a.id)
        .ok()
        .context("the coordinator's answer has no check id")?;

    let progress = live(
        &args.output,
        // The coordinator is named on the `submitted to` line: the live line keeps the
        // target whole.
        &format!("checking {target}"),
        "submitted",
    );
    progress.println(&format!("check {id} submitted to {base}"));
    let expected = args.fleet.regions.len();
    let mut shown = 0;
    // The coordinator's last answer while the check ran: what a report can still rest on if
    // the coordinator goes away.
    let mut last: Option<Box<Report>> = None;
    let late = || {
        anyhow::anyhow!(
            "the coordinator did not finish check {id} in time (within {})",
            api_wait(args.probe.deadline())
        )
    };
    let result = loop {
        // Each poll waits at most what is left of the whole wait.
        let left = give_up
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(100));
        let resp = match client
            .get(format!("{base}/v1/checks/{id}"))
            .bearer_auth(token.expose_secret())
            .timeout(left)
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) if e.is_timeout() => break Err(late()),
            Err(e) => {
                break Ok(Followed::Gone {
                    id: id.clone(),
                    why: cause(&e),
                    partial: last.take(),
                })
            }
        };
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        // A coordinator that restarted does not know the check; one that is stopping says so.
        if status == reqwest::StatusCode::NOT_FOUND || status.is_server_error() {
            break Ok(Followed::Gone {
                id: id.clone(),
                why: api_error(status, &text),
                partial: last.take(),
            });
        }
        if !status.is_success() {
            break Err(anyhow::anyhow!(
                "the coordinator lost the check: {}",
                api_error(status, &text)
            ));
        }
        let report: Report = match serde_json::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                break Err(anyhow::anyhow!(
                    "the coordinator's report is not vantage.report/v1: {e}"
                ))
            }
        };
        // Regions as they arrive, each on a line of its own above the live line.
        for r in report.regions.iter().skip(shown) {
            let st = serde_json::to_string(&r.status).unwrap_or_default();
            progress.println(&format!(
                "  {:<12} {:<9} {} ms",
                r.region,
                st.trim_matches('"'),
                r.duration_ms
            ));
        }
        shown = report.regions.len();
        progress.stage(&if expected > 0 {
            format!("{shown} of {expected} region(s) reported")
        } else if report.state.is_none() {
            format!("every region reported ({shown})")
        } else {
            format!("{shown} region(s) reported, waiting for the rest")
        });
        if report.state.is_none() {
            break Ok(Followed::Done(Box::new(report)));
        }
        last = Some(Box::new(report));
        if Instant::now() > give_up {
            break Err(late());
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    };
    progress.finish();
    result
}

/// How following a submitted check ended.
enum Followed {
    Done(Box<Report>),
    /// The coordinator stopped answering, or no longer knows check `id`: why, and its last
    /// answer (the regions that had reported), if any came.
    Gone {
        id: String,
        why: String,
        partial: Option<Box<Report>>,
    },
}

/// An error and its causes, one line.
fn cause(e: &reqwest::Error) -> String {
    let mut chain = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(c) = source {
        chain.push_str(": ");
        chain.push_str(&c.to_string());
        source = c.source();
    }
    chain
}
