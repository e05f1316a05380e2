"""How long a pure-Python cell starves a `%%claude --background` turn (issue 27, point 1).

Run: ``python benchmarks/bench_background_turns.py [--quick]`` from the repository root. A
real kernel (the script plays the frontend, as ``tests/kernel`` does), the real CLI and the
scripted model streaming text in 12-character chunks every 20 ms. For each busy time B, a
background turn streams; once its text shows, a cell spins in pure Python for B seconds
(``while perf_counter() - t0 < B: pass``, no await). Printed per B:

- ``silence s``: the longest time the turn's live view got no text while the cell ran
  (its updates come every 0.25 s at most otherwise: the view's throttle);
- ``resume ms``: from the busy cell's end (its idle status) to the next text update;
- ``lost chars``: what the view missed at the end (0: the stream catches up).

Then, last, the headline: the longest silence over the busy time B (about 1: the turn is
starved for as long as the cell runs, then resumes). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._common import headline
from kandev_nb.testing import Reply, ScriptedModelServer, text
from kandev_nb.testing.clis import scripted_env
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_background_turns import attach_frontend

CHUNK_S = 0.02
"""Seconds between two 12-character text deltas of the scripted model."""


def measure(kernel: KernelHarness, model: ScriptedModelServer, busy_s: float) -> tuple[float, float, int]:
    """(longest silence s, resume ms, lost chars) of one background turn during a `busy_s` cell."""
    answer = "".join(f"word{i:05d} " for i in range(int((busy_s + 4) / CHUNK_S)))  # 12 chars a chunk
    model.push(Reply(text(answer, chunk_size=12, delay=CHUNK_S)))
    before = len(kernel.live_texts())
    started = kernel.wait(kernel.start("%%claude --background\nStream a long answer"))
    assert started.status == "ok", started.stdout()

    def current() -> int:
        texts = kernel.live_texts()
        return len(texts[-1]) if len(texts) > before else 0

    while current() == 0:
        kernel._pump()
    spin = f"import time\nt0 = time.perf_counter()\nwhile time.perf_counter() - t0 < {busy_s}:\n    pass\n"
    busy = kernel.start(spin)
    last_len, last_at, silence = current(), time.monotonic(), 0.0
    ended_at: float | None = None
    resume_ms = float("nan")
    while True:
        kernel._pump(0.005)
        now = time.monotonic()
        if busy.done and ended_at is None:
            ended_at = now
        length = current()
        if length != last_len:
            if ended_at is None or last_at < ended_at:  # a silence that started while the cell ran
                silence = max(silence, now - last_at)
            if ended_at is not None:
                resume_ms = (now - ended_at) * 1000
                break
            last_len, last_at = length, now
    kernel.wait(busy)
    kernel.execute("await kandev_nb.wait()")
    kernel.pump_for(0.3)
    lost = len(answer) - len(kernel.live_texts()[-1])
    return silence, resume_ms, lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="B = 0.5 and 1.5 s only")
    args = parser.parse_args()
    busy_times = (0.5, 1.5) if args.quick else (0.5, 2.0, 5.0, 10.0)
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer() as model:
        home, work = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        work.mkdir()
        env = dict(os.environ, KANDEV_NB_LEDGER=str(Path(tmp) / "ledger.sqlite"))
        env["KANDEV_NB_SPOOL"] = str(Path(tmp) / "spool")
        env.setdefault("PYTHONPATH", str(REPO))  # the kernel imports this clone's kandev_nb
        kernel = KernelHarness(env=env, cwd=str(work))
        try:
            kernel.execute(setup_code(scripted_env(model, home), work, record=False))
            attach_frontend(kernel)
            print(f"{'busy s':>7} {'silence s':>10} {'resume ms':>10} {'lost chars':>11}")
            ratios = []
            for busy_s in busy_times:
                silence, resume_ms, lost = measure(kernel, model, busy_s)
                ratios.append(silence / busy_s)
                print(f"{busy_s:>7.1f} {silence:>10.2f} {resume_ms:>10.1f} {lost:>11d}", flush=True)
        finally:
            kernel.close()
    headline("longest silence of a background turn during a pure-Python cell", max(ratios), "the cell's busy time")


if __name__ == "__main__":
    main()
