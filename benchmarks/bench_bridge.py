"""One notebook-tool round trip kernel -> tab -> kernel, in a real browser (issue 13).

Run: ``python benchmarks/bench_bridge.py [--calls 50] [--cells 20]`` (from the repository
root; it uses the launcher of ``tests/browser``: JupyterLab 4 and headless ``/usr/bin/chromium``).
A notebook of `--cells` small cells is opened; one cell then awaits `--calls` requests of each
kind through the notebook bridge while it blocks, as a `%%claude` cell does during a tool
call, and prints each duration in ms:

- ``ping``: the bare round trip over the widget comm;
- ``read``: the tab's whole notebook as JSON (what read_notebook and each cell lookup send);
- ``read_notebook tool``: the kernel tool itself (read + the text it answers with), without
  the CLI and MCP around it.

Prints the median and max of each; target: median <= 50 ms. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from playwright.sync_api import sync_playwright

from tests.browser import lab_page
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_lab

MEASURE = """import asyncio, json, time
from kandev_nb.kernel_tools import KernelTools
from kandev_nb.notebook.bridge import bridge
b = bridge()
while b.current_view is None:
    await asyncio.sleep(0.05)
tools = KernelTools()
rows = {{}}
for label, call in (("ping", lambda: b.request("ping", {{}})), ("read", lambda: b.request("read", {{}})),
                    ("read_notebook tool", lambda: tools.notebook.call("read_notebook", {{}}))):
    times = []
    for _ in range({calls}):
        began = time.perf_counter()
        await call()
        times.append((time.perf_counter() - began) * 1000)
    rows[label] = times
print("BENCH " + json.dumps(rows))"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--cells", type=int, default=20, help="small cells in the notebook besides the two")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lab = start_lab(Path(tmp) / "lab", Path(tmp) / "ledger.sqlite")
        try:
            cells = [
                "%load_ext kandev_nb",
                *(f"value_{i} = {i}\nprint(value_{i})" for i in range(args.cells)),
                MEASURE.format(calls=args.calls),
            ]
            lab_page.write_notebook(lab.root / "bench.ipynb", *cells)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                lab_page.open_notebook(page, lab.notebook_url("bench.ipynb"))
                lab_page.command(page, "notebook:run-all-cells")
                last = lab_page.cell(page, len(cells) - 1)
                last.locator(".jp-OutputArea", has_text="BENCH ").wait_for(timeout=300_000)
                text = last.locator(".jp-OutputArea").inner_text()
                browser.close()
        finally:
            lab.stop()
    rows = json.loads(text.split("BENCH ", 1)[1].strip().splitlines()[0])
    print(f"notebook bridge round trips, JupyterLab 4 + headless Chromium, {args.calls} calls, {args.cells + 2} cells")
    for label, times in rows.items():
        print(f"{label:<22} median {statistics.median(times):7.2f} ms   max {max(times):7.2f} ms")


if __name__ == "__main__":
    main()
