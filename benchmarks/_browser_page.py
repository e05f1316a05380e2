"""The parts of ``benchmarks/bench_browser.py`` that run inside the kernel and the page.

* :func:`answer` makes the answer shapes (prose, one code block, a table, the 96 KB mix).
* :data:`KERNEL_SETUP` is the notebook's first cell: a scripted model server with one reply
  per run, ``kandev_nb.configure``, a record of the kernel-side times (every ``MessageChunk``
  handled by the TurnView, every "append" sent), ``print_paced(name)``, the floor: the same
  text printed at the same pace into JupyterLab's own stream output, and ``replay(name)``:
  the same "append" messages sent to a widget that appends each chunk to a plain ``<pre>``.
* :data:`PAGE_PROBE` is installed in the page before anything runs: a ``PerformanceObserver``
  for ``longtask`` entries, and a wrapper around every streaming view's message handler
  (kandev's ``mount`` and the baseline's) that records, per update, the epoch time in ms,
  the text length so far and the handler's main-thread time in ms.
"""

from __future__ import annotations

import random

__all__ = ["KERNEL_SETUP", "PAGE_PROBE", "answer"]

_WORDS = (
    "the",
    "widget",
    "sends",
    "only",
    "new",
    "text",
    "while",
    "a",
    "turn",
    "streams",
    "and",
    "code",
    "blocks",
    "tables",
    "render",
    "once",
    "finished",
    "tool",
    "cards",
    "show",
    "diffs",
)


def _paragraphs(rnd: random.Random, n: int, words: int = 30) -> list[str]:
    out = []
    for i in range(n):
        ws = [rnd.choice(_WORDS) for _ in range(words)]
        ws[3] = f"**{ws[3]}**"
        ws[7] = f"`{ws[7]}()`"
        out.append(" ".join(ws).capitalize() + f" (paragraph {i}).")
    return out


def _code(functions: int, lines_each: int = 3) -> str:
    body = []
    for i in range(functions):
        body.append(f"def step_{i}(x, factor={i}):")
        body.extend(f"    x = x * factor + {j}  # update {j}" for j in range(lines_each - 2))
        body.append(f'    return {{"step": {i}, "value": x, "name": "s{i}"}}')
        body.append("")
    return "```python\n" + "\n".join(body).rstrip() + "\n```"


def _table(rows: int, rnd: random.Random) -> str:
    lines = ["| name | count | ratio | note |", "|---|---:|---:|:---|"]
    lines += [
        f"| `{rnd.choice(_WORDS)}_{i}` | {rnd.randint(1, 9999)} | {rnd.random():.3f} | **{rnd.choice(_WORDS)}** |"
        for i in range(rows)
    ]
    return "\n".join(lines)


def answer(shape: str, scale: float = 1.0) -> str:
    """The answer text of `shape`: "prose" (about 96 KB of paragraphs), "code" (one
    300-line Python block), "table" (200 rows), "mix" (about 96 KB: 300 paragraphs, a
    300-function Python code block, a 200-row table) or "prose500" (about 500 KB of
    paragraphs); `scale` shrinks the counts (quick runs)."""
    rnd = random.Random(16)
    n = lambda k: max(2, int(k * scale))
    if shape == "prose":
        return "\n\n".join(_paragraphs(rnd, n(420)))
    if shape == "prose500":
        return "\n\n".join(_paragraphs(rnd, n(2200)))
    if shape == "code":
        return "Here is the module:\n\n" + _code(n(100)) + "\n\nThat is all."
    if shape == "table":
        return "The figures:\n\n" + _table(n(200), rnd) + "\n\nThat is all."
    if shape == "mix":
        paras = _paragraphs(rnd, n(300))
        third = len(paras) // 3
        return "\n\n".join(
            [
                *paras[:third],
                "The module:",
                _code(n(300), 4),
                *paras[third : 2 * third],
                "The figures:",
                _table(n(200), rnd),
                *paras[2 * third :],
            ]
        )
    raise ValueError(f"unknown answer shape {shape!r}")


KERNEL_SETUP = r'''
import asyncio, json, tempfile, time
from pathlib import Path
import anywidget, traitlets
import kandev_nb
from kandev_nb.testing import Reply, ScriptedModelServer, scripted_env, text
from kandev_nb.notebook.widgets import stream as _stream, view as _view
from kandev_nb.agent import events as _ev

ANSWERS = json.loads(Path(__ANSWERS__).read_text())
ORDER = json.loads(__ORDER__)
_replies = [Reply(text(ANSWERS[name], chunk_size=__CHUNK__, delay=__DELAY__)) for name in ORDER]
_model = ScriptedModelServer(_replies).start()
kandev_nb.configure(env=scripted_env(_model, tempfile.mkdtemp(prefix="bench-home-")), cwd=tempfile.mkdtemp())
RUNS = {}
_current = [None]

def start_run(name):
    _current[0] = name
    RUNS[name] = {"first_chunk": None, "sends": [], "chunks": []}

_orig_handle = _view.TurnView.handle
def _handle(self, event):
    run = RUNS.get(_current[0])
    if run is not None and type(event) is _ev.MessageChunk:
        if run["first_chunk"] is None:
            run["first_chunk"] = time.time() * 1000
        run["chunks"].append((time.time() * 1000, event.text))
    return _orig_handle(self, event)
_view.TurnView.handle = _handle

_orig_send = _stream.StreamText.send
def _send(self, content, buffers=None):
    run = RUNS.get(_current[0])
    if run is not None and isinstance(content, dict) and content.get("type") == "append":
        run["sends"].append((time.time() * 1000, content["text"]))
    return _orig_send(self, content, buffers)
_stream.StreamText.send = _send

class PlainPre(anywidget.AnyWidget):
    _esm = """
    export default { render({ model, el }) {
      const pre = document.createElement("pre");
      pre.className = "bench-pre";
      el.append(pre);
      let n = 0;
      const onMsg = (msg) => {
        if (msg && msg.type === "append") { pre.append(document.createTextNode(msg.text)); n += msg.text.length; }
      };
      const probe = globalThis.__benchProbe;
      const h = probe ? probe.wrap(onMsg, () => n) : onMsg;
      model.on("msg:custom", h);
      return () => model.off("msg:custom", h);
    } };
    """

async def replay(name, into):
    """Send the "append" chunks of run `name` again, at the same intervals, to a plain <pre>."""
    from IPython.display import display
    sends = RUNS[name]["sends"]
    start_run(into)
    w = PlainPre()
    display(w)
    await asyncio.sleep(0.5)  # the view mounts
    t0, base = time.time() * 1000, sends[0][0]
    for at, chunk in sends:
        wait = (at - base) - (time.time() * 1000 - t0)
        if wait > 0:
            await asyncio.sleep(wait / 1000)
        if RUNS[into]["first_chunk"] is None:
            RUNS[into]["first_chunk"] = time.time() * 1000
        w.send({"type": "append", "text": chunk})
    await asyncio.sleep(0.3)

async def print_paced(name, into):
    """Print the answer of run `name` again, each text_delta at the time it reached the kernel,
    as a plain loop of ``print(chunk, end="")`` does: JupyterLab's own stream output (ipykernel
    batches what is printed and sends it every 0.2 s), the floor the issue measures against."""
    chunks = RUNS[name]["chunks"]
    start_run(into)
    t0, base = time.time() * 1000, chunks[0][0]
    for at, chunk in chunks:
        wait = (at - base) - (time.time() * 1000 - t0)
        if wait > 0:
            await asyncio.sleep(wait / 1000)
        if RUNS[into]["first_chunk"] is None:
            RUNS[into]["first_chunk"] = time.time() * 1000
        print(chunk, end="")

def show_finished(n, name):
    """`n` finished turns above: the static rendering of the answer `name`, as a cell keeps it."""
    from IPython.display import display
    from kandev_nb.agent.turn import Turn
    from kandev_nb.render import static
    turn = Turn(prompt=name, session_name="default")
    turn.add(_ev.MessageChunk(text=ANSWERS[name]), time.monotonic())
    bundle = static.mime_bundle(turn)
    for _ in range(n):
        display(bundle, raw=True)
'''

PAGE_PROBE = r"""
(() => {
  if (globalThis.__benchProbe) return;
  const probe = { long: [], updates: [] };
  const now = () => performance.timeOrigin + performance.now();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.long.push([performance.timeOrigin + e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
  // Long animation frames (over 50 ms): where their time went, for the diagnostics lines.
  probe.frames = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const end = e.startTime + e.duration;
        const top = [...(e.scripts || [])].sort((a, b) => b.duration - a.duration)[0];
        probe.frames.push([performance.timeOrigin + e.startTime, e.duration,
          e.styleAndLayoutStart ? end - e.styleAndLayoutStart : 0,
          (e.scripts || []).reduce((s, x) => s + x.duration, 0),
          (e.scripts || []).reduce((s, x) => s + (x.forcedStyleAndLayoutDuration || 0), 0),
          top ? `${top.invoker || ""} ${top.sourceFunctionName || ""} ${(top.sourceURL || "").split("/").pop()}` : ""]);
      }
    }).observe({ type: "long-animation-frame", buffered: true });
  } catch (e) { /* not in this browser */ }
  probe.wrap = (fn, length) => function (msg, ...rest) {
    const t0 = performance.now();
    const out = fn.call(this, msg, ...rest);
    const t1 = performance.now();
    probe.updates.push([performance.timeOrigin + t1, length(msg), t1 - t0]);
    return out;
  };
  globalThis.__benchProbe = probe;
  const textLength = (msg) => (!msg ? 0 : msg.type === "append" ? (msg.at | 0) + String(msg.text).length
    : String(msg.text || "").length);
  // kandev's views: wrap mount() as soon as the library publishes itself, so every
  // message handler is timed.
  const wrapLib = (k) => {
    if (!k || k.__benchWrapped) return k;
    const mount = k.mount;
    k.mount = (model, el) => {
      const on = model.on.bind(model);
      const wrapped = Object.create(model);
      wrapped.on = (name, fn, ctx) => on(name, name === "msg:custom" ? probe.wrap(fn, textLength) : fn, ctx);
      wrapped.off = model.off.bind(model);
      wrapped.get = model.get.bind(model);
      wrapped.send = model.send.bind(model);
      return mount(wrapped, el);
    };
    k.__benchWrapped = true;
    return k;
  };
  let lib = wrapLib(globalThis.__kandevNb);
  Object.defineProperty(globalThis, "__kandevNb", {
    configurable: true, get: () => lib, set: (k) => { lib = wrapLib(k); },
  });
  probe.now = now;
})();
"""
