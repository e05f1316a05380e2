"""What a fleet on a Dask cluster checks before anything starts: dask installed, a real
``distributed.Client``, a scheduler closed to other clients (else a warning), a session store
that can go to the workers. :mod:`kandev_nb.fleet.cluster` re-exports these names."""

from __future__ import annotations

import pickle
from typing import Any, Final

from kandev_nb.errors import KandevError
from kandev_nb.fleet.spec import FleetError

__all__ = [
    "CLOSED_SCHEMES",
    "INSTALL",
    "SECURE_SETUPS",
    "OpenClusterWarning",
    "check_client",
    "check_store",
    "open_to_others",
    "require_distributed",
]

INSTALL: Final = 'pip install "kandev-nb[dask]"'
"""The one command that installs the optional dask extra (dask, distributed)."""

CLOSED_SCHEMES: Final = ("tls", "gateway", "inproc")
"""Scheduler address schemes other clients cannot use without credentials: Dask's TLS always
asks the client for a certificate signed by the cluster's CA (``Security``); Dask Gateway's
``gateway://`` is TLS with a per-cluster certificate; ``inproc://`` is this process only."""

SECURE_SETUPS: Final = (
    "LocalCluster(security=True) (mutual TLS with a temporary certificate only this process holds), "
    "Dask Gateway's per-user clusters, or dask-jobqueue with security=Security.temporary() "
    "(or your CA's certificates) and protocol='tls://'"
)
"""The secure setups a warning names (the README shows each)."""


class OpenClusterWarning(KandevError, UserWarning):
    """A fleet starts on a Dask scheduler that takes clients without a TLS certificate."""


def open_to_others(client: Any) -> str | None:
    """Why another client could join `client`'s scheduler, or None when it cannot.

    A ``tls://`` scheduler takes only clients whose certificate its CA signed (Dask's TLS is
    always mutual); ``gateway://`` (Dask Gateway) and ``inproc://`` are closed too. Any other
    scheme (``tcp://``, ``ws://``, ``ucx://``) takes whoever reaches its port, and every client
    can run code on the workers, read the fleet's topic and put into its queues.

    Returns:
        The warning's text (naming the address and :data:`SECURE_SETUPS`), or None.
    """
    address = str(getattr(getattr(client, "scheduler", None), "address", "") or "")
    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    if scheme in CLOSED_SCHEMES:
        return None
    return (
        f"kandev_nb fleet: the Dask scheduler at {address or '(unknown address)'} takes clients without TLS "
        "client authentication: anyone who reaches it can run code on its workers and read the rows' "
        "requests (the fleet drops messages this run did not seal, but the cluster is the boundary). "
        f"Secure setups: {SECURE_SETUPS}."
    )


def check_store(store: Any) -> None:
    """Raise FleetError unless `store` (a :class:`~kandev_nb.agent.session_store.SessionStore`,
    or None) can go to the workers: pickled with each row (a store holding a password refuses)."""
    if store is None:
        return
    try:
        pickle.dumps(store)
    except Exception as exc:
        raise FleetError(f"the session store {store!r} cannot be sent to Dask workers: {exc}") from exc


def require_distributed() -> Any:
    """The ``distributed`` module.

    Raises:
        FleetError: dask/distributed are not installed (the message names :data:`INSTALL`).
    """
    try:
        import distributed
    except ImportError:
        raise FleetError(f"a fleet on a Dask cluster needs dask and distributed: {INSTALL}") from None
    return distributed


def check_client(cluster: Any) -> Any:
    """`cluster` if it is a ``distributed.Client``.

    Raises:
        FleetError: dask is missing (:func:`require_distributed`), or `cluster` is not a Client.
    """
    distributed = require_distributed()
    if not isinstance(cluster, distributed.Client):
        raise FleetError(
            f"cluster must be a distributed.Client (client = Client(cluster)), not {type(cluster).__name__}"
        )
    return cluster
