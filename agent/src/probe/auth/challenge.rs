//! A real RFC 9110 (section 11.6.1) `WWW-Authenticate` parser: several challenges in one
//! header and several headers, auth-params with token or quoted-string values (with
//! escapes), token68, and optional whitespace around `=`. Malformed input is an error the
//! caller reports as a finding, never a panic.

/// One challenge: a scheme with its parameters (names lowercased) or a token68.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: Vec<(String, String)>,
    pub token68: Option<String>,
}

impl Challenge {
    /// The value of parameter `name` (case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_bearer(&self) -> bool {
        self.scheme.eq_ignore_ascii_case("bearer")
    }
}

/// Why a header value could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    #[error("empty WWW-Authenticate")]
    Empty,
    #[error("unterminated quoted string at byte {0}")]
    Unterminated(usize),
    #[error("expected an auth-scheme at byte {0}")]
    ExpectedScheme(usize),
    #[error("expected a parameter value at byte {0}")]
    ExpectedValue(usize),
    #[error("unexpected character {1:?} at byte {0}")]
    Unexpected(usize, char),
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn is_token68(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-._~+/".contains(&c)
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }
    fn skip_ws_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }
    fn token(&mut self) -> &str {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i]).unwrap_or("")
    }
    fn quoted(&mut self) -> Result<String, ChallengeError> {
        let start = self.i;
        self.i += 1; // opening quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(ChallengeError::Unterminated(start)),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    self.i += 1;
                    match self.peek() {
                        None => return Err(ChallengeError::Unterminated(start)),
                        Some(c) => out.push(c),
                    }
                    self.i += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }
    /// Whether an auth-param (`name BWS "=" BWS value`) starts here. A token68 ends with
    /// `=` padding that is followed by the end, a comma or whitespace and then a comma.
    fn at_param(&self) -> bool {
        let mut j = self.i;
        while self.s.get(j).copied().is_some_and(is_tchar) {
            j += 1;
        }
        if j == self.i {
            return false;
        }
        while matches!(self.s.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        if self.s.get(j) != Some(&b'=') {
            return false;
        }
        j += 1;
        while matches!(self.s.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        matches!(self.s.get(j), Some(c) if *c == b'"' || is_tchar(*c) && *c != b'=')
    }
}

/// Parse every challenge in `values` (one entry per `WWW-Authenticate` header).
pub fn parse(values: &[&str]) -> Result<Vec<Challenge>, ChallengeError> {
    let mut out = Vec::new();
    for value in values {
        parse_one(value, &mut out)?;
    }
    if out.is_empty() {
        return Err(ChallengeError::Empty);
    }
    Ok(out)
}

fn parse_one(value: &str, out: &mut Vec<Challenge>) -> Result<(), ChallengeError> {
    let mut c = Cursor {
        s: value.as_bytes(),
        i: 0,
    };
    loop {
        c.skip_ws_commas();
        let Some(ch) = c.peek() else { return Ok(()) };
        if !is_tchar(ch) {
            return Err(ChallengeError::ExpectedScheme(c.i));
        }
        let scheme = c.token().to_string();
        let mut challenge = Challenge {
            scheme,
            params: Vec::new(),
            token68: None,
        };
        c.skip_ws();
        // token68?
        if c.peek().is_some_and(is_token68) && !c.at_param() {
            let start = c.i;
            while c.peek().is_some_and(is_token68) {
                c.i += 1;
            }
            while c.peek() == Some(b'=') {
                c.i += 1;
            }
            challenge.token68 = Some(String::from_utf8_lossy(&c.s[start..c.i]).into_owned());
            c.skip_ws();
            match c.peek() {
                None | Some(b',') => {
                    out.push(challenge);
                    continue;
                }
                Some(x) => return Err(ChallengeError::Unexpected(c.i, x as char)),
            }
        }
        // auth-params, until the next scheme or the end (empty list elements are allowed,
        // RFC 9110 section 5.6.1.2).
        loop {
            c.skip_ws_commas();
            if !c.at_param() {
                break;
            }
            let name = c.token().to_ascii_lowercase();
            c.skip_ws();
            c.i += 1; // '='
            c.skip_ws();
            let value = match c.peek() {
                Some(b'"') => c.quoted()?,
                Some(x) if is_tchar(x) => c.token().to_string(),
                _ => return Err(ChallengeError::ExpectedValue(c.i)),
            };
            challenge.params.push((name, value));
            c.skip_ws();
            match c.peek() {
                None => break,
                Some(b',') => {
                    // Skip empty list elements, then see whether a param or a scheme follows.
                    c.skip_ws_commas();
                }
                Some(x) => return Err(ChallengeError::Unexpected(c.i, x as char)),
            }
        }
        out.push(challenge);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(v: &str) -> Vec<Challenge> {
        parse(&[v]).unwrap_or_else(|e| panic!("{v:?}: {e}"))
    }

    #[test]
    fn real_world_shapes() {
        // MCP reference shape.
        let c = one(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write""#,
        );
        assert_eq!(c.len(), 1);
        assert!(c[0].is_bearer());
        assert_eq!(
            c[0].param("resource_metadata"),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c[0].param("scope"), Some("files:read files:write"));
        // RFC 6750 error with description and escapes.
        let c = one(
            r#"Bearer realm="example", error="invalid_token", error_description="The access token \"expired\"""#,
        );
        assert_eq!(c[0].param("error"), Some("invalid_token"));
        assert_eq!(
            c[0].param("error_description"),
            Some(r#"The access token "expired""#)
        );
        // Several challenges in one header, token values, odd spacing and case.
        let c =
            one(r#"Basic realm="x", bearer Realm = "api" , error=insufficient_scope,scope="a b""#);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].scheme, "Basic");
        assert_eq!(c[1].param("realm"), Some("api"));
        assert_eq!(c[1].param("error"), Some("insufficient_scope"));
        assert_eq!(c[1].param("scope"), Some("a b"));
        // A bare scheme, then another.
        let c = one("Negotiate, Bearer");
        assert_eq!(
            c.iter().map(|c| c.scheme.as_str()).collect::<Vec<_>>(),
            ["Negotiate", "Bearer"]
        );
        // token68 with padding, followed by another challenge.
        let c = one("Basic dXNlcjpwYXNz==, Bearer scope=\"x\"");
        assert_eq!(c[0].token68.as_deref(), Some("dXNlcjpwYXNz=="));
        assert_eq!(c[1].param("scope"), Some("x"));
        // `realm=` alone is a valid token68, not a parameter without a value.
        assert_eq!(one("Bearer realm=")[0].token68.as_deref(), Some("realm="));
        // Empty list elements are tolerated.
        let c = one(" , Bearer ,, realm=\"r\" ,");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].param("realm"), Some("r"));
    }

    #[test]
    fn several_headers() {
        let c = parse(&[
            "DPoP algs=\"ES256\"",
            "Bearer resource_metadata=\"https://a/b\"",
        ])
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            c.iter()
                .find(|c| c.is_bearer())
                .unwrap()
                .param("resource_metadata"),
            Some("https://a/b")
        );
    }

    #[test]
    fn malformed_headers_are_errors_not_panics() {
        type Case = (&'static str, fn(&ChallengeError) -> bool);
        let cases: &[Case] = &[
            ("", |e| *e == ChallengeError::Empty),
            ("   ,  ", |e| *e == ChallengeError::Empty),
            ("Bearer realm=\"unterminated", |e| {
                matches!(e, ChallengeError::Unterminated(_))
            }),
            ("Bearer realm=\"x\\", |e| {
                matches!(e, ChallengeError::Unterminated(_))
            }),
            ("Bearer realm=\"x\", error=", |e| {
                matches!(
                    e,
                    ChallengeError::ExpectedValue(_)
                        | ChallengeError::Unexpected(..)
                        | ChallengeError::ExpectedScheme(_)
                )
            }),
            ("\"quoted\" scheme", |e| {
                matches!(e, ChallengeError::ExpectedScheme(0))
            }),
            ("Bearer realm=\"x\" junk", |e| {
                matches!(e, ChallengeError::Unexpected(..))
            }),
            ("Bearer abc==def", |e| {
                matches!(e, ChallengeError::Unexpected(..))
            }),
        ];
        for (input, ok) in cases {
            match parse(&[input]) {
                Err(e) => assert!(ok(&e), "{input:?}: unexpected error {e:?}"),
                Ok(c) => panic!("{input:?} parsed as {c:?}"),
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A small deterministic sweep over short strings of the interesting characters.
        let alphabet = ['B', 'e', ' ', ',', '=', '"', '\\', 'a', '\t', 'é'];
        let mut n = 0u64;
        for len in 0..6 {
            let mut idx = vec![0usize; len];
            loop {
                let s: String = idx.iter().map(|&i| alphabet[i]).collect();
                let _ = parse(&[&s]);
                n += 1;
                let mut k = 0;
                while k < len {
                    idx[k] += 1;
                    if idx[k] < alphabet.len() {
                        break;
                    }
                    idx[k] = 0;
                    k += 1;
                }
                if k == len {
                    break;
                }
            }
        }
        assert!(n > 100_000);
    }
}
