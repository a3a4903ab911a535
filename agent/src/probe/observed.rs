//! Text the target chose, made safe to show: every string a response carries (a JSON-RPC
//! `message`, a header, a `Location`, a body excerpt) reaches evidence only through
//! [`clean`] (control characters as visible escapes, bounded length), and with every secret
//! of the run replaced at capture, before anything is clipped (see
//! [`crate::credentials::scrub`]).

use serde_json::Value;

use crate::credentials::scrub;

/// The longest `observed` text a check result carries, in characters.
pub const MAX_OBSERVED_CHARS: usize = 2000;

/// Whether `c` must not reach a terminal raw: C0/C1 controls (ESC, CR, BEL, DEL…), and the
/// Unicode bidirectional overrides and isolates that reorder what a reader sees.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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

/// Every string in a JSON value (keys too) with the secrets replaced and unsafe characters
/// escaped: a parsed body as captured. No length bound here (rules compare these values);
/// the evidence built from them is bounded when recorded.
pub fn sanitize_json(v: &mut Value, secrets: &[&str]) {
    match v {
        Value::String(s) if s.chars().any(unsafe_char) || secrets.iter().any(|t| s.contains(t)) => {
            *s = clean(&scrub(s, secrets), usize::MAX);
        }
        Value::Array(items) => items.iter_mut().for_each(|i| sanitize_json(i, secrets)),
        Value::Object(map) => {
            let dirty = map
                .keys()
                .any(|k| k.chars().any(unsafe_char) || secrets.iter().any(|t| k.contains(t)));
            if dirty {
                let old = std::mem::take(map);
                for (k, val) in old {
                    map.insert(clean(&scrub(&k, secrets), usize::MAX), val);
                }
            }
            map.values_mut().for_each(|i| sanitize_json(i, secrets));
        }
        _ => {}
    }
}

/// `bytes` with every occurrence of each secret replaced by `[redacted]`: a raw body before
/// anything decodes or clips it.
pub fn scrub_bytes(bytes: &[u8], secrets: &[&str]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for s in secrets
        .iter()
        .map(|s| s.as_bytes())
        .filter(|s| !s.is_empty())
    {
        if !out.windows(s.len()).any(|w| w == s) {
            continue;
        }
        let mut next = Vec::with_capacity(out.len());
        let mut i = 0;
        while i < out.len() {
            if out[i..].starts_with(s) {
                next.extend_from_slice(b"[redacted]");
                i += s.len();
            } else {
                next.push(out[i]);
                i += 1;
            }
        }
        out = next;
    }
    out
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

    #[test]
    fn json_strings_are_scrubbed_and_cleaned_at_capture() {
        let mut v =
            json!({"error": {"message": "tok-secret-123\u{1b}[31m", "k\u{7}": ["tok-secret-123"]}});
        sanitize_json(&mut v, &["tok-secret-123"]);
        assert_eq!(v["error"]["message"], "[redacted]\\u{1b}[31m");
        assert_eq!(v["error"]["k\\u{7}"][0], "[redacted]");
    }

    #[test]
    fn raw_bytes_lose_every_occurrence() {
        let out = scrub_bytes(b"xxSECRETyySECRET", &["SECRET"]);
        assert_eq!(out, b"xx[redacted]yy[redacted]");
        assert_eq!(scrub_bytes(b"plain", &["SECRET"]), b"plain");
    }
}
