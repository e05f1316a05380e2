"""issue 17, 4: kernel tools that need no approval must not hand secrets to the model, nor
to the saved notebook or the ledger. A real kernel, the real CLI, the scripted model: the
test reads what the model received, the cell's saved output and the ledger's bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel_tools.conftest import body_text, result_text, tool_results

pytestmark = pytest.mark.timeout(240)

SECRETS = {
    "env_token": "svc-TOKEN-set-in-a-cell-0451",
    "env_aws": "aws-SECRET-from-the-env-9876",
    "deep": "pw-TWO-dicts-deep-4242",
    "listed": "tok-IN-a-list-of-dicts-77",
    "under_key": "pw-LIST-under-password-key",
    "column": "pw-COLUMN-in-a-frame-aaaa",
    "assigned": "tok-ASSIGNED-literal-31337",
    "configured": "conf-KEY-given-to-configure-55",
}
S = SECRETS
DATA_CELL = (
    "import os\nimport pandas as pd\n"
    f"os.environ['SERVICE_TOKEN'] = {S['env_token']!r}\n"
    f"os.environ['AWS_SECRET_ACCESS_KEY'] = {S['env_aws']!r}\n"
    f"cfg = {{'db': {{'conn': {{'password': {S['deep']!r}}}, 'host': 'db.local'}},\n"
    f"       'users': [{{'name': 'ada', 'token': {S['listed']!r}}}], 'password': [{S['under_key']!r}, 'x']}}\n"
    f"people = pd.DataFrame({{'name': ['ada', 'bob'], "
    f"'password': [{S['column']!r}, 'pw-COLUMN-bbbb'], 'age': [30, 40]}})\n"
    f"deploy_token = {S['assigned']!r}\n"
    f"kandev_nb.configure(env={{**kandev_nb.notebook.magic.settings.env, 'EXTRA_API_KEY': {S['configured']!r}}})\n"
)
CALLS = [
    ("mcp__kernel__inspect_variable", {"name": "os.environ"}),
    ("mcp__kernel__inspect_variable", {"name": "os"}),
    ("mcp__kernel__inspect_variable", {"name": "In"}),
    ("mcp__kernel__inspect_variable", {"name": "_ih"}),
    ("mcp__kernel__inspect_variable", {"name": "pd.io"}),
    ("mcp__kernel__inspect_variable", {"name": "cfg"}),
    ("mcp__kernel__inspect_variable", {"name": "people"}),
    ("mcp__kernel__list_variables", {}),
    ("mcp__kernel__recent_history", {}),
    (
        "mcp__kernel__run_code",
        {
            "code": "import os\nprint(dict(os.environ))\nprint(cfg)\nprint(people)\n"
            "print(kandev_nb.notebook.magic.settings.env)\ndeploy_token"
        },
    ),
]


def test_no_tool_result_carries_a_secret_to_the_model_the_saved_output_or_the_ledger(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    ledger_path: Path,
) -> None:
    scripted_model.push(*(Reply(tool_use(name, args)) for name, args in CALLS), Reply(text("Nothing leaked.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(DATA_CELL)
    kernel.execute("policy = lambda tool, tool_input: 'allow'")
    run = kernel.execute("%%claude --approve policy\nLook at everything")

    requests = scripted_model.main_requests
    assert len(requests) == len(CALLS) + 1
    answers = [result_text(tool_results(r)[-1]) for r in requests[1:]]
    for name, body in [
        *((f"request {i}", body_text(r)) for i, r in enumerate(requests)),
        ("text/html", "\n".join(run.data("text/html"))),
        ("text/markdown", "\n".join(run.data("text/markdown"))),
    ]:
        leaked = [k for k, secret in SECRETS.items() if secret in body]
        assert leaked == [], f"{name} carries {leaked}"
    ledger = b"".join(p.read_bytes() for p in ledger_path.parent.glob(f"{ledger_path.name}*"))
    assert [k for k, secret in SECRETS.items() if secret.encode() in ledger] == []

    environ, module, history, ih, submodule, cfg, people, listing, recent, ran = answers
    assert "is a module" in environ and "is a module" in module and "is a module" in submodule
    assert "IPython's own" in history and "IPython's own" in ih
    assert "'host': 'db.local'" in cfg and "'password': '<redacted>'" in cfg and "'token': '<redacted>'" in cfg
    assert "redacted columns (secret-looking names): password" in people and "ada" in people
    assert "cfg" in listing and "deploy_token" in listing
    assert "deploy_token = <redacted>" in recent
    assert "db.local" in ran and "<redacted>" in ran  # run_code works, its output is redacted
