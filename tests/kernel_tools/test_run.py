"""run_code without a kernel: output, results, errors, timeouts, await, figures."""

from __future__ import annotations

import threading
from typing import Any

import matplotlib

matplotlib.use("Agg")

from kandev_nb.kernel_tools import KernelTools, KernelToolsOptions


def make(ns: dict[str, Any], timeout_s: float = 30) -> KernelTools:
    return KernelTools(namespace=ns, options=KernelToolsOptions(run_timeout_s=timeout_s))


async def test_output_result_and_new_variables_in_the_namespace() -> None:
    ns: dict[str, Any] = {"base": 10}
    tools = make(ns)
    result = await tools.run_code(
        "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\ntotal = base * 3\ntotal + 1"
    )
    assert (result.stdout, result.stderr, result.result_repr, result.error) == (
        "to stdout\n",
        "to stderr\n",
        "31",
        None,
    )
    assert ns["total"] == 30 and "_kandev_run_code_result_" not in ns
    text = tools.format_run(result)
    assert text.startswith("stdout:\nto stdout\n\nstderr:\nto stderr\n\nresult:\n31\n\ntook ")


async def test_a_thread_runs_the_code_and_the_loop_stays_free() -> None:
    tools = make({})
    result = await tools.run_code("import threading\nthreading.current_thread().name")
    assert result.result_repr == "'kandev-run-code'"
    assert threading.current_thread() is threading.main_thread()


async def test_exception_has_the_run_frames_only() -> None:
    tools = make({})
    result = await tools.run_code("def f(x):\n    return 1 / x\n\nf(0)")
    assert result.error is not None
    lines = result.error.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert 'File "<run_code #' in lines[1] and "line 4" in lines[1]
    assert "return 1 / x" in result.error and lines[-1] == "ZeroDivisionError: division by zero"
    assert "kandev_nb" not in result.error
    syntax = await tools.run_code("def broken(:\n    pass")
    assert syntax.error is not None and syntax.error.endswith("SyntaxError: invalid syntax")


async def test_a_hanging_run_is_stopped_by_the_timeout() -> None:
    ns: dict[str, Any] = {}
    tools = make(ns, timeout_s=0.5)
    result = await tools.run_code("n = 0\nwhile True:\n    n += 1")
    assert result.timed_out and not result.still_running and result.error is None
    assert ns["n"] > 0
    assert "stopped: the code ran longer than the 0.5 s timeout" in tools.format_run(result)
    assert (await tools.run_code("'next'")).result_repr == "'next'"


async def test_top_level_await_runs_on_the_loop() -> None:
    tools = make({})
    result = await tools.run_code("import asyncio, threading\nawait asyncio.sleep(0)\nthreading.current_thread().name")
    assert result.result_repr == repr(threading.main_thread().name)


async def test_open_figures_become_images_and_are_closed() -> None:
    tools = make({})
    result = await tools.run_code(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 3, 2])\nfig2 = plt.figure()\nfig"
    )
    assert len(result.images) == 2 and all(png.startswith(b"\x89PNG\r\n\x1a\n") for png in result.images)
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []
    assert "2 images shown in the notebook and attached" in tools.format_run(result)


async def test_secret_values_printed_by_code_are_redacted() -> None:
    tools = make({"db_password": "correct-horse-battery"})
    result = await tools.run_code("print('pw is', db_password)")
    assert result.stdout == "pw is correct-horse-battery\n"  # the cell shows it to the user...
    assert "correct-horse-battery" not in tools.format_run(result)  # ...the model never gets it
    assert "pw is <redacted>" in tools.format_run(result)
