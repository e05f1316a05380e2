"""The simulated part of ``benchmarks/bench_ui.py``: streaming on a simulated clock, the
final rendering, large tool outputs and memory of finished views (no CLI needed)."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.notebook.widgets.recording import record_comms
from kandev_nb.render import html as r

__all__ = ["Clock", "Result", "deltas", "markdown_text", "max_in_window", "stable_end"]


# -- inputs -------------------------------------------------------------------------------


def markdown_text(size: int, seed: int = 1) -> str:
    """About `size` characters of agent-like Markdown: paragraphs, lists, code, tables."""
    rnd = random.Random(seed)
    words = (
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
    parts: list[str] = []
    n = 0
    while n < size:
        kind = rnd.random()
        if kind < 0.55:
            block = " ".join(rnd.choice(words) for _ in range(rnd.randint(25, 70))).capitalize() + "."
        elif kind < 0.7:
            block = "\n".join(
                f"- **{rnd.choice(words)}**: " + " ".join(rnd.choice(words) for _ in range(8))
                for _ in range(rnd.randint(3, 6))
            )
        elif kind < 0.9:
            body = "\n".join(
                f"    x{i} = compute({i}, '{rnd.choice(words)}')  # step {i}" for i in range(rnd.randint(5, 25))
            )
            block = f"```python\ndef f():\n{body}\n    return x0\n```"
        else:
            rows = "\n".join(
                f"| {rnd.choice(words)} | {rnd.randint(1, 999)} | {rnd.random():.3f} |"
                for _ in range(rnd.randint(3, 8))
            )
            block = "| name | count | ratio |\n|---|---:|---:|\n" + rows
        parts.append(block)
        n += len(block) + 2
    return "\n\n".join(parts)[:size]


def deltas(text: str, n: int) -> list[str]:
    """`text` cut into `n` pieces of nearly equal length."""
    step = len(text) / n
    return [text[int(i * step) : int((i + 1) * step)] for i in range(n)]


_FENCE = ("```", "~~~")


def stable_end(text: str, start: int) -> int:
    """Python port of the client's ``stableEnd`` (js/src/lib.js), for the paragraphs variant."""
    pos, best, fence, prev_blank = start, start, "", False
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return best
        line = text[pos:nl]
        stripped = line.strip()
        opener = next(
            (f for f in _FENCE if line.lstrip(" ").startswith(f) and len(line) - len(line.lstrip(" ")) < 4), ""
        )
        if fence:
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
            prev_blank = False
        elif opener:
            if prev_blank:
                best = pos
            fence, prev_blank = opener, False
        elif not stripped:
            prev_blank = True
        else:
            if prev_blank and not line.startswith(("    ", "\t", "- ", "* ", "+ ")) and not line[:1].isdigit():
                best = pos
            prev_blank = False
        pos = nl + 1


# -- the three ways to stream ---------------------------------------------------------------


class Clock:
    """A settable clock in seconds (simulated time)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Result:
    """One measured case."""

    bytes: int
    messages: int
    updates: int
    text_bytes: int
    seconds: float
    deltas: int
    wire: int
    max_1s: int = 0  # most text updates inside any 1 s of (simulated) time while streaming
    max_1s_all: int = 0  # the same, counting the flush at the end of the turn

    @property
    def per_byte(self) -> float:
        return self.bytes / max(self.text_bytes, 1)

    @property
    def wire_per_byte(self) -> float:
        return self.wire / max(self.text_bytes, 1)

    @property
    def per_second(self) -> float:
        return self.updates / self.seconds if self.seconds else float("nan")

    @property
    def per_delta(self) -> float:
        return self.updates / max(self.deltas, 1)


def _envelope_bytes() -> int:
    """Bytes a Jupyter comm_msg adds around its payload (jupyter_client Session, HMAC-signed)."""
    try:
        from jupyter_client.session import Session
    except ImportError:  # pragma: no cover
        from kandev_nb.notebook.widgets.recording import ENVELOPE_BYTES

        return ENVELOPE_BYTES
    s = Session(key=b"k" * 32, username="kernel")
    parent = s.msg("execute_request", content={})
    content = {"comm_id": "0" * 32, "data": {}}
    frames = s.serialize(s.msg("comm_msg", content=content, parent=parent))
    return sum(len(f) for f in frames) - len(json.dumps(content).encode())


ENVELOPE = 0  # bytes of a Jupyter comm_msg envelope; set by bench_ui.main()


def _stream(kind: str, pieces: list[str], seconds: float, interval_s: float = 0.05) -> Result:
    from kandev_nb.notebook.widgets import TurnView
    from kandev_nb.notebook.widgets.stream import kandev_lib

    kandev_lib()  # once per kernel: not part of any turn
    clock = Clock()
    dt = seconds / max(len(pieces), 1)
    text = "".join(pieces)
    with record_comms() as rec:
        times: list[float] = []
        add = rec._add

        def note(m: Any) -> None:  # the (simulated) time of every text update
            text_update = m.kind == "msg" and (
                (kind != "append" and m.method == "update") or m.data.get("content", {}).get("type") == "append"
            )
            if text_update and (kind == "append" or not times or times[-1] != clock.now):  # hold_sync: one update
                times.append(clock.now)
            add(m)

        rec._add = note  # type: ignore[method-assign,assignment]
        if kind == "append":
            view = TurnView("bench", clock=clock, interval_s=interval_s, tick_s=0)
            for p in pieces:
                clock.now += dt
                view.handle(ev.MessageChunk(text=p))
            streamed = len(times)
            view.handle(ev.Complete(stats=ev.TurnStats()))  # flushes the rest at once
            updates = view.text_updates
            assert "".join(s.text for s in view.segments) == text
            view.close()
        elif kind == "paragraphs":
            mark = [0]
            updates = _paragraphs(pieces, clock, dt, interval_s, lambda: mark.__setitem__(0, len(times)))
            streamed = mark[0]
        else:
            html = w.HTML()
            for p in pieces:
                clock.now += dt
                html.value = r.markdown_html(html.description + p)  # description holds the raw text
                html.description = html.description + p
            updates = len(pieces)
            streamed = len(times)
            html.close()
        msgs = rec.count()
        return Result(
            rec.total_bytes(),
            msgs,
            updates,
            len(text.encode()),
            seconds,
            len(pieces),
            rec.total_bytes() + ENVELOPE * msgs,
            max_in_window(times[:streamed]),
            max_in_window(times),
        )


def _paragraphs(pieces: list[str], clock: Clock, dt: float, interval_s: float, at_end: Callable[[], None]) -> int:
    """Stock widgets: frozen block HTML widgets + one tail HTML re-sent at most every interval."""
    from kandev_nb.notebook.widgets.cards import WidgetFactory
    from kandev_nb.notebook.widgets.stream import Throttle

    f = WidgetFactory()
    tail = f.html("")
    box = f.vbox((tail,))
    st = _ParaState()

    def flush() -> bool:
        if len(st.text) == st.shown:
            return False
        end = stable_end(st.text, st.frozen)
        with box.hold_sync():
            if end > st.frozen:
                block = f.html(r.markdown_html(st.text[st.frozen : end]))
                box.children = (*box.children[:-1], block, tail)
                st.frozen = end
            tail.value = r.markdown_html(st.text[st.frozen :])
        st.shown = len(st.text)
        st.updates += 1
        return True

    throttle = Throttle(flush, interval_s, clock=clock)  # the same coalescing as the shipped widget
    for p in pieces:
        clock.now += dt
        st.text += p
        throttle.poke(len(st.text) - st.shown)
    at_end()
    throttle.flush_now()
    f.close_all()
    return st.updates


@dataclass
class _ParaState:
    text: str = ""
    frozen: int = 0
    shown: int = 0
    updates: int = 0


# -- large outputs, memory, real CLI -------------------------------------------------------


def _big_output(kind: str, size: int) -> tuple[int, int, int]:
    from kandev_nb.notebook.widgets import TurnView

    line = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n"
    big = (line * (size // len(line) + 1))[:size]
    with record_comms() as rec:
        view = TurnView("bench", tick_s=0)
        if kind == "shell":
            call = ev.ToolCall(
                tool_call_id="t",
                tool_name="Bash",
                title="cat big",
                normalized=t.normalize_tool_call("Bash", {"command": "cat big"}),
            )
            payload = t.normalize_tool_result(call.normalized, big, False, {"stdout": big, "stderr": ""})
        else:
            call = ev.ToolCall(
                tool_call_id="t",
                tool_name="Read",
                title="/big.txt",
                normalized=t.normalize_tool_call("Read", {"file_path": "/big.txt"}),
            )
            payload = t.normalize_tool_result(call.normalized, big, False, {"file": {"content": big, "numLines": 0}})
        view.handle(call)
        mark = rec.total_bytes()
        view.handle(
            ev.ToolUpdate(tool_call_id="t", tool_name=call.tool_name, status="complete", normalized=payload, output=big)
        )
        before = rec.total_bytes() - mark
        card = view.cards["t"]
        assert card.more is not None
        mark = rec.total_bytes()
        card.more.click()
        after = rec.total_bytes() - mark
        view.close()
    return size, before, after


def _memory(turns: int) -> tuple[float, int, int]:
    from kandev_nb.notebook.widgets import TurnView

    text = markdown_text(4000)
    pieces = deltas(text, 300)
    gc.collect()
    widgets_before = len(w.Widget.widgets)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    bundles = []
    with record_comms():
        for i in range(turns):
            view = TurnView(f"turn {i}", tick_s=0)
            for p in pieces:
                view.handle(ev.MessageChunk(text=p))
            c = ev.ToolCall(
                tool_call_id=f"t{i}",
                tool_name="Bash",
                title="ls",
                normalized=t.normalize_tool_call("Bash", {"command": "ls"}),
            )
            view.handle(c)
            view.handle(
                ev.ToolUpdate(
                    tool_call_id=f"t{i}",
                    tool_name="Bash",
                    status="complete",
                    normalized=t.normalize_tool_result(c.normalized, "a\n" * 50, False),
                    output="a\n" * 50,
                )
            )
            view.handle(ev.Complete(stats=ev.TurnStats(cost_usd=0.01)))
            bundles.append(view.finish())  # what the notebook keeps of each turn
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    static = sum(len(json.dumps(b)) for b in bundles)
    return grown / 2**20, len(w.Widget.widgets) - widgets_before, static


# -- the final rendering ----------------------------------------------------------------------

_CODE = (
    'def greet(name):\n    """Say hello."""\n    return f"hello {name}"  # `ticks` and <tags>\n\nprint(greet("world"))'
)
_TABLE = "| tool | calls | share |\n|:---|---:|:---:|\n| Bash | 12 | 40% |\n| Read | 9 | *30%* |\n| Edit | 9 | `30%` |"


def _render_checks() -> dict[str, bool]:
    """Stream texts through a TurnView in small random pieces; the saved rendering must be
    the rendering of the whole text, and the text sent to the browser must be the text."""
    import html as _html
    import re

    from kandev_nb.notebook.widgets import TurnView

    cases = {
        "Markdown (paragraphs, lists, code, tables)": markdown_text(12_000, seed=5),
        "a code block split across chunks": f"Before.\n\n```python\n{_CODE}\n```\n\nAfter.",
        "a table": f"Counts:\n\n{_TABLE}\n\nDone.",
    }
    rnd = random.Random(8)
    out = {}
    for name, full in cases.items():
        cuts = sorted({rnd.randint(1, len(full) - 1) for _ in range(len(full) // 3)})
        pieces = [full[a:b] for a, b in zip([0, *cuts], [*cuts, len(full)], strict=True)]
        with record_comms() as rec:
            view = TurnView("check", tick_s=0)
            for p in pieces:
                view.handle(ev.MessageChunk(text=p))
            view.handle(ev.Complete(stats=ev.TurnStats()))
            bundle = view.finish()
        sent = "".join(
            m.data["content"]["text"]
            for m in rec.messages
            if m.method == "custom" and m.data.get("content", {}).get("type") == "append"
        )
        ok = sent == full and r.markdown_html(full) in bundle["text/html"] and full in bundle["text/markdown"]
        if name == "a code block split across chunks":
            pre = re.search(r'<pre class="kandev-code"[^>]*>(.*?)</pre>', bundle["text/html"], re.DOTALL)
            ok = ok and pre is not None and _html.unescape(re.sub(r"<[^>]+>", "", pre.group(1))) == _CODE
            ok = ok and "<span" in (pre.group(1) if pre else "")  # coloured
        if name == "a table":
            saved = bundle["text/html"]  # aligned by class, its rule in the output's one <style>
            right = re.search(r"\.kandev-al-right[^{]*\{[^}]*text-align:\s*right", saved)
            ok = ok and saved.count("<tr>") == 4 and 'class="kandev-al-right"' in saved and right is not None
        out[name] = ok
    return out


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """Largest number of `times` inside any half-open window of `window` seconds."""
    best, lo = 0, 0
    for hi, t_hi in enumerate(times):
        while t_hi - times[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best
