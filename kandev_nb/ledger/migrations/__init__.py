"""The ledger's Alembic migrations (``versions/``), run by :func:`kandev_nb.ledger.migrate.upgrade`.

Each revision is one schema version; ``0001`` is the schema of the releases before Alembic
(a ledger without an ``alembic_version`` table but with a ``turns`` table is taken to be at
``0001``). A new revision goes in ``versions/`` with ``down_revision`` the previous head,
and :data:`kandev_nb.ledger.rows.metadata` changes to match (a test compares them).
"""
