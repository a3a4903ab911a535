//! A mutation fuzzer for every parser that reads target-controlled bytes, on the stable
//! toolchain (an equivalent of `cargo fuzz` here): `WWW-Authenticate`, SSE framing,
//! JSON-RPC response classification and the verdicts built on it (invalid JSON included),
//! URL and `Location` handling, protected resource and authorization server metadata, the
//! egress policy's URL and address parsing, body classification and the capped readers.
//!
//! Each target runs for `VANTAGE_FUZZ_SECONDS` (default 1) from a seed corpus, with byte
//! mutations and splices, and checks invariants besides "no panic". A failing input is
//! written to `target/fuzz-crashes/<target>/` and the test fails naming it; fixed crashes
//! are kept in `tests/fuzz-regressions/<target>/` and replayed on every run.

#![allow(clippy::unwrap_used)]

mod bodies;
mod egress;
mod parsers;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Mutate `input` with bytes drawn from `dict` and random bytes.
fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>], dict: &[&[u8]]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(out.len() + 1);
                let d = dict[rng.below(dict.len())];
                out.splice(i..i, d.iter().copied());
            }
            2 if !out.is_empty() => {
                let i = rng.below(out.len());
                let j = (i + rng.below(16)).min(out.len());
                out.drain(i..j);
            }
            3 => {
                let i = rng.below(out.len() + 1);
                out.insert(i, rng.next() as u8);
            }
            4 if !out.is_empty() => {
                let i = rng.below(out.len());
                let j = (i + rng.below(32)).min(out.len());
                let chunk = out[i..j].to_vec();
                let k = rng.below(out.len() + 1);
                out.splice(k..k, chunk);
            }
            5 => {
                let other = &corpus[rng.below(corpus.len())];
                let i = rng.below(out.len() + 1);
                let j = rng.below(other.len() + 1);
                out.truncate(i);
                out.extend_from_slice(&other[j..]);
            }
            _ => out.truncate(rng.below(out.len() + 1)),
        }
    }
    out.truncate(4096);
    out
}

fn budget() -> Duration {
    let secs: f64 = std::env::var("VANTAGE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs)
}

fn regressions(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect()
}

/// Run `check` on the seeds, the kept regressions, then mutations until the budget is spent.
pub fn fuzz(target: &str, seeds: &[&[u8]], dict: &[&[u8]], check: impl Fn(&[u8])) {
    let mut corpus: Vec<Vec<u8>> = seeds.iter().map(|s| s.to_vec()).collect();
    corpus.extend(regressions(target));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ target.len() as u64);
    let deadline = Instant::now() + budget();
    let mut runs = 0u64;
    let mut i = 0;
    loop {
        let input = if i < corpus.len() {
            corpus[i].clone()
        } else {
            let base = corpus[rng.below(corpus.len())].clone();
            mutate(&mut rng, &base, &corpus, dict)
        };
        i += 1;
        runs += 1;
        if catch_unwind(AssertUnwindSafe(|| check(&input))).is_err() {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/fuzz-crashes")
                .join(target);
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("crash-{runs}"));
            let _ = std::fs::write(&path, &input);
            panic!(
                "{target}: input {:?} failed; saved to {}",
                String::from_utf8_lossy(&input),
                path.display()
            );
        }
        if i >= corpus.len() && Instant::now() > deadline {
            break;
        }
        // Keep inputs that parse differently enough to be interesting (cheap corpus growth).
        if runs % 97 == 0 && corpus.len() < 512 {
            corpus.push(input);
        }
    }
    eprintln!("fuzz {target}: {runs} inputs");
    assert!(runs > 100, "{target}: the budget allowed too few runs");
}
