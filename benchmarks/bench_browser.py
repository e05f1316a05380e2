"""The page side of streaming (issue 16): main-thread cost in JupyterLab + headless Chromium.

Run from a clone: ``python benchmarks/bench_browser.py [--quick]``. One JupyterLab server,
one Chromium page, one kernel, one scripted model server; the real Claude Code CLI streams
each answer shape through a ``%%claude`` cell. Right after each shape, its BASELINE runs in
the same page: the same "append" messages (the same bytes, at the same intervals, recorded
in the kernel) sent to a widget that appends each chunk as a text node to a plain ``<pre>``.

Per run, from the cell's start until 3 s after it is done (for ``%%claude``: after the swap
to the static rendering):

* long tasks: ``PerformanceObserver`` ``longtask`` entries (main-thread tasks over 50 ms):
  their count, the total blocking time (TBT, the sum of each one's time over 50 ms) and the
  worst one, in ms; "swap" counts only those after the last streamed update.
* main-thread time: Chromium's own ``TaskDuration`` metric (CDP ``Performance``), in ms.
* per update: the main-thread time of each streaming view's message handler (ms; median,
  worst) and its slope against the answer's length so far (ms per 100 KB, least squares:
  flat rendering has a slope near 0).
* first token: ms from the kernel's TurnView handling the first ``MessageChunk`` (baseline:
  sending the first chunk) to the page's handler having put it in the DOM (both epoch clocks
  of this machine).

A warm-up turn runs first (the client library loads once per kernel). Then the running turn
with N finished long turns (the mix's static rendering, as N outputs of one cell) above it,
in the same page, against the same turn with none (ratios); a trivial cell runs between
them, because JupyterLab scans a cell's new HTML outputs for headings once (its table of
contents), on the next change of the notebook. Diagnostics: the three longest animation
frames (``long-animation-frame``) of each run with their style+layout and script time, and
with ``--profile RUN,...`` a JavaScript CPU profile of those runs (inclusive ms, stderr).
Nothing is asserted; the mix's figures and their targets (TBT, worst task, first token,
slope) are printed on one ``targets, ...`` line, then, last, the headline ratios
(kandev / plain ``<pre>``, same run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, headline, use_this_clone

use_this_clone()
sys.path.insert(0, str(ROOT))

from _browser_page import KERNEL_SETUP, PAGE_PROBE, answer

SHAPES = ("prose", "code", "table", "mix", "prose500")


@dataclass
class Run:
    """What one run showed on the page (times in ms)."""

    name: str
    start: float
    end: float
    long: list[tuple[float, float]] = field(default_factory=list)  # (epoch ms, duration ms)
    updates: list[tuple[float, int, float]] = field(default_factory=list)  # (epoch ms, chars, ms)
    task_ms: float = 0.0
    first_token_ms: float = math.nan
    frames: list[tuple[Any, ...]] = field(default_factory=list)  # long animation frames

    @property
    def tbt(self) -> float:
        return sum(max(0.0, d - 50) for _, d in self.long)

    @property
    def worst(self) -> float:
        return max((d for _, d in self.long), default=0.0)

    def swap(self) -> list[tuple[float, float]]:
        last = max((t for t, _, _ in self.updates), default=self.end)
        return [(t, d) for t, d in self.long if t + d > last]

    def slope(self) -> float:
        """Per-update handler ms per 100 KB of answer so far: the least-squares line through
        the medians of five equal-count bins of updates by length (robust to the odd spike)."""
        pts = sorted((n / 100_000, ms) for _, n, ms in self.updates)
        if len(pts) < 10:
            return math.nan
        k = len(pts) // 5
        bins = [pts[i * k : (i + 1) * k] for i in range(5)]
        xs = [statistics.median(x for x, _ in b) for b in bins]
        ys = [statistics.median(y for _, y in b) for b in bins]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        var = sum((x - mx) ** 2 for x in xs)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else math.nan


def _run_cell(page: Any, index: int) -> None:
    page.evaluate(
        """i => { const p = window.jupyterapp.shell.currentWidget; p.content.activeCellIndex = i;
        p.content.deselectAll(); window.jupyterapp.commands.execute('notebook:run-cell'); }""",
        index,
    )


def _metric(cdp: Any, name: str) -> float:
    for m in cdp.send("Performance.getMetrics")["metrics"]:
        if m["name"] == name:
            return float(m["value"])
    return math.nan


PROFILE: set[str] = set()
"""Runs to record a JavaScript CPU profile of (``--profile``), summarised on stderr."""


def _frame_key(cf: dict[str, Any]) -> str:
    return f"{cf['functionName'] or '(anon)'} {cf['url'].split('/')[-1][:30]}:{cf['lineNumber']}:{cf['columnNumber']}"


def _profile_summary(
    profile: dict[str, Any],
    name: str,
    long: list[tuple[float, float]] | None = None,
    marker_epoch_ms: float = math.nan,
    run_start: float = 0.0,
) -> None:
    """On stderr: the profile's top functions (inclusive ms), then, per long task of the
    run, the functions its samples spent most time in (inclusive ms, at most 12).

    The profile's clock is mapped to the epoch with a marker: a function named
    ``__benchMarker`` run at a known epoch time right after the profiler started."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", ())}

    def stack(sid: int) -> list[str]:
        out, node = [], sid
        while node in nodes:
            out.append(_frame_key(nodes[node]["callFrame"]))
            node = parent.get(node, -1)
        return out

    def top(samples: list[tuple[int, float]], n: int) -> list[tuple[str, float]]:
        total: dict[str, float] = {}
        for sid, ms in samples:
            for key in dict.fromkeys(stack(sid)):
                total[key] = total.get(key, 0.0) + ms
        return sorted(total.items(), key=lambda kv: -kv[1])[:n]

    ts, samples = float(profile["startTime"]), []  # (sample node id, ms, timestamp in µs)
    for sid, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        ts += delta
        samples.append((sid, delta / 1000, ts))
    print(f"# profile {name}: inclusive ms", file=sys.stderr)
    for key, ms in top([(sid, ms) for sid, ms, _ in samples], 45):
        print(f"#   {ms:8.1f}  {key}", file=sys.stderr)
    mark = next((t for sid, _, t in samples if any(k.startswith("__benchMarker") for k in stack(sid))), None)
    if mark is None or not math.isfinite(marker_epoch_ms):
        return
    offset = marker_epoch_ms - mark / 1000  # epoch ms = profile µs / 1000 + offset
    for start, dur in long or []:
        inside = [(sid, ms) for sid, ms, t in samples if start <= t / 1000 + offset <= start + dur]
        print(
            f"# profile {name}: long task at +{(start - run_start) / 1000:.2f} s ({dur:.0f} ms), its samples:",
            file=sys.stderr,
        )
        for key, ms in top(inside, 12):
            if not key.startswith(("(root)", "(idle)")):
                print(f"#   {ms:8.1f}  {key}", file=sys.stderr)


_CELL_DONE = (
    """i => /\\[\\d+\\]/.test(window.jupyterapp.shell.currentWidget.content.widgets[i].promptNode.textContent)"""
)

_MARKER = """() => { function __benchMarker() { const t0 = performance.now(); while (performance.now() - t0 < 5) {}
  return performance.timeOrigin + t0; } return __benchMarker(); }"""


def measure(page: Any, cdp: Any, lab_page: Any, index: int, name: str) -> Run:
    """Run cell `index` (run `name`), wait until it is done and 3 s more, collect the figures."""
    if name in PROFILE:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        cdp.send("Profiler.start")
    marker = page.evaluate(_MARKER) if name in PROFILE else math.nan
    lab_page.cell(page, index).scroll_into_view_if_needed()
    page.evaluate(
        "() => { const p = globalThis.__benchProbe; p.long.length = 0; p.updates.length = 0; p.frames.length = 0; }"
    )
    if name.endswith("/lab"):
        page.evaluate(_WATCH_FIRST, index)
    t_task = _metric(cdp, "TaskDuration")
    start = page.evaluate("() => performance.timeOrigin + performance.now()")
    _run_cell(page, index)
    # Not lab_page.wait_cell_done: its locators (":visible") force a layout of the whole
    # page, a long task of the benchmark's own with 50 long outputs above.
    page.wait_for_function(_CELL_DONE, arg=index, timeout=600_000)
    end = page.evaluate("() => performance.timeOrigin + performance.now()")
    page.wait_for_timeout(3000)
    got = page.evaluate(
        "() => { const p = globalThis.__benchProbe; return {long: p.long, updates: p.updates, frames: p.frames}; }"
    )
    run = Run(
        name, start, end, [(t, d) for t, d in got["long"] if t >= start], [(t, n, ms) for t, n, ms in got["updates"]]
    )
    run.task_ms = (_metric(cdp, "TaskDuration") - t_task) * 1000
    run.frames = [tuple(f) for f in got["frames"] if f[0] >= start]
    if name in PROFILE:
        _profile_summary(cdp.send("Profiler.stop")["profile"], name, run.long, marker, run.start)
    return run


def _kernel_runs(page: Any, lab_page: Any, probe_index: int) -> dict[str, Any]:
    """RUNS from the kernel (the first chunk's time per run), read through a cell's output."""
    _run_cell(page, probe_index)
    lab_page.wait_cell_done(page, probe_index)
    text = lab_page.cell(page, probe_index).locator(".jp-OutputArea-output").last.inner_text()
    return dict(json.loads(text))


def fmt(x: float, digits: int = 0) -> str:
    return "nan" if not math.isfinite(x) else f"{x:,.{digits}f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 and math.isfinite(a) else "n/a (baseline 0)"


_WATCH_FIRST = """i => { const c = window.jupyterapp.shell.currentWidget.content.widgets[i];
  const area = c.node.querySelector('.jp-Cell-outputArea'); c.node.__benchFirst = NaN;
  const o = new MutationObserver(() => { if (area.textContent) {
    c.node.__benchFirst = performance.timeOrigin + performance.now(); o.disconnect(); } });
  o.observe(area, { childList: true, subtree: true, characterData: true }); }"""
"""The floor has no message handler of ours to time: a one-shot observer on its own output
area notes when its first text is in the DOM."""


def _lab_first_token(page: Any, index: int) -> float:
    """Epoch ms when cell `index`'s stream output first showed text (:data:`_WATCH_FIRST`)."""
    return float(
        page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].node.__benchFirst", index)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_browser.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the mix at 40%% size, once, 3 turns above")
    parser.add_argument("--shapes", default=None, help=f"comma-separated, from {','.join(SHAPES)} (default: mix)")
    parser.add_argument("--repeat", type=int, default=None, help="runs of each comparison (default 3; quick 1)")
    parser.add_argument("--above", type=int, default=None, help="finished long turns above (default 50; quick 3)")
    parser.add_argument("--chunk", type=int, default=40, help="characters per text_delta (default 40)")
    parser.add_argument("--delay", type=float, default=0.005, help="seconds between deltas (default 0.005)")
    parser.add_argument("--profile", default="", help="comma-separated runs to profile (diagnostics on stderr)")
    parser.add_argument("--trace", action="store_true", help="split the first comparison's time by cause")
    args = parser.parse_args(argv)
    PROFILE.update(filter(None, args.profile.split(",")))
    shapes = args.shapes.split(",") if args.shapes else ["mix"]
    scale = 0.4 if args.quick else 1.0
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    above = args.above if args.above is not None else (3 if args.quick else 50)

    from playwright.sync_api import sync_playwright

    from tests.browser import lab_page
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_lab

    tmp = Path(tempfile.mkdtemp(prefix="kandev-bench-browser-"))
    plan = [shape if r == 0 else f"{shape}#{r + 1}" for r in range(repeat) for shape in shapes]
    answers = {name: answer(name.split("#")[0], scale) for name in plan}
    order = ["warm", *plan, "again"]
    answers["warm"] = "A short **warm-up** answer.\n\n```python\nx = 1\n```\n\n| a |\n|---|\n| 1 |\n"
    answers["again"] = answers[shapes[0]]
    (tmp / "answers.json").write_text(json.dumps(answers))
    setup = (
        KERNEL_SETUP.replace("__ANSWERS__", repr(str(tmp / "answers.json")))
        .replace("__ORDER__", repr(json.dumps(order)))
        .replace("__CHUNK__", str(args.chunk))
        .replace("__DELAY__", str(args.delay))
    )
    cells = [setup, "%load_ext kandev_nb", "%%claude\nwarm up"]
    index: dict[str, int] = {}
    for name in plan:
        index[name] = len(cells)
        cells.append(f"start_run({name!r})")
        cells.append(f"%%claude\nanswer {name}")
        index[name + "/lab"] = len(cells)
        cells.append(f"await print_paced({name!r}, {name + '/lab'!r})")
    index["above"] = len(cells)
    cells.append(f"show_finished({above}, {order[-1]!r})")
    cells.append("pass  # JupyterLab scans the new outputs for headings once, here, not in the next run")
    index["again"] = len(cells)
    cells.append("start_run('again')")
    cells.append("%%claude\nanswer again")
    probe = len(cells)
    cells.append("print(json.dumps({k: {'first_chunk': v['first_chunk']} for k, v in RUNS.items()}))")
    extra = {} if os.environ.get("PYTHONPATH") else {"PYTHONPATH": str(ROOT)}
    lab = start_lab(tmp / "lab", tmp / "ledger.sqlite", extra)
    runs: dict[str, Run] = {}
    causes: dict[str, dict[str, float]] = {}
    try:
        lab_page.write_notebook(lab.root / "bench.ipynb", *cells)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.add_init_script(PAGE_PROBE)
            lab_page.open_notebook(page, lab.notebook_url("bench.ipynb"))
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            for i in (0, 1, 2):  # setup, the extension, a warm-up turn (the library loads)
                _run_cell(page, i)
                lab_page.wait_cell_done(page, i)
            tracer = _Tracer(cdp, page) if args.trace else None
            for name in plan:
                _run_cell(page, index[name])
                lab_page.wait_cell_done(page, index[name])
                for run_name, cell in ((name, index[name] + 1), (name + "/lab", index[name + "/lab"])):
                    traced = tracer is not None and name == plan[0]
                    marker = tracer.start() if traced else math.nan
                    runs[run_name] = measure(page, cdp, lab_page, cell, run_name)
                    if traced:
                        causes[run_name] = tracer.stop(runs[run_name].start, marker)
                    if run_name.endswith("/lab"):
                        first = _lab_first_token(page, cell)
                        runs[run_name].updates = []
                        runs[run_name].first_token_ms = first
            for i in (index["above"], index["above"] + 1):
                _run_cell(page, i)
                lab_page.wait_cell_done(page, i, timeout_ms=600_000)
                page.wait_for_timeout(3000)
            _run_cell(page, index["again"])
            lab_page.wait_cell_done(page, index["again"])
            runs["again"] = measure(page, cdp, lab_page, index["again"] + 1, "again")
            firsts = _kernel_runs(page, lab_page, probe)
            for name, run in runs.items():
                first = (firsts.get(name) or {}).get("first_chunk")
                seen = run.updates[0][0] if run.updates else run.first_token_ms
                run.first_token_ms = max(seen - first, 0.01) if first and math.isfinite(seen) else math.nan
            browser.close()
    finally:
        lab.stop()
    report(runs, shapes, plan, above, answers)
    if causes:
        report_causes(causes)
    return 0


class _Tracer:
    """``--trace``: the profile and trace of a run, split by cause (:mod:`_trace_split`)."""

    def __init__(self, cdp: Any, page: Any) -> None:
        from _trace_split import Recorder, lib_source_map

        self.page = page
        self.recorder = Recorder(cdp, page)
        self.lib_map = lib_source_map()
        if self.lib_map is None:
            print("# --trace: no source map for kandev_lib.js (Node, node_modules): one cause", file=sys.stderr)
        self.cdp = cdp

    def start(self) -> float:
        return self.recorder.start()

    def stop(self, start_epoch_ms: float, marker_epoch_ms: float) -> dict[str, float]:
        from _trace_split import split

        profile, trace = self.recorder.stop()
        lib = self.cdp.send("Runtime.evaluate", {"expression": "globalThis.__kandevNb.renderMarkdown"})["result"]
        props = self.cdp.send("Runtime.getProperties", {"objectId": lib["objectId"], "ownProperties": True})
        where = next(
            (p["value"]["value"] for p in props.get("internalProperties", []) if p["name"] == "[[FunctionLocation]]"),
            {},
        )
        return split(profile, trace, start_epoch_ms, marker_epoch_ms, str(where.get("scriptId", "")), self.lib_map)


def report_causes(causes: dict[str, dict[str, float]]) -> None:
    """The ``--trace`` table: main-thread ms by cause, one column per traced run."""
    names = list(causes)
    keys = sorted({k for c in causes.values() for k in c}, key=lambda k: -max(c.get(k, 0.0) for c in causes.values()))
    print()
    print(f"{'where the time goes (ms, main thread)':<52}" + "".join(f"{n[:18]:>20}" for n in names))
    for key in keys:
        print(f"  {key:<50}" + "".join(f"{fmt(causes[n].get(key, 0.0)):>20}" for n in names))


def targets_line(name: str, ours: list[Run], floor: list[Run], kb: int) -> str:
    """The issue's figures for shape `name` on one line (ms): the median TBT of our runs and of
    the floor's (JupyterLab's stream output), their difference, and the worst task of each."""
    a, b = statistics.median(r.tbt for r in ours), statistics.median(r.tbt for r in floor)
    worst_a, worst_b = max(r.worst for r in ours), max(r.worst for r in floor)
    return (
        f"targets, {name} ({kb} KB, {len(ours)} runs, the swap included): median TBT {fmt(a)} ms, "
        f"JupyterLab's stream output {fmt(b)} ms, difference {fmt(a - b)} ms (<= 100); "
        f"worst task {fmt(worst_a)} ms (<= {fmt(max(100.0, worst_b))}: 100 or the floor's worst {fmt(worst_b)}); "
        f"first token {fmt(statistics.median(r.first_token_ms for r in ours), 1)} ms "
        f"(floor {fmt(statistics.median(r.first_token_ms for r in floor), 1)} ms)"
    )


def _label(name: str, answers: dict[str, str]) -> str:
    base = name.split("/")[0]
    side = "JupyterLab stream" if name.endswith("/lab") else "%%claude"
    return f"{base}: {side} ({len(answers.get(base, '')) // 1000} KB)"


def report(runs: dict[str, Run], shapes: list[str], plan: list[str], above: int, answers: dict[str, str]) -> None:
    cols = ("long", "TBT ms", "worst ms", "swap worst", "main ms", "upd med", "upd max", "slope/100KB", "1st token")
    print(f"{'run':<32}" + "".join(f"{c:>12}" for c in cols))
    for name, run in runs.items():
        floor = name.endswith("/lab")
        ups = [ms for _, _, ms in run.updates] or [math.nan]
        vals = (
            str(len(run.long)),
            fmt(run.tbt),
            fmt(run.worst),
            "-" if floor else fmt(max((d for _, d in run.swap()), default=0.0)),
            fmt(run.task_ms),
            "-" if floor else fmt(statistics.median(ups), 2),
            "-" if floor else fmt(max(ups), 2),
            "-" if floor else fmt(run.slope(), 2),
            fmt(run.first_token_ms, 1),
        )
        print(f"{_label(name, answers):<32}" + "".join(f"{v:>12}" for v in vals))
    print()
    print(
        "diagnostics: the 3 longest animation frames of each run (ms: frame, style+layout at its end, "
        "scripts, forced layout in scripts; the longest script)"
    )
    for name, run in runs.items():
        for t, dur, layout, scripts, forced, top in sorted(run.frames, key=lambda f: -f[1])[:3]:
            print(
                f"  frame {name}: +{(t - run.start) / 1000:.1f} s {dur:.0f} / {layout:.0f} / {scripts:.0f} / "
                f"{forced:.0f}  {top.strip()[:70]}"
            )
    print()
    print("against JupyterLab's own stream output of the same text at the same pace (same page, same run):")
    for shape in shapes:
        ours = [runs[n] for n in plan if n.split("#")[0] == shape]
        floor = [runs[n + "/lab"] for n in plan if n.split("#")[0] == shape]
        ta, tb = statistics.median(r.tbt for r in ours), statistics.median(r.tbt for r in floor)
        ma, mb = statistics.median(r.task_ms for r in ours), statistics.median(r.task_ms for r in floor)
        print(
            f"  {shape}: median TBT {fmt(ta)} vs {fmt(tb)} ms ({ratio(ta, tb)}), "
            f"worst task {fmt(max(r.worst for r in ours))} vs {fmt(max(r.worst for r in floor))} ms, "
            f"median main-thread {fmt(ma)} vs {fmt(mb)} ms ({ratio(ma, mb)})"
        )
    again, base = runs["again"], runs[shapes[0]]
    print(
        f"with {above} finished turns above: main-thread {ratio(again.task_ms, base.task_ms)}, "
        f"TBT {fmt(again.tbt)} ms (none above: {fmt(base.tbt)} ms), "
        f"per update median {fmt(statistics.median([m for *_, m in again.updates] or [math.nan]), 2)} ms"
    )
    print()
    key = shapes[0]
    ours = [runs[n] for n in plan if n.split("#")[0] == key]
    floor = [runs[n + "/lab"] for n in plan if n.split("#")[0] == key]
    print(targets_line(key, ours, floor, len(answers.get(key, "")) // 1000))
    ma, mb = statistics.median(r.task_ms for r in ours), statistics.median(r.task_ms for r in floor)
    headline(f"main-thread time, {key}", ma / mb if mb else math.nan, "JupyterLab's stream output")
    headline(
        f"main-thread time with {above} finished turns above",
        again.task_ms / base.task_ms if base.task_ms else math.nan,
        "none above",
    )


if __name__ == "__main__":
    t0 = time.monotonic()
    code = main()
    print(f"# {time.monotonic() - t0:.0f} s", file=sys.stderr)
    sys.exit(code)
