#!/usr/bin/env python3
"""Regenerate the result tables of BENCHMARKS.md and the README's headline table from the
JSON files the benchmarks write (`bash .ci/bench` runs them, then this).

    python3 .ci/bench-tables.py meta OUT_DIR        # record the machine before a run
    python3 .ci/bench-tables.py tables OUT_DIR      # rewrite the marked sections

Only the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` is rewritten; a
section whose benchmark did not run (no JSON) is left as it was, and said so.
"""

import datetime
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(out, name):
    path = os.path.join(out, f"{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def n(v, digits=0):
    """A number with thousands separators."""
    return f"{v:,.{digits}f}"


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def row(*cells):
    """One row of a Markdown table: `| a | b |`."""
    return "| " + " | ".join(cells) + " |"


def span(values, digits=0, unit=""):
    """`lo–hi`, or one value when they print the same."""
    lo, hi = f"{min(values):,.{digits}f}{unit}", f"{max(values):,.{digits}f}{unit}"
    return lo if lo == hi else f"{lo}–{hi}"


def ratio_range(values, digits=2):
    return span(values, digits, "x")


def meta(out):
    os.makedirs(out, exist_ok=True)
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/loadavg") as f:
        load1 = float(f.read().split()[0])
    info = {
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
        "cpu": model,
        "kernel": os.uname().release,
        "load_before": load1,
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.strip(),
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(info, f, indent=2)


def sec_meta(d):
    m = d["meta"]
    return (f"Recorded {m['date']} on {m['cores']} cores ({m['cpu']}, Linux {m['kernel']}), "
            f"release build of commit `{m['commit']}`; 1-minute load average {m['load_before']:.1f} "
            "when the run began (other work on the machine shows up in CPU figures, not in the "
            "ratios' method).")


def timings(d, prefix, bold=False):
    """The median and p99 cells of a timing row: `d[PREFIX + "median_ms"]`, `d[PREFIX + "p99_ms"]`."""
    median = f"{d[prefix + 'median_ms']:.2f} ms"
    return (f"**{median}**" if bold else median), f"{d[prefix + 'p99_ms']:.2f} ms"


def timing_table(rows, ratio, note):
    """A `| | median | p99 |` table of timing rows and their ratio, then a note under it."""
    return "\n".join(["| | median | p99 |", "|---|---|---|", *rows, f"| ratio | {ratio} | |", "", note])


def sec_check(d):
    c = d["check"]
    rows = [
        row(f"full single-vantage check, default listen window {c['listen_window_ms']:g} ms "
            f"({c['checks_run']} checks ran over {c['exchanges']} HTTP exchanges, counted at the "
            "fixture)", *timings(c, "", bold=True)),
    ]
    m = c.get("minimal_window")
    if m:
        rows.append(row(f"the same check with `--listen-window {m['listen_window_ms']:g}ms` (what the "
                        "work beyond the window costs)", *timings(m, "", bold=True)))
    rows.append(row("floor: one discover round trip on a fresh connection", *timings(c, "floor_")))
    goal = f"Goal: median under {c['goal_median_ms']:g} ms with the default window"
    if m:
        goal += (f", under {m['goal_median_ms']:g} ms with `--listen-window {m['listen_window_ms']:g}ms` "
                 f"(20 ms beyond the window: the listen window is waiting by design, no CPU)")
    return timing_table(rows, f"{c['ratio']:.1f}x the floor (default window)", goal + f" ({c['runs']} runs each).")


def sec_daemon(d):
    dm = d["daemon"]
    g = dm["goals"]
    rows = [
        "| targets (every) | vantage serve: exchanges, CPU-s, µs CPU per exchange | "
        "blackbox_exporter: exchanges, CPU-s, µs CPU per exchange | exchanges per CPU-second, "
        f"vantage / blackbox (goal >= {g['exchanges_per_cpu_ratio_at_least']:g}x) |",
        "|---|---|---|---|",
    ]
    for r in dm["rows"]:
        v, b = r["vantage"], r["blackbox"]
        per = lambda s: s["cpu_s"] * 1e6 / max(s["exchanges"], 1)
        rows.append(
            f"| {n(r['targets'])} ({r['interval_s']:g} s) | {n(v['exchanges'])}, {v['cpu_s']:.2f}, "
            f"{per(v):.0f} | {n(b['exchanges'])}, {b['cpu_s']:.2f}, {per(b):.0f} | "
            f"**{r['exchanges_per_cpu_ratio']:.1f}x** |")
    rows += [
        "",
        f"| targets | vantage serve peak RSS | blackbox_exporter peak RSS | vantage / blackbox "
        f"(goal <= {g['peak_rss_ratio_at_most']:g}x from {g['peak_rss_goal_from_targets']} targets) |",
        "|---|---|---|---|",
    ]
    for r in dm["rows"]:
        rows.append(f"| {n(r['targets'])} | {mib(r['vantage']['hwm_kib'])} | "
                    f"{mib(r['blackbox']['hwm_kib'])} | **{r['peak_rss_ratio']:.2f}x** |")
    loads = [x for r in dm["rows"] for x in r["load"]]
    rows += ["", f"Peers: {dm['blackbox_version']}; {dm['nginx_version']}. Rate "
             f"{dm['rate_per_s']} targets per second; load average during the rows "
             f"{min(loads):.1f}–{max(loads):.1f}."]
    return "\n".join(rows)


def sec_verdicts(d):
    rows = [
        "| targets | Vantage runs (decided pass) | full verdicts per CPU-second | exchanges per "
        "verdict | blackbox_exporter probes (one exchange each) per CPU-second |",
        "|---|---|---|---|---|",
    ]
    for r in d["daemon"]["rows"]:
        v, b = r["vantage"], r["blackbox"]
        rows.append(row(n(r["targets"]), f"{n(v['verdicts'])} ({n(v['passes'])})",
                        f"**{v['verdicts'] / max(v['cpu_s'], 0.01):.0f}**",
                        f"{v['exchanges'] / max(v['verdicts'], 1):.1f}",
                        f"{b['verdicts'] / max(b['cpu_s'], 0.01):.0f}"))
    return "\n".join(rows)


def sec_memory(d):
    m = d["memory"]
    f = m["fixed"]
    small, large = m["scheduled"]
    eight = m["eight_workers"]
    store = m["store"]
    tls = m["tls"]
    scrape = large["hwm_after_scrape_kib"] - large["hwm_before_scrape_kib"]
    per_target = m["per_target_kib"]
    rows = [
        "| where | measured | |",
        "|---|---|---|",
        f"| idle coordinator, total | **{mib(f['total_kib'])}** | no scheduled target |",
        f"| - the binary's code and read-only data (file pages) | {mib(f['binary_kib'])} | "
        "shared with every other process running the binary |",
        f"| - shared libraries | {mib(f['libraries_kib'])} | libc, libm, the loader |",
        f"| - malloc heaps (main heap and {f['arenas']} thread arenas) | "
        f"{mib(f['main_heap_kib'] + f['arenas_kib'])} | |",
        f"| - runtime threads: {f['threads']} (main, and a worker per core up to 2), stacks | "
        f"{mib(f['stacks_kib'])} | |",
        f"| per scheduled target | **{per_target:.1f} KiB** | {n(large['targets'])} targets: "
        f"{mib(large['rss_kib'])} against {mib(small['rss_kib'])} at {small['targets']} "
        "(tasks, last-run series, degraded-region state, allocator slack) |",
        f"| a scrape of {n(large['targets'])} targets ({n(large['exposition_bytes'] / 1e6, 1)} MB "
        f"of text) | **+{mib(scrape)}** at its peak | streamed in 64 KiB chunks |",
        f"| {eight['workers']} worker threads (TOKIO_WORKER_THREADS) instead of the default 2, "
        f"{n(large['targets'])} targets | {mib(eight['rss_kib'])} against {mib(large['rss_kib'])} | "
        f"{eight['memory']['threads']} threads, {eight['memory']['arenas']} malloc arenas "
        f"({mib(eight['memory']['arenas_kib'])}) |",
    ]
    one = m.get("one_arena")
    if one:
        rows.append(
            f"| glibc malloc bounded to one arena (MALLOC_ARENA_MAX=1), {n(one['targets'])} targets | "
            f"{mib(one['rss_kib'])} against {mib(large['rss_kib'])}; peak after the scrapes "
            f"{mib(one['hwm_after_scrape_kib'])} against {mib(large['hwm_after_scrape_kib'])} | "
            f"main heap {mib(one['memory']['main_heap_kib'])}, {one['memory']['arenas']} thread arenas; "
            "an option of the environment, not the default (section 2's text) |")
    rows += [
        f"| one stored on-demand report | **{store['per_report_kib']:.1f} KiB** | "
        f"{store['reports']} kept; at the default `max_reports = 1000`, up to "
        f"{mib(store['per_report_kib'] * 1000)}; scheduled runs are not stored |",
        f"| TLS client configuration (web PKI roots) | {tls['per_config_kib']:.1f} KiB, "
        f"{tls['cpu_us_per_build']:.0f} µs CPU per build | built once per process |",
    ]
    rows += ["", "At the end of the daemon benchmark's largest row, by kind of mapping "
             "(`/proc/PID/smaps`):", "",
             "| | binary | libraries | main heap | heap arenas | thread stacks | other anonymous | total |",
             "|---|---|---|---|---|---|---|---|"]
    last = d["daemon"]["rows"][-1] if d.get("daemon") else None
    if last:
        for name, s in [("vantage serve", last["vantage"]), ("blackbox_exporter", last["blackbox"])]:
            b = s["memory"]
            rows.append(row(f"{name} ({n(last['targets'])} targets)",
                            *(mib(b[k]) for k in ("binary_kib", "libraries_kib", "main_heap_kib")),
                            f"{b['arenas']}: {mib(b['arenas_kib'])}",
                            f"{b['threads']} threads: {mib(b['stacks_kib'])}",
                            mib(b["other_anon_kib"]), mib(b["total_kib"])))
    return "\n".join(rows)


def sec_fleet_overhead(d):
    fl = d["fleet"]
    rows = ["| regions | wall median | overhead median | overhead p99 |", "|---|---|---|---|"]
    for o in fl["overhead"]:
        rows.append(f"| {o['regions']} | {o['wall_median_ms']:.2f} ms | "
                    f"**{o['overhead_median_ms']:.2f} ms** | {o['overhead_p99_ms']:.2f} ms |")
    rows += ["", f"Goal: under {fl['goals']['overhead_ms_at_10_regions']:g} ms of coordinator "
             "overhead at 10 regions."]
    return "\n".join(rows)


def sec_fleet_scale(d):
    fl = d["fleet"]
    s, g = fl["scale"], fl["goals"]
    m = s["measure"]
    return "\n".join([
        "| | result | goal |",
        "|---|---|---|",
        f"| agents registered | {n(s['agents'])} in {m['register_s']:.2f} s | |",
        f"| coordinator CPU | **{m['cpu_cores']:.2f} cores** | <= {g['cores']:g} core |",
        f"| coordinator peak RSS | **{m['hwm_mib']:.1f} MiB** | <= {g['peak_mib']:g} MiB |",
        f"| memory per connected agent | {m['per_agent_kib']:.1f} KiB | |",
        f"| scheduled runs merged | {n(m['runs_per_min'])} per minute | {n(g['runs_per_min'])} |",
        f"| on-demand check, dispatch + answer + merge, p50 / p99 | {m['p50_ms']:.2f} ms / "
        f"**{m['p99_ms']:.2f} ms** | p99 < {g['p99_ms']:g} ms |",
    ])


def sec_fleet_growth(d):
    fl = d["fleet"]["scale"]
    rows = ["| row | CPU cores | peak MiB | KiB/agent | p50 ms | p99 ms | runs/min |",
            "|---|---|---|---|---|---|---|"]
    for r in fl["growth"]:
        m = r["measure"]
        rows.append(f"| {r['row']} | {m['cpu_cores']:.3f} | {m['hwm_mib']:.1f} | "
                    f"{m['per_agent_kib']:.1f} | {m['p50_ms']:.2f} | {m['p99_ms']:.2f} | "
                    f"{m['runs_per_min']:.0f} |")
    return "\n".join(rows)


def sec_listing(d):
    li = d["listing"]
    return timing_table([
        row(f"full check with listing ({li['exchanges_full']} HTTP exchanges, counted at the "
            "fixture)", *timings(li, "full_", bold=True)),
        row(f"today's check, listing off ({li['exchanges_today']} HTTP exchanges)", *timings(li, "today_")),
    ], f"**{li['ratio']:.1f}x** (+{li['full_median_ms'] - li['today_median_ms']:.1f} ms)",
        f"A {li['tools']}-tool server: {li['pages']} pages of tools, {n(li['bytes'])} bytes of "
        f"tool definitions; {li['runs']} runs of each, interleaved. No goal is set.")


def sec_headline(d):
    rows = ["| benchmark | result | goal |", "|---|---|---|"]
    c = d.get("check")
    if c:
        rows.append(
            f"| full single-vantage check of the fixture on loopback | median **{c['median_ms']:.1f} ms** "
            f"with the default {c.get('listen_window_ms', 0):g} ms listen window, p99 {c['p99_ms']:.1f} ms "
            f"({c['exchanges']} HTTP exchanges)"
            + (f"; **{c['minimal_window']['median_ms']:.1f} ms** with `--listen-window "
               f"{c['minimal_window']['listen_window_ms']:g}ms`" if c.get('minimal_window') else "")
            + f" | < {c['goal_median_ms']:g} ms"
            + (f"; < {c['minimal_window']['goal_median_ms']:g} ms" if c.get('minimal_window') else "")
            + " |")
    dm = d.get("daemon")
    if dm:
        g = dm["goals"]
        rows_all = dm["rows"]
        mem = [r for r in rows_all if r["targets"] >= g["peak_rss_goal_from_targets"]] or rows_all
        sizes = f"{n(min(r['targets'] for r in rows_all))}–{n(max(r['targets'] for r in rows_all))}"
        msizes = f"{n(min(r['targets'] for r in mem))}–{n(max(r['targets'] for r in mem))}"
        rows.append(
            f"| `vantage serve` against blackbox_exporter, the same {sizes} targets at the same rate "
            f"| **{ratio_range([r['exchanges_per_cpu_ratio'] for r in rows_all], 1)}** the HTTP "
            f"exchanges per CPU-second; peak RSS **{ratio_range([r['peak_rss_ratio'] for r in mem])}** "
            f"of blackbox_exporter's at {msizes} targets | >= {g['exchanges_per_cpu_ratio_at_least']:g}x; "
            f"<= {g['peak_rss_ratio_at_most']:g}x |")
        per_verdict = [r["vantage"]["exchanges"] / max(r["vantage"]["verdicts"], 1) for r in rows_all]
        vps = [r["vantage"]["verdicts"] / max(r["vantage"]["cpu_s"], 0.01) for r in rows_all]
        bps = [r["blackbox"]["verdicts"] / max(r["blackbox"]["cpu_s"], 0.01) for r in rows_all]
        rows.append(
            f"| one full Vantage verdict | {span(per_verdict, 1)} HTTP exchanges; "
            f"{span(vps)} verdicts per CPU-second (blackbox_exporter: "
            f"{span(bps)} one-exchange probes per CPU-second) | |")
    li = d.get("listing")
    if li:
        rows.append(
            f"| the listing of a {li['tools']}-tool server ({li['pages']} pages) against the same "
            f"check with the listing off | median **{li['full_median_ms']:.1f} ms** vs "
            f"{li['today_median_ms']:.1f} ms ({li['ratio']:.1f}x; {li['exchanges_full']} HTTP "
            f"exchanges vs {li['exchanges_today']}) | measured |")
    fl = d.get("fleet")
    if fl:
        ten = [o for o in fl["overhead"] if o["regions"] == 10]
        if ten:
            o = ten[0]
            rows.append(f"| coordinator overhead at 10 regions (real agents) | median "
                        f"**{o['overhead_median_ms']:.1f} ms**, p99 {o['overhead_p99_ms']:.1f} ms | "
                        f"< {fl['goals']['overhead_ms_at_10_regions']:g} ms |")
        m, g = fl["scale"]["measure"], fl["goals"]
        rows.append(
            f"| {n(fl['scale']['agents'])} agents, {n(g['runs_per_min'])} scheduled checks/min | "
            f"**{m['cpu_cores']:.2f} cores**, {m['hwm_mib']:.0f} MiB, {m['per_agent_kib']:.0f} KiB/agent, "
            f"p99 {m['p99_ms']:.1f} ms | {g['cores']:g} core, {g['peak_mib']:g} MiB, p99 < {g['p99_ms']:g} ms |")
    return "\n".join(rows)


SECTIONS = {
    "meta": (["meta"], sec_meta),
    "check": (["check"], sec_check),
    "daemon": (["daemon"], sec_daemon),
    "verdicts": (["daemon"], sec_verdicts),
    "memory": (["memory"], sec_memory),
    "fleet-overhead": (["fleet"], sec_fleet_overhead),
    "fleet-scale": (["fleet"], sec_fleet_scale),
    "fleet-growth": (["fleet"], sec_fleet_growth),
    "listing": (["listing"], sec_listing),
    "headline": (["check", "daemon", "fleet"], sec_headline),
}


def rewrite(path, data):
    with open(path) as f:
        text = f.read()

    def replace(m):
        name = m.group(1)
        needs, fn = SECTIONS[name]
        if any(data.get(x) is None for x in needs):
            print(f"bench-tables: {os.path.basename(path)} section {name}: no results, left as it was")
            return m.group(0)
        return f"<!-- bench:{name} -->\n{fn(data)}\n<!-- /bench:{name} -->"

    new = re.sub(r"<!-- bench:([a-z-]+) -->\n.*?<!-- /bench:\1 -->", replace, text, flags=re.S)
    if new != text:
        with open(path, "w") as f:
            f.write(new)
        print(f"bench-tables: {os.path.relpath(path, ROOT)} regenerated")


def tables(out):
    data = {name: load(out, name) for name in ["meta", "check", "daemon", "memory", "fleet", "listing"]}
    rewrite(os.path.join(ROOT, "BENCHMARKS.md"), data)
    rewrite(os.path.join(ROOT, "README.md"), data)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("meta", "tables"):
        sys.exit("usage: bench-tables.py meta|tables OUT_DIR")
    (meta if sys.argv[1] == "meta" else tables)(sys.argv[2])
