//! Issue 13: one egress policy for every connection a vantage makes. A hostile target on
//! `127.0.0.2` points every URL the probe engine reads (the challenge's
//! `resource_metadata`, PRM `authorization_servers`, authorization server metadata
//! candidates, a redirect's Location, a metadata redirect) at an internal service on
//! `127.0.0.1` that serves a credential. The internal service counts its connections: it
//! must see none, and the report must say why, with nothing of the credential in it.

mod cli;
mod fleet;
mod lab;
mod paths;

use serde_json::json;

use lab::{twin_listeners, Answer, CountingServer, Request};

/// What the internal service serves: the shape of every metadata document, so that a
/// vantage that reached it would carry the credential into its report.
pub const SECRET: &str = "AKIA-INTERNAL-CREDENTIAL-12345";

/// The internal service (`127.0.0.1:P`): everything it serves is the credential.
fn internal(listener: tokio::net::TcpListener) -> CountingServer {
    CountingServer::start(
        listener,
        std::sync::Arc::new(|_: &Request| {
            Answer::json(
                200,
                json!({"resource": SECRET, "issuer": SECRET, "authorization_servers": [SECRET],
                       "code_challenge_methods_supported": ["S256"], "token": SECRET}),
            )
        }),
    )
}

/// How the hostile target answers.
#[derive(Debug, Clone, Default)]
pub struct Hostile {
    /// `resource_metadata` of the 401 challenge (none: the well-known URIs).
    pub resource_metadata: Option<String>,
    /// Instead of the 401, a 307 to this Location.
    pub redirect: Option<String>,
    /// The PRM's `authorization_servers`.
    pub authorization_servers: Vec<String>,
    /// Instead of the PRM, a 302 to this Location.
    pub prm_redirect: Option<String>,
}

impl Hostile {
    /// A target whose 401 challenge names `resource_metadata` (and nothing else hostile).
    pub fn pointing_at(resource_metadata: String) -> Hostile {
        Hostile {
            resource_metadata: Some(resource_metadata),
            ..Hostile::default()
        }
    }
}

/// One laboratory on a port `P` free on both addresses: the internal service on
/// `127.0.0.1:P` and the hostile target on `127.0.0.2:P`, answering as `scenario(P)` says.
pub struct Lab {
    pub port: u16,
    pub inside: CountingServer,
    pub target: CountingServer,
}

impl Lab {
    pub async fn start(scenario: impl FnOnce(u16) -> Hostile) -> Lab {
        let (internal_l, public_l) = twin_listeners().await;
        let port = public_l.local_addr().unwrap().port();
        let inside = internal(internal_l);
        let target = hostile(public_l, scenario(port));
        Lab {
            port,
            inside,
            target,
        }
    }

    /// What holds whatever the path: the internal service saw no connection and the target
    /// was probed (`context` says which run).
    pub fn assert_contained(&self, context: &str) {
        assert_eq!(
            self.inside.connections(),
            0,
            "the internal service was reached: {context}"
        );
        assert!(
            self.target.connections() > 0,
            "the target was never probed: {context}"
        );
    }
}

/// The hostile target (`127.0.0.2:P`, the "public" side): an MCP endpoint at `/mcp` that
/// wants authorization, its PRM at `/prm` and at the well-known URIs, and authorization
/// server metadata for the issuer `http://127.0.0.2:P` at the root well-known URIs.
fn hostile(listener: tokio::net::TcpListener, h: Hostile) -> CountingServer {
    let origin = format!("http://{}", listener.local_addr().expect("addr"));
    CountingServer::start(
        listener,
        std::sync::Arc::new(move |r: &Request| {
            let path = r.path.split('?').next().unwrap_or("");
            if path == "/mcp" {
                if let Some(loc) = &h.redirect {
                    return Answer::json(307, json!({})).with("Location", loc);
                }
                let challenge = match &h.resource_metadata {
                    Some(rm) => format!("Bearer resource_metadata=\"{rm}\", scope=\"mcp:read\""),
                    None => "Bearer scope=\"mcp:read\"".to_string(),
                };
                return Answer::json(
                    401,
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "unauthorized"}}),
                )
                .with("WWW-Authenticate", &challenge);
            }
            if path == "/prm" || path.starts_with("/.well-known/oauth-protected-resource") {
                if let Some(loc) = &h.prm_redirect {
                    return Answer::json(302, json!({})).with("Location", loc);
                }
                return Answer::json(
                    200,
                    json!({"resource": format!("{origin}/mcp"),
                           "authorization_servers": h.authorization_servers}),
                );
            }
            if path == "/.well-known/oauth-authorization-server"
                || path == "/.well-known/openid-configuration"
            {
                return Answer::json(
                    200,
                    json!({"issuer": origin, "code_challenge_methods_supported": ["S256"],
                           "authorization_endpoint": format!("{origin}/authorize"),
                           "token_endpoint": format!("{origin}/token")}),
                );
            }
            Answer::json(404, json!({"error": "not found"}))
        }),
    )
}
