"""Fixtures for issue 19's controls: the approvals' Session maker (real CLI, scripted model)."""

from tests.approvals.conftest import make_session  # noqa: F401 - a fixture
from tests.kernel.conftest import kernel, ledger_path  # noqa: F401 - fixtures
from tests.widgets.conftest import rec  # noqa: F401 - a fixture
