"""Issue 9 end to end: a real kernel, the real CLI, the scripted model, widget comms.

The model (scripted) calls the ``mcp__kernel__*`` tools; the CLI sends the calls to the
kernel as `mcp_message` control requests; the test checks what the model's next request
contains and what the notebook shows.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, pinned_cli, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel_tools.conftest import body_text, result_images, result_text, tool_results

pytestmark = pytest.mark.timeout(240)

DATA_CELL = (
    "import pandas as pd\nimport numpy as np\n"
    "sales = pd.DataFrame({'region': ['north', 'south', 'east'], 'units': [3, 5, 8], 'price': [1.5, 2.0, 2.5]})\n"
    "weights = np.ones((4, 2))\n"
)
SECRET = "sk-live-THE-SECRET-0123456789"


@pytest.mark.parametrize("cli", ["2.1.332", "2.1.197"])
def test_list_and_inspect_variables_reach_the_model(
    cli: str,
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        Reply(text("Let me look at your variables."), tool_use("mcp__kernel__list_variables", {})),
        Reply(tool_use("mcp__kernel__inspect_variable", {"name": "sales"})),
        Reply(text("`sales` has 3 rows: region (text), units (int64) and price (float64).")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir, cli_path=str(pinned_cli(cli))))
    kernel.execute(DATA_CELL)
    run = kernel.execute("%%claude\nWhat data do I have?")

    listing = result_text(tool_results(scripted_model.main_requests[1])[-1])
    rows = {line.split()[0]: line.split() for line in listing.splitlines()[1:]}
    assert rows["sales"][1:3] == ["pandas.DataFrame", "(3,"] and rows["sales"][3] == "3)"
    assert rows["weights"][1:3] == ["numpy.ndarray", "(4,"] and rows["weights"][3] == "2)"
    assert "columns: region, units, price" in listing
    assert "pd" not in rows and "np" not in rows  # modules are not variables

    details = result_text(tool_results(scripted_model.main_requests[2])[-1])
    dtypes = details.split("dtypes:\n", 1)[1].split("\nhead(5):", 1)[0]
    assert [line.split()[0] for line in dtypes.splitlines()] == ["region", "units", "price"]
    assert [line.split()[1] for line in dtypes.splitlines()][1:] == ["int64", "float64"]
    assert "north" in details and "null counts:" in details

    decided = kernel.eval(
        "[(r.call.tool_name, r.decision and r.decision.decided_by) for r in kandev_nb.last_turn().tools.values()]"
    )
    # Allowed by the session's --allowedTools: the CLI never asked (no card, no click).
    assert decided == [["mcp__kernel__list_variables", "settings"], ["mcp__kernel__inspect_variable", "settings"]]
    assert not kernel.pending_approvals()  # read-only tools never ask
    assert "3 rows" in "\n".join(run.data("text/html"))


@pytest.mark.parametrize("answer", ["Allow", "Deny"])
def test_run_code_asks_with_the_code_shown_and_only_allow_runs_it(
    answer: str,
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    code = "doubled = sales['units'] * 2\nprint('sum is', doubled.sum())\nint(doubled.max())"
    scripted_model.push(Reply(tool_use("mcp__kernel__run_code", {"code": code})), Reply(text("Finished.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(DATA_CELL)
    run = kernel.start("%%claude\nDouble the units into a new variable")
    controls = kernel.wait_for_approval()
    assert not run.done
    card = kernel.widget_texts()
    assert 'class="kandev-code"' in card and "doubled" in card and "print" in card  # highlighted code
    kernel.answer(controls, answer.lower())
    kernel.wait(run)
    assert run.status == "ok", run.error

    exists = kernel.eval("'doubled' in globals()")
    result = tool_results(scripted_model.main_requests[-1])[-1]
    if answer == "Allow":
        assert exists and kernel.eval("doubled.tolist()") == [6, 10, 16]
        assert result_text(result).startswith("stdout:\nsum is 32\n\nresult:\n16\n\ntook ")
        assert "sum is 32" in run.stdout()  # the run's output also shows in the cell
        # issue 28.11: the value is on the card ("result: 16"), not a stray output below the footer
        assert "16" not in run.data("text/plain")
    else:
        assert not exists
        assert result.get("is_error") is True and "sum is" not in result_text(result)


def test_a_figure_from_run_code_shows_on_its_card_and_reaches_the_model(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    code = (
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2))\n"
        "ax.bar(sales['region'], sales['units'])\nax.set_title('units by region')"
    )
    scripted_model.push(Reply(tool_use("mcp__kernel__run_code", {"code": code})), Reply(text("Here is the chart.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(DATA_CELL)
    kernel.execute("policy = lambda tool, tool_input: 'allow' if tool == 'mcp__kernel__run_code' else None")
    run = kernel.execute("%%claude --approve policy\nPlot units by region")

    assert run.data("image/png") == []  # not a separate output below the turn's footer ...
    images = result_images(tool_results(scripted_model.main_requests[-1])[-1])
    assert len(images) == 1
    assert images[0]["source"]["media_type"] == "image/png"
    saved = run.data("text/html")[-1]  # ... but on the run_code card of the saved rendering
    card = saved[saved.index("kernel · run_code") : saved.index("kandev-footer")]
    shown = re.findall(r'class="kandev-figure" src="data:image/png;base64,([^"]+)"', card)
    assert len(shown) == 1  # once: the figure is closed, so the inline backend does not repeat it
    assert base64.b64decode(images[0]["source"]["data"]) == base64.b64decode(shown[0])
    assert "Text(0.5, 1.0, 'units by region')" in result_text(tool_results(scripted_model.main_requests[-1])[-1])
    assert kernel.eval("__import__('matplotlib.pyplot').pyplot.get_fignums()") == []
    # issue 28.11: open at the end of the turn, no stand-in lines for the picture it shows
    assert card.startswith("kernel · run_code") and "[image: image/png]" not in card and "[Image: source:" not in card
    head = saved[: saved.index("kernel · run_code")]
    assert '" open style=' in head[head.rindex("<details") :]  # the card's <details ... open>


def test_secret_values_never_reach_the_model(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        Reply(tool_use("mcp__kernel__list_variables", {})),
        Reply(tool_use("mcp__kernel__inspect_variable", {"name": "api_token"})),
        Reply(tool_use("mcp__kernel__recent_history", {})),
        Reply(tool_use("mcp__kernel__run_code", {"code": "print(api_token)\n{'t': api_token}"})),
        Reply(text("I cannot see the token, good.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(f"api_token = {SECRET!r}\nuser = 'ada'")
    kernel.execute("policy = lambda tool, tool_input: 'allow'")
    run = kernel.execute("%%claude --approve policy\nCheck my variables")

    requests = scripted_model.main_requests
    assert len(requests) == 5
    assert all(SECRET not in body_text(r) for r in requests)
    texts = [result_text(tool_results(r)[-1]) for r in requests[1:]]
    assert "api_token" in texts[0] and "<hidden: secret-looking name>" in texts[0]
    assert "value: <hidden: secret-looking name>" in texts[1]
    assert "api_token = <redacted>" in texts[2]
    assert texts[3].startswith("stdout:\n<redacted>\n\nresult:\n{'t': '<redacted>'}")
    assert SECRET in run.stdout()  # the user's own cell output still shows it


def test_a_hanging_run_code_times_out_and_the_cell_and_kernel_go_on(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        Reply(tool_use("mcp__kernel__run_code", {"code": "spins = 0\nwhile True:\n    spins += 1"})),
        Reply(text("That loop never ends; it was stopped.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("kandev_nb.kernel_tools.options.run_timeout_s = 2\npolicy = lambda tool, tool_input: 'allow'")
    kernel.execute("%%claude --approve policy\nCount forever")
    answer = result_text(tool_results(scripted_model.main_requests[-1])[-1])
    assert "stopped: the code ran longer than the 2 s timeout" in answer
    assert kernel.eval("spins > 0")
    assert kernel.eval("kandev_nb.last_turn().text") == "That loop never ends; it was stopped."


def test_no_kernel_tools_option_leaves_the_cli_without_them(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(Reply(text("Hello.")), Reply(text("Hello again.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude --no-kernel-tools\nhi")
    assert "mcp__kernel__" not in body_text(scripted_model.main_requests[-1])
    kernel.execute("%%claude --new\nhi")
    assert "mcp__kernel__list_variables" in body_text(scripted_model.main_requests[-1])
