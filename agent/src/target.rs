//! The target URL, validated once: a scheme of http or https, a host, no userinfo.

use std::net::IpAddr;

use url::{Host, Url};

/// Why a target URL was refused. Each message says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The parser's own error is kept (typed) and said in the message; it is not also a
    /// `source`, which a chain printer (`{:#}`) would print a second time.
    #[error("not a URL ({0}); give the full endpoint, e.g. https://mcp.example.com/mcp")]
    Unparsable(url::ParseError),
    #[error("scheme `{0}` is not probed; use http:// or https://")]
    Scheme(String),
    #[error("the URL carries user information; remove it and name a credential with --token-env")]
    Userinfo,
    #[error("the URL has no host; give the full endpoint, e.g. https://mcp.example.com/mcp")]
    NoHost,
    #[error("the URL has a fragment (#…); MCP endpoints are identified without one")]
    Fragment,
}

/// A validated MCP endpoint. In configuration it is written as its URL and parsed once, on
/// load (`serde(try_from = "String")`): code that holds a `Target` never re-parses it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(try_from = "String", into = "String")]
pub struct Target {
    pub url: Url,
    /// The host as written (a name, or an IP literal without brackets).
    pub host: String,
    pub ip: Option<IpAddr>,
    pub port: u16,
    pub https: bool,
}

impl Target {
    pub fn parse(input: &str) -> Result<Self, TargetError> {
        let url = Url::parse(input.trim()).map_err(TargetError::Unparsable)?;
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            other => return Err(TargetError::Scheme(other.to_string())),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(TargetError::Userinfo);
        }
        if url.fragment().is_some() {
            return Err(TargetError::Fragment);
        }
        let (host, ip) = match url.host() {
            None => return Err(TargetError::NoHost),
            Some(Host::Domain(d)) => (d.trim_end_matches('.').to_ascii_lowercase(), None),
            Some(Host::Ipv4(a)) => (a.to_string(), Some(IpAddr::V4(a))),
            Some(Host::Ipv6(a)) => (a.to_string(), Some(IpAddr::V6(a))),
        };
        if host.is_empty() {
            return Err(TargetError::NoHost);
        }
        let port = url
            .port_or_known_default()
            .unwrap_or(if https { 443 } else { 80 });
        Ok(Target {
            url,
            host,
            ip,
            port,
            https,
        })
    }

    /// The URL as text.
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// An IP literal or `localhost`: DNS and deployment-shape checks do not apply.
    pub fn is_local(&self) -> bool {
        self.ip.is_some() || self.host == "localhost" || self.host.ends_with(".localhost")
    }

    /// The addresses a local target stands for.
    pub fn local_addresses(&self) -> Vec<IpAddr> {
        match self.ip {
            Some(ip) => vec![ip],
            None => vec![IpAddr::from([127, 0, 0, 1])],
        }
    }
}

/// `input` as a message may repeat it: user information (`user:password@`) replaced by
/// `[redacted]@`, so a refused URL never echoes its password. Anything else is unchanged.
pub fn redacted(input: &str) -> String {
    let Some(scheme_end) = input.find("://").map(|i| i + 3) else {
        return input.to_string();
    };
    let rest = &input[scheme_end..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => format!("{}[redacted]@{}", &input[..scheme_end], &rest[at + 1..]),
        None => input.to_string(),
    }
}

impl TryFrom<String> for Target {
    type Error = TargetError;
    fn try_from(s: String) -> Result<Self, TargetError> {
        Target::parse(&s)
    }
}

impl From<Target> for String {
    fn from(t: Target) -> String {
        t.url.into()
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.url.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_repeated() {
        assert_eq!(
            redacted("http://user:hunter2secret@127.0.0.1:4301/mcp"),
            "http://[redacted]@127.0.0.1:4301/mcp"
        );
        // An @ after the authority is the path's, and a URL without userinfo is unchanged.
        for plain in [
            "https://h.example/mcp/@team",
            "mcp.example.com/mcp",
            "https://h.example",
        ] {
            assert_eq!(redacted(plain), plain);
        }
        assert_eq!(
            redacted("https://u:p@w@h.example"),
            "https://[redacted]@h.example"
        );
    }

    #[test]
    fn refuses_bad_targets_with_a_fix() {
        assert!(matches!(
            Target::parse("mcp.example.com/mcp"),
            Err(TargetError::Unparsable(_))
        ));
        assert_eq!(
            Target::parse("ftp://h/x"),
            Err(TargetError::Scheme("ftp".into()))
        );
        assert_eq!(
            Target::parse("file:///etc/passwd"),
            Err(TargetError::Scheme("file".into()))
        );
        assert_eq!(
            Target::parse("https://u:p@h.example/mcp"),
            Err(TargetError::Userinfo)
        );
        assert_eq!(
            Target::parse("https://h.example/mcp#x"),
            Err(TargetError::Fragment)
        );
    }

    #[test]
    fn deserialises_from_its_url_and_refuses_a_bad_one() {
        #[derive(Debug, serde::Deserialize)]
        struct C {
            target: Target,
        }
        let c: C = serde_json::from_str(r#"{"target": "https://MCP.example.com/mcp"}"#).unwrap();
        assert_eq!(c.target.host, "mcp.example.com");
        assert_eq!(
            serde_json::to_string(&c.target).unwrap(),
            r#""https://mcp.example.com/mcp""#
        );
        let e = serde_json::from_str::<C>(r#"{"target": "ftp://h/x"}"#).unwrap_err();
        assert!(e.to_string().contains("scheme `ftp` is not probed"), "{e}");
    }

    #[test]
    fn classifies_local_targets() {
        let t = Target::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert!(t.is_local());
        assert_eq!(t.port, 8080);
        let t = Target::parse("http://[::1]/mcp").unwrap();
        assert_eq!(t.host, "::1");
        assert!(t.is_local());
        assert!(Target::parse("http://localhost:1/mcp").unwrap().is_local());
        let t = Target::parse("https://MCP.Example.com/mcp").unwrap();
        assert!(!t.is_local());
        assert_eq!(t.host, "mcp.example.com");
        assert_eq!(t.port, 443);
    }
}
