//! The Prometheus text format (version 0.0.4), written directly: label values escaped,
//! values as Prometheus reads them.

use std::fmt::Write as _;

/// The text format: a family's HELP and TYPE lines go out before its first series only, so a
/// family without series is left out.
pub(super) struct Writer<'a> {
    pub(super) out: &'a mut String,
    pending: Option<(&'static str, &'static str, &'static str)>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(out: &'a mut String) -> Self {
        Writer { out, pending: None }
    }
}

impl Writer<'_> {
    /// The next family: its HELP and TYPE lines wait for its first series.
    pub(super) fn family(&mut self, name: &'static str, kind: &'static str, help: &'static str) {
        self.pending = Some((name, kind, help));
    }

    /// Whether the current family's HELP and TYPE lines still wait for a series.
    pub(super) fn header_pending(&self) -> bool {
        self.pending.is_some()
    }

    pub(super) fn series(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        if let Some((family, kind, help)) = self.pending.take() {
            let _ = writeln!(self.out, "# HELP {family} {help}");
            let _ = writeln!(self.out, "# TYPE {family} {kind}");
        }
        self.out.push_str(name);
        self.out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push_str(k);
            self.out.push_str("=\"");
            escape_into(self.out, v);
            self.out.push('"');
        }
        self.out.push_str("} ");
        write_value(self.out, value);
        self.out.push('\n');
    }
}

/// A label value as the text format wants it: backslash, double quote and line feed escaped.
fn escape_into(out: &mut String, v: &str) {
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn write_value(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else {
        let _ = write!(out, "{v}");
    }
}
