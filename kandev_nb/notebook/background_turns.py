"""`%%claude --background`: turns that do not block the kernel (issue 27, point 1).

A background cell returns at once; its turn runs as an :class:`asyncio.Task` on the kernel's
event loop (ipykernel's). The task is made inside the cell, so it carries the cell's context
(ipykernel >= 7 keeps the execute request's parent header in a ContextVar): the live view, the
approval cards, the final static rendering and the "→ VAR: ..." line of ``-o VAR`` all go to
that cell's output while other cells run. Comm messages (Allow / Deny, Stop) reach Python as
for any widget, the kernel being idle or awaiting.

* ``await kandev_nb.wait()`` waits for every running and queued background turn and returns
  the last :class:`~kandev_nb.agent.turn.Turn` that ended (``kandev_nb.last_turn()`` too).
* A fleet runs in the background the same way (``%%claude --over FRAME --background``,
  ``kandev_nb.fleet(..., background=True)``, issue 33 point 3): a :class:`BackgroundFleet`
  whose board keeps updating in its cell; ``await kandev_nb.wait()`` gives its result frame
  when it is the last to end, ``await job`` always. Its rows' approvals are answered on the
  board and through ``kandev_nb.pending()`` (every running fleet's queue is listed there).
  Two fleets of the same name are queued as two turns of a session are (the later one then
  reads the earlier one's finished rows back); unnamed fleets run side by side.
* A second turn of a session whose background turn runs is queued: its cell says "queued
  behind the turn of cell [n]", and it starts when that one ends. A foreground (blocking)
  `%%claude` cell of that session waits for it the same way.
* It stays blocking where later cells may need the answer and nobody watches the cell
  (:func:`blocking_reason`): with no frontend attached (nbclient, papermill, ``jupyter
  execute``: no tab ever said hello to the notebook bridge, see
  :mod:`kandev_nb.notebook.bridge`), and when other execute requests wait behind this cell
  (Run All, "Run selected cells" in JupyterLab and Notebook 7). Both hold for
  ``--background`` and for ``kandev_nb.configure(background=True)``.

A long pure-Python cell holds the event loop: the turn's stream-json lines, its widget
updates and approvals wait until that cell ends or awaits; nothing is lost, it then catches
up (``benchmarks/bench_background_turns.py`` measures the delay). A kernel interrupt stops
the cell that runs, not a background turn: its Stop button does (a background fleet: its
board's Stop all, or ``job.fleet.stop()``).

Not to be confused with :mod:`kandev_nb.agent.background`, the CLI's own background Bash tasks.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from IPython.core.magic_arguments import argument

from kandev_nb.agent.turn import Turn

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BackgroundFleet",
    "BackgroundTurn",
    "background_argument",
    "blocking_reason",
    "ended_fleet",
    "fleet_session",
    "jobs",
    "settle",
    "start",
    "wait",
]

QUEUE_GRACE_S = 0.05
"""Seconds a background cell waits before looking for execute requests queued behind it: a
Run All's requests arrive a few ms apart, and the first cell may start before the rest."""


@dataclass
class BackgroundTurn:
    """One `%%claude --background` cell's turn.

    Attributes:
        session: the `--session` name.
        cell: the cell's execution count (``In [n]``), or None.
        task: the asyncio task running it; its result is the Turn (a :class:`BackgroundFleet`'s:
            the result frame).
        behind: the background turn of the same session it was queued behind, or None.
        turn: the finished Turn, once ended.
        error: what failed the cell (a UsageError, a CLI error), shown in its output, or None.
    """

    session: str
    cell: int | None
    task: asyncio.Future[Any] = field(repr=False)
    behind: BackgroundTurn | None = None
    turn: Turn | None = None
    error: BaseException | None = None
    ended: int = 0  # the order turns ended in (1, 2, ...; 0 while running)

    @property
    def done(self) -> bool:
        """True once the turn ended (or failed)."""
        return self.task.done()

    @property
    def value(self) -> Any:
        """What :func:`wait` gives for it once ended: the Turn (None before)."""
        return self.turn

    def _set(self, value: Any) -> None:
        self.turn = value


@dataclass(repr=False, eq=False)
class BackgroundFleet(BackgroundTurn):
    """A fleet running as a task of its cell: what ``kandev_nb.fleet(..., background=True)``
    returns (``%%claude --over FRAME --background`` keeps it in :func:`jobs`).

    ``await job`` gives the result frame (raising what failed it), as
    ``await kandev_nb.wait()`` does when it is the last background job to end.

    Attributes:
        fleet: the :class:`~kandev_nb.fleet.runner.Fleet` (``.counts()``, ``.frame()`` so
            far, ``.stop()``, ``.futures``, ``.queue``).
        frame: the result frame once it ended (None before).
    """

    fleet: Any = None
    frame: pd.DataFrame | None = None

    @property
    def value(self) -> Any:
        """The result frame (None before it ended)."""
        return self.frame

    def _set(self, value: Any) -> None:
        self.frame = value

    async def result(self) -> pd.DataFrame | None:
        """Wait for the fleet to end; its result frame.

        Raises:
            Exception: what failed it (shown in its cell too).
        """
        await asyncio.wait([self.task])
        if self.error is not None:
            raise self.error
        return self.frame

    def __await__(self) -> Generator[Any, None, pd.DataFrame | None]:
        return self.result().__await__()

    def __repr__(self) -> str:
        fleet = self.fleet
        where = f"cell [{self.cell}]" if self.cell is not None else "a cell"
        if fleet is None:
            return f"<background fleet of {where}>"
        from kandev_nb.notebook.fleet_board import progress_text

        state = "failed" if self.error is not None else "ended" if self.done else "running"
        return (
            f"<background fleet {fleet.name or 'unnamed'} of {where}, {state}: {progress_text(fleet)}; "
            "await kandev_nb.wait() gives its result frame>"
        )


def fleet_session(fleet: Any) -> str:
    """The :attr:`BackgroundTurn.session` of a background fleet: ``fleet NAME`` (two fleets of
    one name queue), an unnamed one ``fleet #<id>`` (its own)."""
    return f"fleet {fleet.name}" if fleet.name else f"fleet #{id(fleet):x}"


_jobs: list[BackgroundTurn] = []
_ended = itertools.count(1)


def jobs() -> list[BackgroundTurn]:
    """The background turns of this kernel not yet waited for, in start order."""
    return list(_jobs)


def background_argument(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The decorator adding ``--background`` to the `%%claude` options."""
    decorate = argument(  # type: ignore[no-untyped-call]  # IPython's has no annotations
        "--background",
        action="store_true",
        help="return at once; the turn runs on the kernel's event loop while other cells run "
        "(await kandev_nb.wait() gives it); blocking under nbclient/papermill and Run All",
    )
    result: Callable[..., Any] = decorate(fn)
    return result


def _queued_behind_this_cell() -> bool:
    """True when other shell requests (Run All's next cells) wait for the kernel's shell lock.

    ipykernel 7 runs each shell message as a task that waits on ``_main_asyncio_lock`` while a
    cell runs; its waiters are the requests queued behind this one. Without that lock
    (another kernel), False.
    """
    from IPython.core.getipython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
    lock = getattr(kernel, "_main_asyncio_lock", None)
    waiters = getattr(lock, "_waiters", None)
    return bool(waiters)


async def blocking_reason() -> str | None:
    """Why a background cell must block instead, or None when it may run in the background.

    Returns:
        "no frontend" when no notebook tab is attached (nbclient, papermill, `jupyter
        execute`, a console: the notebook bridge never got a hello, and none came when asked:
        :meth:`~kandev_nb.notebook.bridge.NotebookBridge.find_view`), "cells queued" when execute
        requests wait behind this cell (Run All).
    """
    from kandev_nb.notebook.bridge import ensure_bridge

    bridge = ensure_bridge()
    if bridge is None or (not bridge.views and await bridge.find_view() is None):
        return "no frontend"
    await asyncio.sleep(QUEUE_GRACE_S)
    if _queued_behind_this_cell():
        return "cells queued"
    return None


def _running(session: str) -> BackgroundTurn | None:
    for job in reversed(_jobs):
        if job.session == session and not job.done:
            return job
    return None


def _prune() -> None:
    """Forget the ended jobs nobody waited for (last_turn() has the turns), errors kept."""
    _jobs[:] = [j for j in _jobs if not j.done or j.error is not None]


def _what(job: BackgroundTurn) -> str:
    return "fleet" if isinstance(job, BackgroundFleet) else "turn"


def start(session: str, cell: int | None, run: Callable[[], Awaitable[Any]], *, fleet: Any = None) -> BackgroundTurn:
    """Run `run` (the cell's turn, or with `fleet` the fleet's run) as a task of this cell,
    after the running background job of the same `session` if any (the cell then shows
    "queued behind the turn of cell [n]").

    Returns:
        The :class:`BackgroundTurn`, a :class:`BackgroundFleet` with `fleet` (also in :func:`jobs`).
    """
    from IPython.display import display

    _prune()
    behind = _running(session)
    note = None
    if behind is not None:
        where = f"cell [{behind.cell}]" if behind.cell is not None else "an earlier cell"
        whose = session if fleet is not None else f"session {session}"
        note = display(  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
            _note_bundle(f"⏳ queued behind the {_what(behind)} of {where} ({whose}); it starts when that one ends"),
            raw=True,
            display_id=True,
        )
    holder: list[BackgroundTurn] = []
    task = asyncio.get_running_loop().create_task(_run(holder, run, note))  # the cell's context: its outputs
    job: BackgroundTurn
    if fleet is not None:
        job = BackgroundFleet(session, cell, task, behind, fleet=fleet)
    else:
        job = BackgroundTurn(session, cell, task, behind)
    holder.append(job)
    _jobs.append(job)
    return job


def ended_fleet(fleet: Any, cell: int | None, frame: pd.DataFrame) -> BackgroundFleet:
    """Keep a background fleet that ran blocking (:func:`blocking_reason`) as an ended job, so
    that ``await kandev_nb.wait()`` in a later cell gives its frame there too."""
    _prune()
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    done.set_result(frame)
    job = BackgroundFleet(fleet_session(fleet), cell, done, None, fleet=fleet, frame=frame, ended=next(_ended))
    _jobs.append(job)
    return job


def _note_bundle(text: str) -> dict[str, str]:
    from kandev_nb.render.html import esc

    style = "color:var(--jp-content-font-color2,#57606a);font-size:90%"
    return {"text/html": f'<div class="kandev-queued" style="{style}">{esc(text)}</div>', "text/plain": text}


async def _run(holder: list[BackgroundTurn], run: Callable[[], Awaitable[Any]], note: Any) -> Any:
    await asyncio.sleep(0)  # the job is registered
    job = holder[0]
    if job.behind is not None:
        await asyncio.wait([job.behind.task])
        if note is not None:
            note.update(
                _note_bundle(f"started after the {_what(job.behind)} of cell [{job.behind.cell}] ended"), raw=True
            )
    try:
        job._set(await run())
    except KeyboardInterrupt:  # stopped from its card: shown and recorded already
        job.turn = None
    except Exception as exc:  # noqa: BLE001 - shown in the cell; wait() raises it again
        job.error = exc
        said = str(exc) if str(exc).startswith("%%claude") else f"%%claude --background: {exc}"
        print(f"{type(exc).__name__}: {said}", file=sys.stderr)  # as IPython shows a UsageError
    finally:
        job.ended = next(_ended)
    return job.value


async def settle(session: str) -> None:
    """Wait for the background turns of `session` (a blocking cell of that session runs after them)."""
    pending = [j for j in _jobs if j.session == session and not j.done]
    if pending:
        from IPython.display import display

        cells = ", ".join(f"[{j.cell}]" for j in pending)
        note = _note_bundle(f"⏳ waiting for the background turn of cell {cells} (session {session})")
        display(note, raw=True)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
        await asyncio.wait([j.task for j in pending])


async def wait(session: str | None = None) -> Any:
    """Wait for the running and queued background turns and fleets (of `session`, or all; a
    fleet's session is ``fleet NAME``, :func:`fleet_session`) to end.

    Turns and fleets started while waiting are waited for too.

    Returns:
        The :class:`~kandev_nb.agent.turn.Turn` of the last of them to end (its ``.text``,
        ``.output`` as assigned to ``-o VAR``, ``.stats.cost_usd`` in USD, ``.tools``), or
        when that one is a fleet its result frame (a DataFrame, as ``-o VAR`` gets it; a
        fleet that ran blocking under nbclient or Run All counts as ended then); or
        ``kandev_nb.last_turn()`` when none was running (None before any turn).

    Raises:
        Exception: the first error of a waited turn (e.g. the UsageError of an answer that
            did not validate), after all of them ended; it was shown in its cell too.
    """
    from kandev_nb.notebook.state import last_turn

    waited: list[BackgroundTurn] = []
    while True:
        mine = [j for j in _jobs if session is None or j.session == session]
        pending = [j for j in mine if not j.done]
        waited += [j for j in mine if j not in waited]
        if not pending:
            break
        await asyncio.wait([j.task for j in pending])
    for job in waited:
        _jobs.remove(job)
    failed = next((j.error for j in waited if j.error is not None), None)
    if failed is not None:
        raise failed
    ended = sorted((j for j in waited if j.value is not None), key=lambda j: j.ended)
    return ended[-1].value if ended else last_turn()
