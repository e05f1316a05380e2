from tests.kernel.conftest import kernel, ledger_path  # noqa: F401  (the real-kernel fixtures)
