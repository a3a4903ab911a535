//! What goes to a terminal and nowhere else: a live progress line on standard error (the
//! elapsed time and the current stage, redrawn in place), and permanent lines printed above
//! it. On anything that is not a terminal, or with `-q`, nothing at all is written.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vantage_agent::progress::{Progress, ProgressStage};

/// Whether standard error is a terminal that can redraw a line.
pub fn stderr_is_live() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

#[derive(Debug)]
struct State {
    label: String,
    stage: String,
    started: Instant,
    /// The line is on screen and must be cleared before anything else is printed.
    drawn: bool,
    frame: usize,
    /// Finished: nothing is drawn any more.
    done: bool,
}

impl State {
    fn draw(&mut self) {
        if self.done {
            return;
        }
        const SPIN: [char; 4] = ['-', '\\', '|', '/'];
        let line = format!(
            "{} {}: {} ({:.1} s)",
            SPIN[self.frame % SPIN.len()],
            self.label,
            self.stage,
            self.started.elapsed().as_secs_f64()
        );
        self.frame += 1;
        let mut err = std::io::stderr().lock();
        // \r and "erase line": the line is redrawn in place, never scrolled.
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

/// A live progress line; inert when `enabled` is false.
#[derive(Debug, Clone)]
pub struct Live {
    state: Option<Arc<Mutex<State>>>,
}

/// Keep the line short enough for any terminal: a long URL is cut in the middle.
fn short(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max / 2).collect();
    let tail: String = s.chars().skip(n - (max - max / 2 - 1)).collect();
    format!("{head}…{tail}")
}

impl Live {
    /// Start a line `label: stage (elapsed)`, redrawn every 100 ms until [`Live::finish`].
    pub fn start(enabled: bool, label: &str, stage: &str) -> Self {
        if !enabled {
            return Live { state: None };
        }
        let state = Arc::new(Mutex::new(State {
            label: short(label, 56),
            stage: stage.to_string(),
            started: Instant::now(),
            drawn: false,
            frame: 0,
            done: false,
        }));
        lock(&state).draw();
        let weak = Arc::downgrade(&state);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(state) = weak.upgrade() else { return };
                let mut s = lock(&state);
                if s.done {
                    return;
                }
                s.draw();
            }
        });
        Live { state: Some(state) }
    }

    /// Show a new stage now (not at the next tick: every stage is seen).
    pub fn stage(&self, stage: &str) {
        if let Some(state) = &self.state {
            let mut s = lock(state);
            s.stage = stage.to_string();
            s.draw();
        }
    }

    /// Print a permanent line above the live one.
    pub fn println(&self, line: &str) {
        if let Some(state) = &self.state {
            let mut s = lock(state);
            s.clear();
            eprintln!("{line}");
            s.draw();
        }
    }

    /// Clear the line for good.
    pub fn finish(&self) {
        if let Some(state) = &self.state {
            let mut s = lock(state);
            s.clear();
            s.done = true;
        }
    }
}

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Progress for Live {
    fn stage(&self, stage: ProgressStage) {
        Live::stage(self, stage.as_str());
    }
}
