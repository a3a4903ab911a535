//! Text the target chose, made safe to show: every string a response carries (a JSON-RPC
//! `message`, a header, a `Location`, a body excerpt) reaches evidence only through
//! [`clean`] (control characters as visible escapes, bounded length), and with every piece
//! of a secret of the run (8 characters or more) replaced at capture, before anything reads
//! or clips it (see [`crate::credentials::scrub`]).

use serde_json::Value;

use crate::credentials::Pieces;

/// The longest `observed` text a check result carries, in characters.
pub const MAX_OBSERVED_CHARS: usize = 2000;

/// Whether `c` must not reach a terminal raw: C0/C1 controls (ESC, CR, BEL, DEL…), the
/// Unicode bidirectional overrides and isolates that reorder what a reader sees, zero-width
/// characters and marks, and the line and paragraph separators.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Zero-width characters and directional marks: unseen, they make two different
            // strings look the same.
            '\u{200b}'..='\u{200f}'
                // Line and paragraph separators: a line break a terminal or an editor honours.
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `s` with every unsafe character as a visible escape (`\u{1b}`), cut to at most `max`
/// characters (then ending in `…`). The one function target-derived text goes through.
pub fn clean(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0usize;
    for c in s.chars() {
        let piece = if unsafe_char(c) {
            format!("\\u{{{:x}}}", c as u32)
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if count + n > max {
            out.push('…');
            return out;
        }
        count += n;
        out.push_str(&piece);
    }
    out
}

/// Whether `s` begins with what an escape begins with.
fn escape_at(s: &str) -> bool {
    s.starts_with("\\u{")
}

/// `s` as a captured body string: every unsafe character as a visible escape ([`clean`]'s),
/// and the backslash of a `\u{` the target wrote itself as `\u{5c}`, so that two different
/// strings are never captured the same (`x\u{1b}` written out and `x` then ESC). Unbounded;
/// [`captured_chars`] reads it back.
fn capture(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if unsafe_char(c) || (c == '\\' && escape_at(&s[i..])) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The characters a captured body string ([`sanitize_json`]) stands for, in order: the
/// inverse of the capture's escape, so a rule can judge what the target sent (its length,
/// its characters). Never shown: evidence quotes the captured text, and names a character
/// by its code point. A `[redacted]` marker reads as its own ten characters.
pub fn captured_chars(s: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if escape_at(rest) {
            let hex = &rest[3..];
            if let Some(end) = hex.find('}').filter(|e| (1..=6).contains(e)) {
                if let Some(raw) = u32::from_str_radix(&hex[..end], 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    out.push(raw);
                    rest = &hex[end + 1..];
                    continue;
                }
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Every string in a JSON value (keys too) with every piece of a secret replaced and unsafe
/// characters escaped ([`capture`]): a parsed body as captured (a piece the raw scrub could
/// not see, spelt with JSON escapes, is seen here). No length bound here (rules compare these
/// values, and read them back with [`captured_chars`]); the evidence built from them is
/// bounded when recorded.
pub fn sanitize_json(v: &mut Value, secrets: &[&str]) {
    sanitize_json_with(v, &Pieces::new(secrets));
}

/// [`sanitize_json`] with a run's pieces gathered once
/// ([`crate::egress::EgressClient::pieces`]).
pub fn sanitize_json_with(v: &mut Value, pieces: &Pieces) {
    let dirty = |s: &str| {
        s.chars().any(unsafe_char) || s.contains("\\u{") || pieces.carried_by(s.as_bytes())
    };
    match v {
        Value::String(s) if dirty(s) => {
            *s = capture(&pieces.scrub(s));
        }
        Value::Array(items) => items.iter_mut().for_each(|i| sanitize_json_with(i, pieces)),
        Value::Object(map) => {
            if map.keys().any(|k| dirty(k)) {
                let old = std::mem::take(map);
                for (k, val) in old {
                    map.insert(capture(&pieces.scrub(&k)), val);
                }
            }
            map.values_mut().for_each(|i| sanitize_json_with(i, pieces));
        }
        _ => {}
    }
}

/// `bytes` with every piece of each secret replaced by `[redacted]`: a raw body before
/// anything decodes or clips it (see [`crate::credentials::scrub_bytes`]).
pub fn scrub_bytes(bytes: &[u8], secrets: &[&str]) -> Vec<u8> {
    crate::credentials::scrub_bytes(bytes, secrets)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn controls_become_visible_escapes_and_length_is_bounded() {
        let hostile = "a\u{1b}]8;;https://evil.example\u{7}click\u{1b}]8;;\u{7}\r\n\u{202e}x";
        let c = clean(hostile, 1000);
        assert!(!c.chars().any(unsafe_char), "{c}");
        assert!(
            c.contains("\\u{1b}]8;;https://evil.example\\u{7}click"),
            "{c}"
        );
        assert!(c.contains("\\u{d}\\u{a}\\u{202e}x"), "{c}");
        let long = clean(&"x".repeat(10_000), 50);
        assert_eq!(long.chars().count(), 51);
        assert!(long.ends_with('…'));
        // An escape is never cut in half.
        let cut = clean("ab\u{1b}", 4);
        assert_eq!(cut, "ab…");
    }

    /// Red team round 4: U+200B and U+2028 reached the text report raw.
    #[test]
    fn invisible_characters_and_line_separators_become_visible() {
        assert_eq!(
            clean("a\u{200b}b\u{2028}c\u{200f}d\u{feff}", 100),
            "a\\u{200b}b\\u{2028}c\\u{200f}d\\u{feff}"
        );
        assert_eq!(clean("plain café", 100), "plain café");
    }

    #[test]
    fn json_strings_are_scrubbed_and_cleaned_at_capture() {
        let mut v =
            json!({"error": {"message": "tok-secret-123\u{1b}[31m", "k\u{7}": ["tok-secret-123"]}});
        sanitize_json(&mut v, &["tok-secret-123"]);
        assert_eq!(v["error"]["message"], "[redacted]\\u{1b}[31m");
        assert_eq!(v["error"]["k\\u{7}"][0], "[redacted]");
        // Pieces of a token, in values and keys, also spelt with JSON escapes (which the raw
        // scrub of the body cannot see).
        let tok = "Zq7Kp2Lm9Xw4Rt8Vn3Bc6Hj1Yd5Fg0Ss";
        let body = r#"{"tools": [{"name": "a q7Kp2Lm9Xw4Rt8Vn"}, {"name": "b \u006e3Bc6Hj1Yd5Fg0Ss"}],
            "Xw4Rt8Vn3B": 1, "short": "Zq7Kp2L"}"#;
        let mut v: Value = serde_json::from_str(body).unwrap();
        sanitize_json(&mut v, &[tok]);
        assert_eq!(v["tools"][0]["name"], "a [redacted]");
        assert_eq!(v["tools"][1]["name"], "b [redacted]");
        assert_eq!(v["[redacted]"], 1);
        assert_eq!(v["short"], "Zq7Kp2L");
    }

    /// Red team round 4 #4: `x\u{1b}` written out and `x` then ESC were captured alike (and
    /// judged "listed twice"). The capture is one-to-one, and read back exactly.
    #[test]
    fn capture_tells_a_written_escape_from_a_control_and_reads_back() {
        let names = [
            "x\\u{1b}",
            "x\u{1b}",
            "a\\\u{1b}",
            "\\\\u{5c}",
            "\\u{zz}",
            "plain\\path",
            "bidi\u{202e}gnp",
            "c1\u{9b}31m",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for raw in names {
            let mut v = json!({ "name": raw });
            sanitize_json(&mut v, &[]);
            let shown = v["name"].as_str().unwrap();
            assert!(!shown.chars().any(unsafe_char), "{shown}");
            assert!(
                seen.insert(shown.to_string()),
                "{raw:?} captured as another: {shown}"
            );
            let back: String = captured_chars(shown).into_iter().collect();
            assert_eq!(back, raw, "{shown}");
        }
        let mut v = json!(["x\\u{1b}", "x\u{1b}", "no escape \\ here"]);
        sanitize_json(&mut v, &[]);
        assert_eq!(v, json!(["x\\u{5c}u{1b}", "x\\u{1b}", "no escape \\ here"]));
        assert_eq!(captured_chars("x\\u{1b}\\y"), ['x', '\u{1b}', '\\', 'y']);
    }

    #[test]
    fn raw_bytes_lose_every_occurrence() {
        let out = scrub_bytes(b"xxSECRETyySECRET", &["SECRET"]);
        assert_eq!(out, b"xx[redacted]yy[redacted]");
        assert_eq!(scrub_bytes(b"plain", &["SECRET"]), b"plain");
        // And every piece of a longer one.
        let tok = "Zq7Kp2Lm9Xw4Rt8Vn3Bc6Hj1Yd5Fg0Ss";
        let out = scrub_bytes(br#"["a q7Kp2Lm9Xw4Rt8Vn","b n3Bc6Hj1Yd5Fg0Ss"]"#, &[tok]);
        assert_eq!(out, br#"["a [redacted]","b [redacted]"]"#);
    }
}
