//! Where a process's resident memory is, from the kernel's map of it (`/proc/PID/smaps`).

use serde::Serialize;

/// Resident memory by kind of mapping, in KiB.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Breakdown {
    /// File pages of the executable: code and read-only data actually touched.
    pub binary_kib: u64,
    /// File pages of shared libraries (libc, libm, the loader).
    pub libraries_kib: u64,
    /// `[heap]`: malloc's main arena.
    pub main_heap_kib: u64,
    /// Heap arenas: anonymous mappings aligned to 64 MiB (glibc malloc's per-thread arenas;
    /// in a Go program, its heap arenas).
    pub arenas_kib: u64,
    pub arenas: u64,
    /// Thread stacks (anonymous mappings behind a guard page) and the main `[stack]`.
    pub stacks_kib: u64,
    pub threads: u64,
    /// Other anonymous memory: allocations large enough to be mapped on their own, and the
    /// runtime's own mappings.
    pub other_anon_kib: u64,
    /// All of it (VmRSS).
    pub total_kib: u64,
}

struct Vma {
    start: u64,
    end: u64,
    perms: String,
    path: String,
    rss: u64,
}

const ARENA_ALIGN: u64 = 64 << 20;

/// The breakdown of `pid` now.
pub fn breakdown(pid: u32) -> Breakdown {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut vmas: Vec<Vma> = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let first = f.next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(start), Ok(end)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                let perms = f.next().unwrap_or("").to_string();
                let path = f.nth(3).unwrap_or("").to_string();
                vmas.push(Vma {
                    start,
                    end,
                    perms,
                    path,
                    rss: 0,
                });
                continue;
            }
        }
        if first == "Rss:" {
            if let (Some(v), Some(kib)) = (vmas.last_mut(), f.next().and_then(|n| n.parse().ok())) {
                v.rss = kib;
            }
        }
    }
    let mut b = Breakdown::default();
    for (i, v) in vmas.iter().enumerate() {
        b.total_kib += v.rss;
        let anon = v.path.is_empty();
        let guard_below = i > 0 && {
            let p = &vmas[i - 1];
            p.path.is_empty() && p.perms.starts_with("---") && p.end == v.start
        };
        if v.path == "[heap]" {
            b.main_heap_kib += v.rss;
        } else if v.path == "[stack]" {
            b.stacks_kib += v.rss;
        } else if !anon && v.path.starts_with('[') {
            b.other_anon_kib += v.rss; // [vdso], [vvar]
        } else if !anon && v.path == exe {
            b.binary_kib += v.rss;
        } else if !anon {
            b.libraries_kib += v.rss;
        } else if v.start % ARENA_ALIGN == 0 && v.perms.starts_with("rw") {
            b.arenas_kib += v.rss;
            b.arenas += 1;
        } else if guard_below && v.perms.starts_with("rw") && v.end - v.start >= 64 << 10 {
            b.stacks_kib += v.rss;
        } else {
            b.other_anon_kib += v.rss;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    b.threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    b
}

impl Breakdown {
    /// One line for a person.
    pub fn line(&self) -> String {
        let m = |k: u64| k as f64 / 1024.0;
        format!(
            "binary {:.1} MiB, libraries {:.1}, main heap {:.1}, {} heap arenas {:.1}, {} threads' stacks {:.1}, other anonymous {:.1} (total {:.1} MiB)",
            m(self.binary_kib),
            m(self.libraries_kib),
            m(self.main_heap_kib),
            self.arenas,
            m(self.arenas_kib),
            self.threads,
            m(self.stacks_kib),
            m(self.other_anon_kib),
            m(self.total_kib)
        )
    }
}
