"""The fleet's board at 1,000 rows in JupyterLab 4 in Chromium, screenshotted (issue 33).

Run: ``python benchmarks/shot_fleet_board.py [--rows 1000] [--concurrency 24] [--delay 0.2] [--out docs/screenshots]``.
A notebook runs ``%%claude --over tickets`` over `--rows` rows with the real CLI against the
scripted model (answering each request after `--delay` seconds): about one row in 100 asks
to run ``touch out-N.txt`` (Bash: the fleet's queue), one in 150 gets an API error. Saved:

* ``fleet-board-1000.png``: while it runs, once `--shot-after` rows are done and the rows
  asking for Bash wait (the queue's card, the summary, the filters, waiting rows first, the
  toasts);
* ``fleet-board-1000-errors.png``: the same moment with the Errors filter;
* ``fleet-board-1000-done.png``: after "Allow ... for all rows" and the end of the run (the
  static board the saved notebook keeps).

Not a benchmark: it prints where it saved the images and the page's own figures (rows done
when shot, the saved board's size) and, every 10 s, Chrome's main-thread time per second of
wall time. That counts the time the page waited for a core too: with 16 CLIs starting on 2
cores it reads 90% and more, while the board alone (a simulated 1,000-row fleet, no CLI, on
an idle machine) cost Chromium 7% of one core, its main thread 4%.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, use_this_clone

use_this_clone()
sys.path.insert(0, str(ROOT))  # tests.browser: how the browser tests start Lab and drive it

from playwright.sync_api import sync_playwright

from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, http_error, scripted_env, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_lab
from tests.kernel.conftest import setup_code

TICKET = re.compile(r"(Classify|Touch) ticket (\d+)")


def answer(delay: float):  # type: ignore[no-untyped-def]
    """The scripted model: a Bash call for a Touch row's first request, an API error for one
    row in 150, else a one-word answer after `delay` seconds."""

    def entry(request: RecordedRequest) -> Reply:
        found = TICKET.search(repr(request.messages))
        number = int(found.group(2)) if found else -1
        if found and found.group(1) == "Touch" and request.last_user_text():
            return Reply(tool_use("Bash", {"command": f"touch out-{number}.txt", "description": "mark the ticket"}))
        if number % 150 == 3:
            return http_error(400, f"ticket {number}: the prompt is too long")  # type: ignore[return-value]
        return Reply(text("classified"), delay_first_byte=delay)

    return entry


def done_count(page: object) -> int:
    """Rows done, from the board's summary line ("412 done · ... of 1000")."""
    progress = page.locator(".kandev-fleet-progress").first  # type: ignore[attr-defined]
    found = re.match(r"(\d+) done", progress.inner_text().strip())
    return int(found.group(1)) if found else 0


def page_load(page: object, cdp: object, since: dict[str, float]) -> str:
    """The page's main-thread time per second of wall time since the last call (Chrome's
    ``Performance.getMetrics``: ``TaskDuration``, ``ScriptDuration``), its DOM nodes and JS heap."""
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}  # type: ignore[attr-defined]
    now = time.monotonic()
    wall = now - since.get("at", now) or 1.0
    task = (metrics["TaskDuration"] - since.get("task", metrics["TaskDuration"])) / wall
    script = (metrics["ScriptDuration"] - since.get("script", metrics["ScriptDuration"])) / wall
    since.update(at=now, task=metrics["TaskDuration"], script=metrics["ScriptDuration"])
    heap = metrics["JSHeapUsedSize"] / 2**20
    return f"main thread {task:.0%} busy ({script:.0%} script), {metrics['Nodes']:.0f} DOM nodes, JS heap {heap:.0f} MB"


def main() -> None:
    """Run the fleet in Lab and take the screenshots."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=24)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--shot-after", type=int, default=300, help="rows done before the running shot")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="shot-fleet-"))
    work = tmp / "project"
    work.mkdir()
    with ScriptedModelServer([answer(args.delay)] * (args.rows * 3 + 50)) as model:
        env = scripted_env(model, tmp / "home")
        lab = start_lab(tmp / "lab", tmp / "ledger.sqlite")
        try:
            frame = (
                "import pandas as pd\n"
                f"tickets = pd.DataFrame({{'id': range({args.rows})}})\n"
                "tickets['verb'] = ['Touch' if i % 100 == 42 else 'Classify' for i in tickets.id]"
            )
            magic = f"%%claude --over tickets -o out --concurrency {args.concurrency} --fleet triage"
            lab_page.write_notebook(
                lab.root / "fleet-1000.ipynb", setup_code(env, work) + frame, magic + "\n{verb} ticket {id}."
            )
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                page = browser.new_context(viewport={"width": 1400, "height": 1500}).new_page()
                page.set_default_timeout(300_000)
                cdp = page.context.new_cdp_session(page)
                cdp.send("Performance.enable")
                since: dict[str, float] = {}
                try:
                    lab_page.open_notebook(page, lab.notebook_url("fleet-1000.ipynb"))
                    lab_page.command(page, "notebook:run-all-cells")
                    cell = lab_page.cell(page, 1)
                    cell.locator(".kandev-fleet-progress").first.wait_for(state="visible", timeout=300_000)
                    began = time.monotonic()
                    while (done := done_count(page)) < args.shot_after and time.monotonic() - began < 1800:
                        page.wait_for_timeout(10_000)
                        elapsed = time.monotonic() - began
                        print(f"{elapsed:5.0f} s: {done} done; {page_load(page, cdp, since)}", flush=True)
                    page.wait_for_timeout(2000)  # the toasts slide in
                    running = args.out / "fleet-board-1000.png"
                    cell.locator(".kandev-fleet-board").first.evaluate("el => el.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(500)
                    page.screenshot(path=str(running))
                    print(f"running: {done_count(page)} done when shot -> {running}")
                    cell.locator(".kandev-fleet-filter button", has_text="Errors").click()
                    table = cell.locator(".kandev-fleet-table")  # the kernel redraws it: wait for errors only
                    shown = re.compile(r"\b(running|pending|waiting|done)\b")
                    for _ in range(600):  # looked up again each time: every redraw is a new table
                        if table.count() == 1 and not shown.search(table.inner_text()):
                            break
                        page.wait_for_timeout(100)
                    page.wait_for_timeout(1500)  # the next redraws keep the filter
                    if shown.search(table.inner_text()):
                        raise AssertionError(f"the Errors filter shows other rows: {table.inner_text()[:300]}")
                    errors = args.out / "fleet-board-1000-errors.png"
                    page.screenshot(path=str(errors))
                    print(f"errors filter -> {errors}")
                    cell.locator(".kandev-fleet-filter button", has_text="All").click()
                    allow_all = cell.locator("button.kandev-fleet-allow-all")
                    allow_all.wait_for(state="visible", timeout=300_000)
                    print(f"allow for all rows: {allow_all.inner_text()!r}")
                    allow_all.click()
                    while lab_page.is_running(page, 1) and time.monotonic() - began < 3600:
                        page.wait_for_timeout(10_000)
                        elapsed = time.monotonic() - began
                        print(f"{elapsed:5.0f} s: {done_count(page)} done; {page_load(page, cdp, since)}", flush=True)
                    lab_page.wait_cell_done(page, 1, timeout_ms=600_000)
                    page.wait_for_timeout(1500)
                    cell.evaluate("el => el.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(500)
                    done = args.out / "fleet-board-1000-done.png"
                    page.screenshot(path=str(done))
                    saved = cell.locator(".jp-OutputArea-output").first.inner_html()
                    print(f"done -> {done}; the saved board's HTML in the page: {len(saved.encode()) / 1000:.1f} KB")
                    page.wait_for_timeout(3000)  # every approval was answered: no notification may stay
                    left = page.locator(".Toastify__toast", has_text="Claude wants to use").all_inner_texts()
                    if left:
                        raise AssertionError(f"{len(left)} notifications of answered approvals stayed: {left}")
                except Exception:
                    page.screenshot(path=str(tmp / "failed.png"))
                    print(f"failed: the page as it was -> {tmp / 'failed.png'}", flush=True)
                    raise
                browser.close()
        finally:
            lab.stop()


if __name__ == "__main__":
    main()
