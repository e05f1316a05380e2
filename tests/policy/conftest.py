"""Policy enforcement on the real CLI: deny rules in every mode, scoped session grants."""

from tests.approvals.conftest import make_session  # noqa: F401  (the fixture)
