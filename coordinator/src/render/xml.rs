//! Just enough XML writing for JUnit: escaped attributes and text, and nothing a parser
//! would refuse (characters XML 1.0 forbids are replaced, whatever a hostile target sent).

use std::fmt::Write;

/// Escape for an attribute value (line breaks kept as character references, which
/// attribute-value normalisation would otherwise turn into spaces); characters XML 1.0 does
/// not allow (most control characters, U+FFFE, U+FFFF) become U+FFFD.
pub fn escape(s: &str) -> String {
    escape_with(s, true)
}

/// Escape for text content: line breaks stay as they are.
pub fn escape_text(s: &str) -> String {
    escape_with(s, false)
}

fn escape_with(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' if !attribute => out.push(c),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Keep line structure in text, but as references so attributes keep it too.
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if allowed(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

fn allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// An element being written: `open` with attributes, then children, then `close`.
#[derive(Debug, Default)]
pub struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    pub fn new() -> Self {
        Writer {
            out: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".into(),
            depth: 0,
        }
    }

    fn start(&mut self, name: &str, attrs: &[(&str, String)]) {
        let _ = write!(self.out, "{}<{name}", "  ".repeat(self.depth));
        for (k, v) in attrs {
            let _ = write!(self.out, " {k}=\"{}\"", escape(v));
        }
    }

    /// `<name a="…">` and go one level down.
    pub fn open(&mut self, name: &str, attrs: &[(&str, String)]) {
        self.start(name, attrs);
        self.out.push_str(">\n");
        self.depth += 1;
    }

    /// `<name a="…"/>`.
    pub fn empty(&mut self, name: &str, attrs: &[(&str, String)]) {
        self.start(name, attrs);
        self.out.push_str("/>\n");
    }

    /// `<name a="…">text</name>`.
    pub fn text(&mut self, name: &str, attrs: &[(&str, String)], text: &str) {
        self.start(name, attrs);
        let _ = writeln!(self.out, ">{}</{name}>", escape_text(text));
    }

    pub fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        let _ = writeln!(self.out, "{}</{name}>", "  ".repeat(self.depth));
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_replaces_what_xml_forbids() {
        assert_eq!(
            escape("a<b>&\"c'\u{0}\u{1b}[31m\u{FFFE}\n"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\u{FFFD}[31m\u{FFFD}&#10;"
        );
        assert_eq!(escape_text("a\nb\t<\r"), "a\nb\t&lt;&#13;");
    }
}
