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

use lab::{Answer, CountingServer, Request};

/// What the internal service serves: the shape of every metadata document, so that a
/// vantage that reached it would carry the credential into its report.
pub const SECRET: &str = "AKIA-INTERNAL-CREDENTIAL-12345";

/// The internal service (`127.0.0.1:P`): everything it serves is the credential.
pub fn internal(listener: tokio::net::TcpListener) -> CountingServer {
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

/// The hostile target (`127.0.0.2:P`, the "public" side): an MCP endpoint at `/mcp` that
/// wants authorization, its PRM at `/prm` and at the well-known URIs, and authorization
/// server metadata for the issuer `http://127.0.0.2:P` at the root well-known URIs.
pub fn hostile(listener: tokio::net::TcpListener, h: Hostile) -> CountingServer {
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
