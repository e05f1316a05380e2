from tests.kernel.conftest import kernel, ledger_path  # noqa: F401  (the real-kernel fixtures)
from tests.widgets.conftest import clock, rec  # noqa: F401  (widget comms recorded, a settable clock)
