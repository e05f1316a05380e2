"""issue 24, 4 and 10: the read-only kernel tools run no code of the user's objects, never reach
IPython's history or the namespace through an alias, and stay bounded on huge containers.

A real kernel, the real CLI, the scripted model calling ``mcp__kernel__*`` tools: the test reads
what the model received and what ran in the kernel.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel_tools.conftest import body_text, result_text, tool_results

pytestmark = pytest.mark.timeout(300)

MARKER = "cell-source-MARKER-7731"
OBJECTS_CELL = f"""
import functools
ran = []  # every side effect a read of an attribute would cause
class Orders:
    def __init__(self):
        self.region = 'north'
    @property
    def rows(self):
        ran.append('property'); return [1, 2, 3]
    @functools.cached_property
    def total(self):
        ran.append('cached_property'); return 6
    def __getattr__(self, name):
        ran.append('__getattr__ ' + name); return name
orders = Orders()
ip = get_ipython()
hist = ip.history_manager.input_hist_raw
names = globals()
def numbers():
    yield 1
gen = numbers()
note = 'kept'  # {MARKER}
"""
CALLS = [
    "orders.rows",
    "orders.total",
    "orders.head",
    "orders.region",
    "ip.user_ns",
    "ip.history_manager.input_hist_raw",
    "ip",
    "hist",
    "names",
    "gen.gi_frame.f_globals",
]


def test_attribute_paths_run_no_code_and_reach_no_history(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        *(Reply(tool_use("mcp__kernel__inspect_variable", {"name": n})) for n in CALLS),
        Reply(tool_use("mcp__kernel__list_variables", {})),
        Reply(text("Done.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(OBJECTS_CELL)
    kernel.execute("%%claude\nLook at my objects")

    requests = scripted_model.main_requests
    assert len(requests) == len(CALLS) + 2
    answers = dict(zip([*CALLS, "list"], (result_text(tool_results(r)[-1]) for r in requests[1:]), strict=True))
    assert kernel.eval("ran") == []  # no property, cached_property or __getattr__ ran
    for request in requests:
        assert MARKER not in body_text(request)  # no cell's source reached the model
    assert "is a property of Orders: reading it runs code" in answers["orders.rows"]
    assert "is a cached_property of Orders" in answers["orders.total"]
    assert "a name only __getattr__ answers is not looked up" in answers["orders.head"]
    assert "'north'" in answers["orders.region"]  # an instance attribute is read as before
    for path in ("ip.user_ns", "ip.history_manager.input_hist_raw", "ip"):
        assert "IPython's own ZMQInteractiveShell" in answers[path], path
    assert "IPython's history (input_hist_raw" in answers["hist"]
    assert "the notebook's namespace itself" in answers["names"]
    assert "'gen' is a generator" in answers["gen.gi_frame.f_globals"]
    listing = {line.split()[0]: line for line in answers["list"].splitlines()[1:]}
    assert "<not shown: IPython's history" in listing["hist"]
    assert "<not shown: the notebook's namespace itself>" in listing["names"]


BIG_CELL = """
import asyncio, gc, resource, time
big = {f'key{i}': i for i in range(3_000_000)}
gc.collect()
peak_before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
lags = []
async def _probe():  # the kernel's event loop lag: how late a 10 ms sleep wakes up
    while True:
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - start - 0.01)
probe = asyncio.get_event_loop().create_task(_probe())
"""


def test_a_three_million_entry_dict_is_listed_and_inspected_bounded(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        Reply(text("Warm.")),  # the first turn imports the ledger's libraries: measured apart
        Reply(tool_use("mcp__kernel__list_variables", {})),
        Reply(tool_use("mcp__kernel__inspect_variable", {"name": "big"})),
        Reply(tool_use("mcp__kernel__recent_history", {})),
        Reply(text("Done.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(BIG_CELL)
    kernel.execute("big")  # Out[n] holds it too: recent_history shows it
    kernel.execute("%%claude\nWarm up")
    kernel.execute("lags.clear()")  # measured from here: the turn only
    kernel.execute("%%claude\nWhat is in big?")
    kernel.execute("probe.cancel()")
    grown_mb = kernel.eval("(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before_kb) // 1024")
    lag_ms = kernel.eval("round(max(lags) * 1000)")
    print(f"kernel event loop: longest lag {lag_ms} ms; peak memory grew {grown_mb} MB")

    listing, inspected, history = (result_text(tool_results(r)[-1]) for r in scripted_model.main_requests[2:5])
    row = next(line for line in listing.splitlines() if line.startswith("big "))
    assert "len 3000000" in row and "{'key0': 0, 'key1': 1," in row and len(row) < 200
    assert inspected.startswith("big: dict\nlength: 3000000\nrepr:\n{'key0': 0, 'key1': 1, 'key2': 2,")
    assert "'key29': 29, ...}\n(3,000,000 items; the first 30 shown)" in inspected  # whole structure, closed
    assert len(inspected) < 2000
    assert "{'key0': 0," in history and len(history) < 5000
    assert grown_mb < 100  # no copy of the dict (before: 640 MB more)
