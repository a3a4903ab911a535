//! Credentials for authenticated probes. Tokens are read by the process that uses them
//! (from an environment variable or a file named by the operator), kept in `SecretString`
//! (redacted `Debug`, zeroized on drop), and never written to a report, log or output: every
//! answer is scrubbed of any piece of them ([`scrub`]) when it is captured, and the engine
//! scrubs what it reports once more as a last line of defence.

use secrecy::{ExposeSecret, SecretString};

/// The three optional tokens of `checks.md` section 2.5.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// A valid token: the transport checks run authenticated with it.
    pub token: Option<SecretString>,
    /// A token issued for another audience (for `auth.wrong-audience`).
    pub other_audience: Option<SecretString>,
    /// A valid token lacking a required scope (for `auth.insufficient-scope`).
    pub missing_scope: Option<SecretString>,
}

/// Where a token comes from; errors name the source, never the value. A file that cannot
/// be read carries the I/O error as its source (`{:#}` shows it).
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// Callers add the fix that fits where the name came from (a flag, a config key).
    #[error("environment variable {0} is not set or empty")]
    EnvMissing(String),
    #[error("token file {}", path.display())]
    ReadFile {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("token file {} is empty", path.display())]
    FileEmpty { path: std::path::PathBuf },
    /// A token that cannot go in `Authorization: Bearer …`: every request made with it would
    /// fail on this side, before anything is sent. `from` names where it came from,
    /// `what` the kind of character ("a newline"), never the token nor where in it.
    #[error("{from}: the token contains {what}, which cannot be sent in an HTTP header (Authorization: Bearer …); give the token on one line without control characters")]
    Unusable { from: String, what: &'static str },
}

/// Why `token` cannot be sent as `Authorization: Bearer {token}`, in words that name the
/// kind of character ("a newline", "a control character"), never the token nor the
/// character's place in it; `None` when it can.
pub fn header_problem(token: &str) -> Option<&'static str> {
    if http::HeaderValue::from_str(&format!("Bearer {token}")).is_ok() {
        return None;
    }
    let bad = token
        .bytes()
        .find(|&b| (b < 0x20 && b != b'\t') || b == 0x7f);
    Some(match bad {
        Some(b'\n') => "a newline",
        Some(b'\r') => "a carriage return",
        Some(0) => "a NUL byte",
        _ => "a control character",
    })
}

/// `token` as read from `source`, or [`CredentialError::Unusable`].
fn usable(token: String, from: impl FnOnce() -> String) -> Result<SecretString, CredentialError> {
    match header_problem(&token) {
        None => Ok(SecretString::from(token)),
        Some(what) => Err(CredentialError::Unusable { from: from(), what }),
    }
}

/// Read a token from the environment variable `name` (surrounding whitespace dropped); a
/// token that cannot go in an HTTP header is refused, naming the variable.
pub fn from_env(name: &str) -> Result<SecretString, CredentialError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => usable(v.trim().to_string(), || {
            format!("environment variable {name}")
        }),
        _ => Err(CredentialError::EnvMissing(name.to_string())),
    }
}

/// Read a token from a file (surrounding whitespace and the final newline are dropped); a
/// token that cannot go in an HTTP header (two lines, a control byte) is refused, naming
/// the file.
pub fn from_file(path: &std::path::Path) -> Result<SecretString, CredentialError> {
    let text = std::fs::read_to_string(path).map_err(|source| CredentialError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(CredentialError::FileEmpty {
            path: path.to_path_buf(),
        });
    }
    usable(token.to_string(), || {
        format!("token file {}", path.display())
    })
}

impl Credentials {
    /// The first token held that cannot be sent in an HTTP header: which one (`token`,
    /// `other_audience`, `missing_scope`) and the kind of character ([`header_problem`]).
    /// A job from a coordinator is refused for it (the loaders refuse such a token first).
    pub fn unusable(&self) -> Option<(&'static str, &'static str)> {
        [
            ("token", &self.token),
            ("other_audience", &self.other_audience),
            ("missing_scope", &self.missing_scope),
        ]
        .into_iter()
        .find_map(|(name, t)| {
            t.as_ref()
                .and_then(|t| header_problem(t.expose_secret()))
                .map(|what| (name, what))
        })
    }

    /// Every secret value held, for scrubbing.
    pub fn secrets(&self) -> Vec<&str> {
        [&self.token, &self.other_audience, &self.missing_scope]
            .into_iter()
            .flatten()
            .map(|s| s.expose_secret())
            .filter(|s| !s.is_empty())
            .collect()
    }
}

/// The shortest piece of a secret that is redacted wherever it appears: any run of this many
/// characters (or more) of a secret, anywhere in a text the target chose. Shorter pieces are
/// too common to be recognisable, and too short to be worth anything; a secret shorter than
/// this is redacted where it appears whole.
pub const FRAGMENT_CHARS: usize = 8;

/// Replace every piece of each secret in `text` with `[redacted]`: every run of
/// [`FRAGMENT_CHARS`] characters or more of a secret (the whole of a shorter one), wherever
/// it starts or ends (a hostile server may echo a token cut in pieces, each padded or
/// prefixed). Overlapping and adjacent pieces become one `[redacted]`.
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    Pieces::new(secrets).scrub(text)
}

/// [`scrub`] on raw bytes (a body before anything decodes it, a header value).
pub fn scrub_bytes(bytes: &[u8], secrets: &[&str]) -> Vec<u8> {
    Pieces::new(secrets).scrub_bytes(bytes)
}

/// Whether `bytes` carry a piece of a secret that [`scrub`] would redact.
pub fn carries_secret(bytes: &[u8], secrets: &[&str]) -> bool {
    Pieces::new(secrets).carried_by(bytes)
}

/// The pieces of a run's secrets, gathered once to scrub many texts (every string of a
/// JSON body).
pub struct Pieces<'a>(Vec<Windows<'a>>);

/// Never the pieces themselves: they are the secret.
impl std::fmt::Debug for Pieces<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pieces({} secrets, [redacted])", self.0.len())
    }
}

impl<'a> Pieces<'a> {
    /// The pieces of `secrets`, with no text of a target to leave alone ([`Pieces::beside`]).
    pub fn new(secrets: &[&'a str]) -> Pieces<'a> {
        Pieces::beside(secrets, &[])
    }

    /// The pieces of `secrets` for a run whose target shows `public` anyway: the endpoint
    /// URL up to its path ([`public_text`]: scheme, host, port, path; never the query). A
    /// piece of 8 characters that lies inside it (a token that carries the endpoint's host
    /// name) is not scrubbed, or the checks would read the target's own name as
    /// `[redacted]` in every answer that names it (a protected resource's `resource`, a
    /// challenge's metadata URL) and fail a server that did nothing wrong. Such a secret is
    /// still scrubbed where it appears whole.
    pub fn beside(secrets: &[&'a str], public: &[&str]) -> Pieces<'a> {
        Pieces(
            secrets
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| Windows::of(s, public))
                .collect(),
        )
    }

    /// Whether there is nothing to scrub.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// See [`scrub`].
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_string();
        }
        let out = self.scrub_bytes(text.as_bytes());
        // Pieces of a secret are whole characters, so the cuts fall on character boundaries.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// See [`scrub_bytes`].
    pub fn scrub_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let spans = self.spans(bytes);
        let mut out = Vec::with_capacity(bytes.len());
        let mut from = 0;
        for (start, end) in spans {
            out.extend_from_slice(&bytes[from..start]);
            out.extend_from_slice(b"[redacted]");
            from = end;
        }
        out.extend_from_slice(&bytes[from..]);
        out
    }

    /// See [`carries_secret`].
    pub fn carried_by(&self, bytes: &[u8]) -> bool {
        !self.spans(bytes).is_empty()
    }

    /// The byte ranges of `text` covered by pieces of the secrets, sorted, overlapping and
    /// adjacent ones merged. One pass over the text: O(len(text) × number of secrets).
    fn spans(&self, text: &[u8]) -> Vec<(usize, usize)> {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for p in 0..text.len() {
            for w in self.0.iter().filter(|w| w.first[text[p] as usize]) {
                for &len in &w.lengths {
                    let Some(piece) = text.get(p..p + len) else {
                        continue;
                    };
                    if !w.set.contains(piece) {
                        continue;
                    }
                    match spans.last_mut() {
                        Some((_, end)) if *end >= p => *end = (*end).max(p + len),
                        _ => spans.push((p, p + len)),
                    }
                }
            }
        }
        spans
    }
}

/// Protocol words, media types, versions, header and field names the checks read in every
/// answer: a piece of a secret found inside one of them is public text, never scrubbed (a
/// secret such as `my-application-key` keeps `applicat…` but loses the rest).
const VOCABULARY: &[&str] = &[
    "application/json",
    "text/event-stream",
    "text/html",
    "text/plain",
    "charset=utf-8",
    "jsonrpc",
    "protocolVersion",
    "supportedVersions",
    "capabilities",
    "serverInfo",
    "resultType",
    "complete",
    "input_required",
    "ttlMs",
    "cacheScope",
    "public",
    "private",
    "nextCursor",
    "resourceTemplates",
    "resources/templates/list",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "tools/list",
    "tools/call",
    "server/discover",
    "subscriptions/listen",
    "notifications/subscriptions/acknowledged",
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
    "notifications/initialized",
    "initialize",
    "listChanged",
    "subscriptionId",
    "inputSchema",
    "outputSchema",
    "description",
    "annotations",
    "Mcp-Method",
    "Mcp-Name",
    "MCP-Protocol-Version",
    "Mcp-Session-Id",
    "WWW-Authenticate",
    "Bearer",
    "resource_metadata",
    "error_description",
    "insufficient_scope",
    "invalid_token",
    "authorization_servers",
    "scopes_supported",
    "code_challenge_methods_supported",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "client_id_metadata_document_supported",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "localhost",
    "127.0.0.1",
    "Content-Type",
    "Retry-After",
    "Access-Control-Allow-Origin",
    "Access-Control-Allow-Headers",
    "Access-Control-Expose-Headers",
    "Method not found",
    "Unsupported protocol version",
    "Header mismatch",
    "Invalid Request",
    "Invalid params",
    "Internal error",
    "Parse error",
    "Unknown tool",
    "Forbidden",
];

/// Whether `piece` is part of a [`VOCABULARY`] word.
fn is_vocabulary(piece: &[u8]) -> bool {
    inside(piece, VOCABULARY)
}

/// Whether `piece` is part of one of `texts`.
fn inside(piece: &[u8], texts: &[&str]) -> bool {
    texts
        .iter()
        .any(|t| t.as_bytes().windows(piece.len()).any(|w| w == piece))
}

/// The text of `url` a run shows anyway, so a piece of a secret inside it is not scrubbed
/// ([`Pieces::beside`]): the URL up to its path (scheme, host, port, path), never its query
/// (where the secret-named values are) nor its fragment. The report names the target by it
/// (the query redacted), and so do the logs and the metric labels.
pub fn public_text(url: &url::Url) -> &str {
    &url[..url::Position::AfterPath]
}

/// The pieces of one secret: its windows of [`FRAGMENT_CHARS`] characters (the whole
/// secret when it is shorter). Every run of more characters is a union of such windows,
/// so the text a secret's pieces cover is the union of the windows' occurrences.
struct Windows<'a> {
    set: std::collections::HashSet<&'a [u8]>,
    /// The byte lengths of the windows (one for an ASCII secret).
    lengths: Vec<usize>,
    /// The bytes a window starts with.
    first: [bool; 256],
}

impl<'a> Windows<'a> {
    /// `public`: text a window inside which is not a piece ([`Pieces::beside`]).
    fn of(secret: &'a str, public: &[&str]) -> Windows<'a> {
        let bounds: Vec<usize> = secret
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(secret.len()))
            .collect();
        let chars = bounds.len() - 1;
        let w = FRAGMENT_CHARS.min(chars);
        let mut set = std::collections::HashSet::new();
        let mut first = [false; 256];
        let mut left_alone = false;
        for i in 0..=chars - w {
            let piece = &secret.as_bytes()[bounds[i]..bounds[i + w]];
            if w == FRAGMENT_CHARS && (is_vocabulary(piece) || inside(piece, public)) {
                // Protocol text every server writes (fresh eyes round 17, D3): scrubbing it
                // out of an answer before the checks read it turned a conformant server into
                // a failing one (`[redacted]/json`), and showing it tells nothing about the
                // secret beyond a word everyone knows. Likewise the endpoint's own host and
                // path (fresh eyes round 17, D3 leftover): the report shows them anyway.
                left_alone = true;
                continue;
            }
            first[piece[0] as usize] = true;
            set.insert(piece);
        }
        if left_alone && !is_vocabulary(secret.as_bytes()) {
            // The whole secret is still a piece: the windows left out above would leave
            // their part of it standing where the target echoes it whole. (A secret that is
            // itself a protocol word is that word, and stays.)
            first[secret.as_bytes()[0] as usize] = true;
            set.insert(secret.as_bytes());
        }
        let mut lengths: Vec<usize> = set.iter().map(|p| p.len()).collect();
        lengths.sort_unstable();
        lengths.dedup();
        Windows {
            set,
            lengths,
            first,
        }
    }
}

/// The token of an `Authorization: Bearer TOKEN` value: the scheme is case-insensitive
/// (RFC 9110 §11.1), one or more spaces follow it (fresh eyes round 17, D6: `bearer TOKEN` was
/// refused and counted as no token at all).
pub fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches(' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fresh eyes round 17, D3: a secret sharing 8 characters with protocol text scrubbed
    /// that text out of the answers before the checks read them (`[redacted]/json`: a clean
    /// server blocked). The protocol words stay; the secret's own characters still go.
    #[test]
    fn protocol_words_in_a_secret_are_not_scrubbed_but_the_secret_is() {
        let secret = "my-application-key-7f3a";
        let answer = "Content-Type: application/json; echo=my-application-key-7f3a";
        let out = scrub(answer, &[secret]);
        assert!(
            out.starts_with("Content-Type: application/json; echo="),
            "{out}"
        );
        assert!(!out.contains("application-key"), "{out}");
        assert!(!out.contains("key-7f3a"), "{out}");
        for (secret, text) in [
            ("complete", r#"{"resultType":"complete"}"#),
            ("2026-07-28", r#"{"supportedVersions":["2026-07-28"]}"#),
            ("text/event-stream", "text/event-stream"),
        ] {
            assert_eq!(scrub(text, &[secret]), text, "{secret}");
        }
        // A random token is scrubbed whole, as before.
        let tok = "Zq8rT2vLm4Xw9PbN";
        assert_eq!(scrub(&format!("x{tok}y"), &[tok]), "x[redacted]y");
    }

    /// Fresh eyes round 17, D3 leftover: a secret carrying 8 characters or more of the
    /// endpoint's own host name scrubbed that host out of the target's answers before the
    /// checks read them (`https://[redacted]…` as a protected resource's `resource`: a clean
    /// server failed auth.prm). Pieces inside the target URL's own text (scheme, host, port,
    /// path) stay; the secret's other pieces, and the whole secret, still go.
    #[test]
    fn pieces_inside_the_targets_host_and_path_are_not_scrubbed_but_the_secret_is() {
        let url = url::Url::parse("https://mcp.example-corp.com/tenant7/mcp?api_key=k").unwrap();
        let public = public_text(&url);
        assert_eq!(public, "https://mcp.example-corp.com/tenant7/mcp");
        let token = "tok-mcp.example-corp.com-Zq8rT2vL";
        let pieces = Pieces::beside(&[token], &[public]);
        let prm = r#"{"resource":"https://mcp.example-corp.com/tenant7/mcp","authorization_servers":["https://mcp.example-corp.com"]}"#;
        assert_eq!(pieces.scrub(prm), prm);
        assert!(!pieces.carried_by(prm.as_bytes()));
        // Without the target's text (the old scrubber), the host itself went.
        assert!(Pieces::new(&[token])
            .scrub(prm)
            .contains("https://[redacted]"));
        // The secret echoed whole, its pieces that reach beyond the host, and a piece of it
        // beside the host in an answer: still scrubbed.
        assert_eq!(pieces.scrub(&format!("echo {token}.")), "echo [redacted].");
        // (`corp.com` is the host's, the rest of the run is the secret's.)
        assert_eq!(pieces.scrub("x corp.com-Zq8rT2 y"), "x c[redacted] y");
        assert_eq!(pieces.scrub("a -Zq8rT2vL b"), "a [redacted] b");
        assert_eq!(pieces.scrub("tok-mcp.example"), "[redacted]mple");
        // A piece of the path, and one across the host and the path.
        let in_path = "SeCrEt/tenant7/mcpXy";
        let p = Pieces::beside(&[in_path], &[public]);
        let echo = "resource https://mcp.example-corp.com/tenant7/mcp";
        assert_eq!(p.scrub(echo), echo);
        assert_eq!(p.scrub("SeCrEt/tenant"), "[redacted]");
        let across = "q9.com/tenant7Zr";
        assert_eq!(Pieces::beside(&[across], &[public]).scrub(echo), echo);
        // A secret that lies wholly inside the host is still scrubbed where it appears.
        let host = Pieces::beside(&["example-corp"], &[public]);
        assert_eq!(
            host.scrub(echo),
            "resource https://mcp.[redacted].com/tenant7/mcp"
        );
        // The query is never the target's public text: a piece of it is scrubbed.
        let in_query = Pieces::beside(&["Wv3api_key=kQ"], &[public]);
        assert_eq!(in_query.scrub("?api_key=k&x"), "?[redacted]&x");
        // A query secret's forms (as sent, decoded, encoded again): each whole is scrubbed,
        // the host inside them is not.
        let target = crate::target::Target::parse(
            "https://mcp.example-corp.com/mcp?api_key=k7-mcp.example-corp.com%2Fv9",
        )
        .unwrap();
        let forms = target.query_secrets();
        let forms: Vec<&str> = forms.iter().map(String::as_str).collect();
        assert!(forms.contains(&"k7-mcp.example-corp.com/v9"), "{forms:?}");
        let q = Pieces::beside(&forms, &[public_text(&target.url)]);
        for form in &forms {
            assert_eq!(q.scrub(&format!("<{form}>")), "<[redacted]>", "{form}");
        }
        let doc = r#"{"resource":"https://mcp.example-corp.com/mcp"}"#;
        assert_eq!(q.scrub(doc), doc);
    }

    #[test]
    fn debug_never_shows_a_token() {
        let c = Credentials {
            token: Some(SecretString::from("tok-123-secret".to_string())),
            ..Default::default()
        };
        assert!(!format!("{c:?}").contains("tok-123-secret"));
        assert_eq!(
            scrub("echo tok-123-secret back", &c.secrets()),
            "echo [redacted] back"
        );
    }

    #[test]
    fn a_secret_cut_by_a_clip_is_redacted_by_its_fragment() {
        let token = "tok-0123456789abcdef-secret-value";
        // The review's repro: padded so the token straddles an 80-character cut.
        let clipped = format!("{}{}…", "p".repeat(49), &token[..31]);
        let out = scrub(&format!("JSON-RPC error -32601 \"{clipped}\""), &[token]);
        assert!(!out.contains(&token[..FRAGMENT_CHARS]), "{out}");
        assert!(out.ends_with("[redacted]…\""), "{out}");
        // A suffix at the start of a text cut at its beginning.
        let out = scrub(&format!("{} tail", &token[5..]), &[token]);
        assert_eq!(out, "[redacted] tail");
        // A fragment before a cut in the middle of a line.
        let out = scrub(&format!("body \"{}…\" [cap]", &token[..12]), &[token]);
        assert_eq!(out, "body \"[redacted]…\" [cap]");
        // Short coincidences are left alone.
        assert_eq!(scrub("ends with tok-01", &[token]), "ends with tok-01");
    }

    const TOK: &str = "Zq7Kp2Lm9Xw4Rt8Vn3Bc6Hj1Yd5Fg0Ss";

    /// Every run of 8 characters of `TOK` that `text` carries.
    fn windows_in(text: &str) -> Vec<&'static str> {
        (0..=TOK.len() - 8)
            .map(|i| &TOK[i..i + 8])
            .filter(|w| text.contains(w))
            .collect()
    }

    #[test]
    fn any_piece_of_eight_or_more_is_redacted_wherever_it_is() {
        // At the start, in the middle, at the end.
        assert_eq!(
            scrub(&format!("{} tail", &TOK[..10]), &[TOK]),
            "[redacted] tail"
        );
        assert_eq!(
            scrub(&format!("x {} y", &TOK[10..22]), &[TOK]),
            "x [redacted] y"
        );
        assert_eq!(
            scrub(&format!("head {}", &TOK[20..]), &[TOK]),
            "head [redacted]"
        );
        // Exactly 8 characters, glued to other text on both sides.
        assert_eq!(
            scrub(&format!("a_{}_b", &TOK[12..20]), &[TOK]),
            "a_[redacted]_b"
        );
        // The red team's repro: the token in two tool names, 31 of its 32 characters.
        let names = [format!("a {}", &TOK[1..17]), format!("b {}", &TOK[16..])];
        let out: Vec<String> = names.iter().map(|n| scrub(n, &[TOK])).collect();
        assert_eq!(out, ["a [redacted]", "b [redacted]"]);
        assert!(windows_in(&out.join("")).is_empty(), "{out:?}");
        // Overlapping and adjacent pieces become one redaction.
        let overlapping = format!("<{}{}{}>", &TOK[..12], &TOK[4..16], &TOK[20..30]);
        assert_eq!(scrub(&overlapping, &[TOK]), "<[redacted]>");
        // Pieces of two secrets overlapping each other.
        let other = "Mm4Nn5Oo6Pp7Qq8Rr9";
        let both = format!("{}{}", &TOK[..9], &other[2..12]);
        assert_eq!(scrub(&both, &[TOK, other]), "[redacted]");
        assert_eq!(scrub("no secret here", &[TOK, other]), "no secret here");
        // The matcher never shows what it matches.
        let debug = format!("{:?}", Pieces::new(&[TOK]));
        assert!(!debug.contains(&TOK[..8]), "{debug}");
    }

    #[test]
    fn pieces_of_seven_and_short_secrets_are_left_alone_unless_whole() {
        // 7 characters is not a piece: left alone, also two of them side by side.
        let seven = format!("id {} {}{}", &TOK[3..10], &TOK[..7], &TOK[20..27]);
        assert_eq!(scrub(&seven, &[TOK]), seven);
        // A secret shorter than 8 is redacted whole, never by a part of it.
        assert_eq!(
            scrub("xabc12y abc1 abc12abc12", &["abc12"]),
            "x[redacted]y abc1 [redacted]"
        );
        assert!(!carries_secret(b"abc1", &["abc12"]));
        assert!(carries_secret(b"..abc12", &["abc12"]));
        // The empty secret redacts nothing.
        assert_eq!(scrub("text", &[""]), "text");
    }

    #[test]
    fn pieces_are_whole_characters_of_a_secret_that_is_not_ascii() {
        let secret = "ключ-секрет-значение";
        let piece: String = secret.chars().skip(3).take(8).collect();
        assert_eq!(scrub(&format!("é{piece}é"), &[secret]), "é[redacted]é");
        let seven: String = secret.chars().skip(3).take(7).collect();
        assert_eq!(scrub(&seven, &[secret]), seven);
        // Raw bytes that are not UTF-8 around a piece.
        let mut bytes = vec![0xff];
        bytes.extend_from_slice(piece.as_bytes());
        assert_eq!(scrub_bytes(&bytes, &[secret]), b"\xff[redacted]");
    }

    /// Red team round 15, defect 3: a token with a newline or a control byte inside cannot
    /// go in `Authorization: Bearer …`; the loaders refuse it naming the source and the kind
    /// of character, never the token or where in it.
    #[test]
    fn a_token_that_cannot_go_in_a_header_is_refused_by_its_source() {
        assert_eq!(header_problem("fxV3f9aQ7twK2m8Lp4vZ"), None);
        assert_eq!(header_problem("sk-ünïcode"), None, "obs-text is sendable");
        assert_eq!(header_problem("a\tb"), None, "a tab is sendable");
        assert_eq!(header_problem("SeCrEt\nhalf"), Some("a newline"));
        assert_eq!(header_problem("SeCrEt\rhalf"), Some("a carriage return"));
        assert_eq!(header_problem("SeCrEt\u{0}half"), Some("a NUL byte"));
        assert_eq!(
            header_problem("SeCrEt\u{1}half"),
            Some("a control character")
        );
        assert_eq!(
            header_problem("SeCrEt\u{7f}half"),
            Some("a control character")
        );
        let var = "VANTAGE_TEST_SEC15_TOKEN_WITH_A_NEWLINE";
        std::env::set_var(var, "  SeCrEtPiece1234\nSECONDhalf98765 \n");
        let e = from_env(var).unwrap_err();
        std::env::remove_var(var);
        assert!(
            matches!(&e, CredentialError::Unusable { from, what: "a newline" } if from == &format!("environment variable {var}")),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.starts_with(&format!("environment variable {var}: the token contains a newline, which cannot be sent in an HTTP header")), "{text}");
        assert!(
            !text.contains("SeCrEt") && !text.contains("SECOND"),
            "{text}"
        );
        let dir = std::env::temp_dir().join(format!("vantage-sec15-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "SeCrEtPiece1234\u{1}SECONDhalf98765\r\n").unwrap();
        let e = from_file(&file).unwrap_err();
        // A trailing CRLF alone is trimmed: that token is fine.
        std::fs::write(&file, "SeCrEtPiece1234SECONDhalf98765\r\n").unwrap();
        let fine = from_file(&file);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            matches!(
                &e,
                CredentialError::Unusable {
                    what: "a control character",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "token file {}: the token contains a control character",
                file.display()
            )),
            "{e}"
        );
        assert_eq!(
            fine.unwrap().expose_secret(),
            "SeCrEtPiece1234SECONDhalf98765"
        );
        let c = Credentials {
            missing_scope: Some("a\nb".to_string().into()),
            ..Credentials::default()
        };
        assert_eq!(c.unusable(), Some(("missing_scope", "a newline")));
        assert_eq!(Credentials::default().unusable(), None);
    }

    #[test]
    fn missing_sources_name_the_source_not_a_value() {
        let e = from_env("VANTAGE_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(e.to_string().contains("VANTAGE_TEST_SURELY_UNSET_VARIABLE"));
        let e = from_file(std::path::Path::new("/nonexistent/token")).unwrap_err();
        assert!(
            matches!(&e, CredentialError::ReadFile { path, source }
                if path.as_os_str() == "/nonexistent/token"
                    && source.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "token file /nonexistent/token");
    }
}

#[cfg(test)]
mod bearer_tests {
    use super::bearer;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER  abc"), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearerabc"), None);
    }
}
