"""Where a run's main-thread time goes, by cause, from a Chromium trace (``bench_browser --trace``).

Two records of the same window, taken together over CDP:

* a JavaScript CPU profile (``Profiler``, sampled every 0.25 ms): each sample's time goes to
  the first cause found walking its stack from the innermost frame out. Frames of the kandev
  client library (one minified file, ``kandev_nb/static/kandev_lib.js``) are mapped back to their source
  module with a source map that esbuild writes for the same build: marked -> Markdown parsing,
  highlight.js -> syntax highlighting, ``src/widgets/kandev_lib.ts`` -> our renderer's DOM work;
* a Chromium trace (``Tracing``, ``devtools.timeline``): style recalculation and layout, and
  paint, in ms of main-thread time (a layout a script forces is counted here and also in the
  script's samples).

:func:`split` returns ``{cause: ms}``; :func:`lib_source_map` builds the map (needs Node and
the checkout's ``node_modules``, from ``jlpm install``; without them the library's time is one cause).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from bisect import bisect_right
from pathlib import Path
from typing import Any

__all__ = ["MARKER", "Recorder", "SourceMap", "lib_source_map", "split"]

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "kandev_nb" / "static" / "kandev_lib.js"

_B64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}


def _vlq(segment: str) -> list[int]:
    out, value, shift = [], 0, 0
    for ch in segment:
        digit = _B64[ch]
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
            continue
        out.append(-(value >> 1) if value & 1 else value >> 1)
        value, shift = 0, 0
    return out


class SourceMap:
    """A version-3 source map: :meth:`source` gives the source file of a generated position."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.sources: list[str] = data["sources"]
        self.lines: list[tuple[list[int], list[int]]] = []  # per generated line: (columns, source index)
        src = 0
        for line in data["mappings"].split(";"):
            cols, idx, col = [], [], 0
            for seg in filter(None, line.split(",")):
                f = _vlq(seg)
                col += f[0]
                if len(f) > 1:
                    src += f[1]
                    cols.append(col)
                    idx.append(src)
            self.lines.append((cols, idx))

    def source(self, line: int, column: int) -> str:
        """The source file that generated position (0-based `line`, `column`) came from ("" if none)."""
        if not 0 <= line < len(self.lines):
            return ""
        cols, idx = self.lines[line]
        i = bisect_right(cols, column) - 1
        return self.sources[idx[i]] if i >= 0 else ""


def lib_source_map() -> SourceMap | None:
    """Build ``kandev_lib.js`` again with a source map (esbuild, the same options as
    ``scripts/build-widgets.mjs``); the map only if the build is byte for byte the shipped file."""
    node = shutil.which("node")
    if not node or not (ROOT / "node_modules" / "esbuild").is_dir():
        return None
    out = Path(tempfile.mkdtemp(prefix="kandev-lib-map-")) / "lib.js"
    script = (
        'import { build } from "esbuild"; await build({ entryPoints: ["src/widgets/kandev_lib.ts"], bundle: true,'
        ' minify: true, format: "esm", target: "es2020", legalComments: "eof", sourcemap: "external",'
        " outfile: process.argv[1] });"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script, str(out)], cwd=ROOT, capture_output=True, check=False
    )
    if done.returncode != 0 or not out.with_suffix(".js.map").exists():
        return None
    built = out.read_text(encoding="utf-8").rsplit("//# sourceMappingURL=", 1)[0].rstrip()
    if built != LIB.read_text(encoding="utf-8").rstrip():
        return None
    return SourceMap(json.loads(out.with_suffix(".js.map").read_text(encoding="utf-8")))


MARKER = """() => { function __benchMarker() { const t0 = performance.now(); while (performance.now() - t0 < 5) {}
  return performance.timeOrigin + t0; } return __benchMarker(); }"""
"""A function that runs 5 ms on the main thread, its name found in the profile's samples."""

_JUPYTER_SWAP = {"_insertOutput", "_setOutput", "renderHTML", "renderModel", "_createOutput"}
_JUPYTER_TOC = {"getHeadings", "getHTMLHeadings", "sanitize"}
_JUPYTER_MSG = {"_onWSMessage", "_handleIOPub", "_handle_comm_msg", "deserialize", "_handleMessage"}
_OUR_SCANS = {"scan", "markBlock", "kandevDecorateHost", "kandevDecorateChips"}


def _cause(frames: list[dict[str, Any]], lib_script: str, lib_map: SourceMap | None) -> str:
    """The cause of one sample whose stack is `frames` (innermost first)."""
    for cf in frames:
        name, sid = cf["functionName"], str(cf.get("scriptId", ""))
        if sid and sid == lib_script:
            src = lib_map.source(cf["lineNumber"], cf["columnNumber"]) if lib_map else ""
            if "highlight.js" in src:
                return "syntax highlighting (highlight.js)"
            if "marked" in src:
                return "Markdown parsing (marked)"
            return "our renderer (lib.js: DOM updates)" if lib_map else "kandev client library"
        if name in _OUR_SCANS:
            return "our page scans (hidden characters, answer actions)"
        if name in _JUPYTER_TOC:
            return "JupyterLab: sanitizer + table of contents"
        if name in _JUPYTER_SWAP:
            return "JupyterLab: output rendering (the swap)"
    for cf in frames:
        if cf["functionName"] in _JUPYTER_MSG:
            return "Jupyter messages (websocket, comm, widgets)"
    top = frames[0]["functionName"] if frames else ""
    if top == "(garbage collector)":
        return "garbage collection"
    if top in ("(program)", "(idle)", "(root)"):
        return ""
    return "other JavaScript"


def split(
    profile: dict[str, Any],
    trace: list[dict[str, Any]],
    start_epoch_ms: float,
    marker_epoch_ms: float,
    lib_script: str,
    lib_map: SourceMap | None,
) -> dict[str, float]:
    """``{cause: ms}`` of main-thread time from `start_epoch_ms` on.

    `marker_epoch_ms`: when the page ran ``__benchMarker`` (:data:`MARKER`), found among the
    profile's samples to put the profile on the epoch clock; trace events carry ``ts`` on the
    profile's clock (µs)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", ())}
    ts = float(profile["startTime"])
    mark = None
    for sid, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        ts += delta
        node = sid
        while node in nodes and mark is None:
            if nodes[node]["callFrame"]["functionName"] == "__benchMarker":
                mark = ts
            node = parent.get(node, -1)
        if mark is not None:
            break
    if mark is None:
        raise RuntimeError("the marker is not in the profile: cannot put it on the epoch clock")
    offset = marker_epoch_ms - mark / 1000
    memo: dict[int, str] = {}
    out: dict[str, float] = {}
    other: dict[str, float] = {}
    ts = float(profile["startTime"])
    for sid, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        ts += delta
        if ts / 1000 + offset < start_epoch_ms:
            continue
        if sid not in memo:
            frames, node = [], sid
            while node in nodes:
                frames.append(nodes[node]["callFrame"])
                node = parent.get(node, -1)
            memo[sid] = _cause(frames, lib_script, lib_map)
        if memo[sid]:
            out[memo[sid]] = out.get(memo[sid], 0.0) + delta / 1000
        if memo[sid] == "other JavaScript":
            cf = nodes[sid]["callFrame"]
            key = f"{cf['functionName'] or '(anonymous)'} {cf['url'].split('/')[-1][:40]}"
            other[key] = other.get(key, 0.0) + delta / 1000
    kinds = {"Layout": "style + layout", "UpdateLayoutTree": "style + layout", "Paint": "paint",
             "PrePaint": "paint", "Layerize": "paint"}  # fmt: skip
    main = _main_thread(trace)
    for e in trace:
        kind = kinds.get(e.get("name", ""))
        on_main = (e.get("pid"), e.get("tid")) == main
        if kind and e.get("ph") == "X" and on_main and e["ts"] / 1000 + offset >= start_epoch_ms:
            out[kind] = out.get(kind, 0.0) + e.get("dur", 0) / 1000
    top = sorted(other.items(), key=lambda kv: -kv[1])[:10]
    print("# other JavaScript, self ms: " + "; ".join(f"{k} {v:.0f}" for k, v in top), file=sys.stderr)
    return out


def _main_thread(trace: list[dict[str, Any]]) -> tuple[Any, Any]:
    for e in trace:
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain":
            return e["pid"], e["tid"]
    return None, None


class Recorder:
    """Records the profile and the trace of one run over a Playwright CDP session `cdp`."""

    CATEGORIES = "devtools.timeline,disabled-by-default-devtools.timeline"

    def __init__(self, cdp: Any, page: Any) -> None:
        self.cdp, self.page = cdp, page
        self.events: list[dict[str, Any]] = []
        self.complete = False
        cdp.on("Tracing.dataCollected", lambda e: self.events.extend(e["value"]))
        cdp.on("Tracing.tracingComplete", lambda e: setattr(self, "complete", True))

    def start(self) -> float:
        """Start both; returns the epoch ms at which the page ran the marker (:data:`MARKER`)."""
        self.events.clear()
        self.complete = False
        self.cdp.send("Tracing.start", {"categories": self.CATEGORIES, "transferMode": "ReportEvents"})
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 250})
        self.cdp.send("Profiler.start")
        return float(self.page.evaluate(MARKER))

    def stop(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        profile = self.cdp.send("Profiler.stop")["profile"]
        self.cdp.send("Tracing.end")
        for _ in range(600):
            if self.complete:
                break
            self.page.wait_for_timeout(50)
        return profile, list(self.events)
