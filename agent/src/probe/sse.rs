//! A small SSE (text/event-stream) parser with a line-size cap, fed chunk by chunk.
//! Framing follows the WHATWG HTML event-stream rules: lines end in CRLF, LF or CR; an
//! empty line dispatches the event; lines starting with `:` are comments.

use serde_json::Value;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: String,
    /// `data` parsed as JSON, when it is JSON.
    pub json: Option<Value>,
}

/// Incremental parser. `feed` returns the events completed by a chunk.
#[derive(Debug)]
pub struct SseParser {
    line: Vec<u8>,
    line_cap: usize,
    after_cr: bool,
    event: Option<String>,
    id: Option<String>,
    data: Option<String>,
}

impl SseParser {
    pub fn new(line_cap: usize) -> Self {
        SseParser {
            line: Vec::new(),
            line_cap,
            after_cr: false,
            event: None,
            id: None,
            data: None,
        }
    }

    /// Feed bytes. Errors with the name of the cap when a line grows past it.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, &'static str> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(ev) = self.line(&line) {
                        out.push(ev);
                    }
                }
                _ => {
                    if self.line.len() >= self.line_cap {
                        return Err("SSE line size");
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(out)
    }

    /// The stream ended: an event without its closing blank line is discarded, as browsers do.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        Vec::new()
    }

    fn line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        if raw.is_empty() {
            let data = self.data.take()?;
            let json = serde_json::from_str(&data).ok();
            return Some(SseEvent {
                event: self.event.take(),
                id: self.id.take(),
                data,
                json,
            });
        }
        if raw[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(raw);
        let (field, value) = match text.find(':') {
            Some(i) => {
                let v = &text[i + 1..];
                (&text[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&text[..], ""),
        };
        match field {
            "data" => {
                let data = self.data.get_or_insert_with(String::new);
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(value);
            }
            "event" => self.event = Some(value.to_string()),
            "id" => self.id = Some(value.to_string()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8], chunk: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new(1024);
        input
            .chunks(chunk)
            .flat_map(|c| p.feed(c).unwrap())
            .collect()
    }

    #[test]
    fn events_survive_any_chunking_and_any_line_ending() {
        let input =
            b"event: message\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata: x\rdata: y\r\r";
        for chunk in 1..input.len() {
            let events = parse_all(input, chunk);
            assert_eq!(events.len(), 2, "chunk size {chunk}");
            assert_eq!(events[0].event.as_deref(), Some("message"));
            assert_eq!(events[0].json, Some(serde_json::json!({"a": 1})));
            assert_eq!(events[1].data, "x\ny");
            assert_eq!(events[1].json, None);
        }
    }

    #[test]
    fn an_overlong_line_hits_the_cap() {
        let mut p = SseParser::new(8);
        assert_eq!(p.feed(b"data: 0123456789"), Err("SSE line size"));
    }

    #[test]
    fn comment_only_streams_dispatch_nothing() {
        assert!(parse_all(b": ping\n\n: ping\n\n", 3).is_empty());
    }

    #[test]
    fn an_unterminated_event_is_dropped() {
        let mut p = SseParser::new(64);
        assert!(p.feed(b"data: {}\n").unwrap().is_empty());
        assert!(p.finish().is_empty());
    }
}
