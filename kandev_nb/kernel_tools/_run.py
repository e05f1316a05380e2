"""Running the model's code in the user's namespace without blocking the kernel's loop.

:class:`CodeRunner` runs plain code on a worker thread while the kernel's event loop (and
with it the awaiting `%%claude` cell, its widgets and their buttons) keeps going; code
with a top-level ``await`` runs as a coroutine on the loop itself. Either way it is bounded
by a timeout: a thread is stopped by raising :class:`RunStopped` in it (between two Python
bytecodes: a C call that never returns cannot be stopped, and is then left running and
reported), a coroutine is cancelled.

While code runs, what it writes to ``sys.stdout``/``sys.stderr`` is teed: it shows in the
cell as usual and is also kept for the model. Every PNG the code displays (``display(fig)``,
``plt.show()`` with the inline backend) is kept instead of being shown in the cell, and
matplotlib figures it leaves open are kept and closed: they go back to the model as images
and the `run_code` tool card shows them (from the tool_result), so a figure stays with the
call that made it instead of landing below the turn's footer.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import contextvars
import ctypes
import inspect
import io
import itertools
import linecache
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Self, TextIO

__all__ = ["CodeRunner", "RunResult", "RunStopped", "capture_display", "nbformat_outputs"]

log = logging.getLogger("kandev_nb")

_RESULT = "_kandev_run_code_result_"
_counter = itertools.count(1)


class RunStopped(BaseException):
    """Raised inside running code to stop it (timeout or :meth:`CodeRunner.stop`).

    A BaseException so that a bare ``except Exception`` in the user's code does not
    swallow it.
    """


@dataclass
class RunResult:
    """What one run produced.

    Attributes:
        stdout, stderr: text the code wrote to ``sys.stdout``/``sys.stderr`` (all threads'
            writes are not captured: only the running code's).
        result_repr: ``repr()`` of the value of the last line when it is an expression and
            not None; else None.
        error: the formatted exception with its traceback (frames of the run only), or None.
        images: PNG bytes of every image the code displayed, then of every figure it left
            open, in order.
        timed_out: the timeout ended the run.
        stopped: :meth:`CodeRunner.stop` ended the run.
        still_running: the code did not react to being stopped; its thread is left running.
        duration_s: wall time in seconds.
    """

    stdout: str = ""
    stderr: str = ""
    result_repr: str | None = None
    error: str | None = None
    images: list[bytes] = field(default_factory=list)
    timed_out: bool = False
    stopped: bool = False
    still_running: bool = False
    duration_s: float = 0.0


class _Tee(io.TextIOBase):
    """A stand-in for sys.stdout/sys.stderr that copies the writes of registered threads."""

    def __init__(self, original: TextIO) -> None:
        self.original = original
        self.buffers: dict[int, io.StringIO] = {}
        self.quiet: set[int] = set()  # threads whose writes are kept only (run_cell's output goes elsewhere)

    def write(self, text: str) -> int:
        ident = threading.get_ident()
        buffer = self.buffers.get(ident)
        if buffer is not None:
            buffer.write(text)
            if ident in self.quiet:
                return len(text)
        return self.original.write(text)

    def flush(self) -> None:
        self.original.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _Capture:
    """Installs the tees while at least one run is active; removes them after."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self.out: _Tee | None = None
        self.err: _Tee | None = None

    def __enter__(self) -> Self:
        with self._lock:
            if self._users == 0:
                self.out, self.err = _Tee(sys.stdout), _Tee(sys.stderr)
                sys.stdout, sys.stderr = self.out, self.err
            self._users += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                if sys.stdout is self.out and self.out is not None:
                    sys.stdout = self.out.original
                if sys.stderr is self.err and self.err is not None:
                    sys.stderr = self.err.original

    def register(self, ident: int, echo: bool = True) -> tuple[io.StringIO, io.StringIO]:
        out, err = io.StringIO(), io.StringIO()
        assert self.out is not None and self.err is not None
        self.out.buffers[ident], self.err.buffers[ident] = out, err
        if not echo:
            self.out.quiet.add(ident)
            self.err.quiet.add(ident)
        return out, err

    def unregister(self, ident: int) -> None:
        for tee in (self.out, self.err):
            if tee is not None:
                tee.buffers.pop(ident, None)
                tee.quiet.discard(ident)


def _compile(code: str, filename: str) -> tuple[Any, bool]:
    """Compile `code` so that the value of a last expression lands in ``_RESULT``.

    Returns:
        ``(code object, is_coroutine)``; a coroutine code object (top-level await)
        evaluates to a coroutine.

    Raises:
        SyntaxError: the code does not parse.
    """
    tree = ast.parse(code, filename, "exec")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(id=_RESULT, ctx=ast.Store())], value=last.value)
        tree.body[-1] = ast.copy_location(assign, last)
        ast.fix_missing_locations(tree)
    compiled = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    return compiled, bool(compiled.co_flags & inspect.CO_COROUTINE)


def _format_error(exc: BaseException, filename: str) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) or tb is None:
        return "".join(traceback.format_exception_only(exc)).rstrip()
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()


def _raise_in_thread(ident: int) -> bool:
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(RunStopped))
    return bool(done == 1)


Display = Callable[[Any], None]


class CodeRunner:
    """Runs code in a namespace, one run at a time.

    Args:
        namespace: the globals the code runs in (the user namespace).
        display: shows an object in the notebook cell (IPython's ``display``); called in the
            context given to :meth:`run`. None: nothing is displayed.
        display_hook: ``(callback) -> uninstall``: until uninstalled, each PNG the kernel
            would publish is given to ``callback(png_bytes)`` instead (the tool card shows
            it). None: only open figures are collected.
    """

    def __init__(
        self,
        namespace: Callable[[], dict[str, Any]],
        *,
        display: Display | None = None,
        display_hook: Callable[[Callable[[bytes], None]], Callable[[], None]] | None = None,
    ) -> None:
        self._namespace = namespace
        self._display = display
        self._display_hook = display_hook
        self._capture = _Capture()
        self._lock = asyncio.Lock()
        self._thread: threading.Thread | None = None
        self._abandoned: threading.Thread | None = None  # a thread that did not stop
        self._task: asyncio.Future[Any] | None = None
        self._stop_requested = False

    @property
    def busy(self) -> bool:
        """True while a run is going on, or a stopped run's thread has not ended yet."""
        return self._lock.locked() or (self._abandoned is not None and self._abandoned.is_alive())

    def stop(self) -> bool:
        """Stop the current run (the card's Stop). Returns whether there was one to stop."""
        if not self._lock.locked():
            return False
        self._stop_requested = True
        if self._thread is not None and self._thread.is_alive() and self._thread.ident is not None:
            return _raise_in_thread(self._thread.ident)
        if self._task is not None and not self._task.done():
            self._task.cancel()
            return True
        return False

    async def run(
        self, code: str, *, timeout_s: float, context: contextvars.Context | None = None, echo: bool = True
    ) -> RunResult:
        """Run `code` in the namespace; wait at most `timeout_s` seconds (plus 2 s to stop).

        Args:
            code: Python source; the value of a last expression is the result. A top-level
                ``await`` makes it a coroutine run on this loop.
            timeout_s: seconds before the run is stopped.
            context: the contextvars context of the notebook cell that output should go to
                (the running cell's parent header); default: the current one.
            echo: False keeps what the code writes to stdout/stderr for the result only
                (``run_cell`` shows it in the cell it runs, not in the `%%claude` cell).

        Returns:
            A :class:`RunResult`; errors in the code are in ``.error``, never raised.
        """
        if self._abandoned is not None and self._abandoned.is_alive():
            return RunResult(
                error="RuntimeError: a previous run_code is still running in the background "
                "(it did not react to being stopped); try again later"
            )
        async with self._lock:
            self._stop_requested = False
            try:
                return await self._run(code, timeout_s, context or contextvars.copy_context(), echo)
            finally:
                self._task = None

    async def _run(self, code: str, timeout_s: float, context: contextvars.Context, echo: bool = True) -> RunResult:
        filename = f"<run_code #{next(_counter)}>"
        result = RunResult()
        start = time.monotonic()
        try:
            compiled, is_coroutine = _compile(code, filename)
        except SyntaxError as exc:
            result.error = _format_error(exc, filename)
            return result
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        namespace = self._namespace()
        figures_before = _open_figures()
        images: list[bytes] = []
        uninstall = self._display_hook(images.append) if self._display_hook else None
        try:
            with self._capture:
                outcome = await (
                    self._run_coroutine(compiled, namespace, timeout_s, context, echo)
                    if is_coroutine
                    else self._run_thread(compiled, namespace, timeout_s, context, echo)
                )
        finally:
            if uninstall is not None:
                uninstall()
        (result.stdout, result.stderr, error, value, result.timed_out, result.still_running) = outcome
        result.stopped = self._stop_requested and not result.timed_out
        if error is not None and not isinstance(error, RunStopped):
            result.error = _format_error(error, filename)
        new_figures = [fig for num, fig in sorted(_open_figures().items()) if figures_before.get(num) is not fig]
        if value is not None:
            result.result_repr = _repr(value)
            if not any(value is fig for fig in new_figures):  # a figure is shown once, below
                self._show(context, value)
        for figure in new_figures:
            png = _figure_png(figure)
            if png:
                images.append(png)  # shown by the tool card, from the tool_result
            _close_figure(figure)
        result.images = images
        result.duration_s = time.monotonic() - start
        return result

    async def _run_thread(
        self,
        compiled: Any,
        namespace: dict[str, Any],
        timeout_s: float,
        context: contextvars.Context,
        echo: bool = True,
    ) -> tuple[str, str, BaseException | None, Any, bool, bool]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[BaseException | None, Any]] = loop.create_future()
        buffers: dict[str, io.StringIO] = {}

        def finish(outcome: tuple[BaseException | None, Any]) -> None:
            if not done.done():
                done.set_result(outcome)

        def target() -> None:
            ident = threading.get_ident()
            buffers["out"], buffers["err"] = self._capture.register(ident, echo)
            outcome: tuple[BaseException | None, Any]
            try:
                try:
                    eval(compiled, namespace)
                    outcome = (None, namespace.pop(_RESULT, None))
                finally:
                    namespace.pop(_RESULT, None)
            except BaseException as exc:  # noqa: BLE001 - reported to the model
                outcome = (exc, None)
            finally:
                self._capture.unregister(ident)
            try:
                loop.call_soon_threadsafe(finish, outcome)
            except RuntimeError:  # the loop is gone (a run stopped as its loop was closing)
                pass

        thread = threading.Thread(target=context.copy().run, args=(target,), name="kandev-run-code", daemon=True)
        self._thread = thread
        thread.start()
        timed_out = still_running = False
        try:
            error, value = await asyncio.wait_for(asyncio.shield(done), timeout_s)
        except TimeoutError:
            timed_out = True
            stopped = await self._stop_thread(thread, done)
            still_running = stopped is None
            if still_running:
                self._abandoned = thread
            error, value = stopped or (None, None)
        except asyncio.CancelledError:  # the tool call was cancelled: stop the code too
            self._stop_requested = True
            await self._stop_thread(thread, done)
            raise
        out, err = buffers.get("out"), buffers.get("err")
        return (out.getvalue() if out else "", err.getvalue() if err else "", error, value, timed_out, still_running)

    async def _stop_thread(
        self,
        thread: threading.Thread,
        done: asyncio.Future[tuple[BaseException | None, Any]],
    ) -> tuple[BaseException | None, Any] | None:
        """Raise RunStopped in `thread`; its outcome, or None if it is still running 2 s later."""
        if thread.ident is not None and thread.is_alive():
            _raise_in_thread(thread.ident)
        try:
            return await asyncio.wait_for(asyncio.shield(done), 2.0)
        except TimeoutError:
            return None

    async def _run_coroutine(
        self,
        compiled: Any,
        namespace: dict[str, Any],
        timeout_s: float,
        context: contextvars.Context,
        echo: bool = True,
    ) -> tuple[str, str, BaseException | None, Any, bool, bool]:
        ident = threading.get_ident()
        out, err = self._capture.register(ident, echo)

        async def body() -> Any:
            try:
                await eval(compiled, namespace)
                return namespace.pop(_RESULT, None)
            finally:
                namespace.pop(_RESULT, None)

        task = asyncio.get_running_loop().create_task(body(), context=context.copy())
        self._task = task
        error: BaseException | None = None
        value: Any = None
        timed_out = False
        try:
            value = await asyncio.wait_for(task, timeout_s)
        except TimeoutError:
            timed_out = True
        except asyncio.CancelledError:
            if not task.cancelled() or not self._stop_requested:
                raise
        except BaseException as exc:  # noqa: BLE001 - reported to the model
            error = exc
        finally:
            self._capture.unregister(ident)
        return out.getvalue(), err.getvalue(), error, value, timed_out, False

    def _show(self, context: contextvars.Context, value: Any) -> None:
        if self._display is not None:
            try:
                context.copy().run(self._display, value)
            except Exception:  # showing is best effort; the model has the repr
                log.debug("kernel tools could not display %r", type(value), exc_info=True)


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001
        return f"<repr failed: {type(exc).__name__}: {exc}>"


def _open_figures() -> dict[Any, Any]:
    """pyplot's open figures by number (empty if pyplot was never imported)."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return {}
    try:
        return {manager.num: manager.canvas.figure for manager in helpers.Gcf.get_all_fig_managers()}
    except Exception:  # noqa: BLE001
        return {}


def _figure_png(figure: Any) -> bytes | None:
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", bbox_inches="tight")
    except Exception:  # noqa: BLE001 - a figure that cannot render is skipped
        return None
    return buffer.getvalue()


def _close_figure(figure: Any) -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        try:
            pyplot.close(figure)
        except Exception:
            log.debug("kernel tools could not close a figure", exc_info=True)


def nbformat_outputs(result: RunResult, shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`run_cell`'s nbformat outputs of `result`, in the order a notebook shows them: streams,
    displays and the result (from `shown`, what the cell displayed, the result with its
    execution count), then the error."""
    outputs: list[dict[str, Any]] = []
    if result.stdout:
        outputs.append({"output_type": "stream", "name": "stdout", "text": result.stdout})
    if result.stderr:
        outputs.append({"output_type": "stream", "name": "stderr", "text": result.stderr})
    outputs.extend(o for o in shown if o["output_type"] == "display_data")
    outputs.extend(o for o in shown if o["output_type"] == "execute_result")
    if result.error:
        last = result.error.strip().splitlines()[-1] if result.error.strip() else "Error"
        ename, _, evalue = last.partition(": ")
        outputs.append(
            {
                "output_type": "error",
                "ename": ename.strip() or "Error",
                "evalue": evalue,
                "traceback": result.error.splitlines(),
            }
        )
    elif result.timed_out or result.stopped:
        outputs.append(
            {
                "output_type": "error",
                "ename": "KeyboardInterrupt",
                "evalue": "stopped",
                "traceback": ["KeyboardInterrupt: the run was stopped"],
            }
        )
    return outputs


@contextlib.contextmanager
def capture_display(publisher: Any, outputs: list[dict[str, Any]] | None) -> Iterator[None]:
    """While a `run_cell` cell runs, what it displays (``display()``, ``plt.show()``) goes to
    `outputs` (nbformat ``display_data``, for its own output area) instead of the `%%claude`
    cell's. `publisher` is the shell's ``display_pub`` (None: nothing to capture)."""
    if publisher is None:
        yield
        return
    had_own = "publish" in vars(publisher)
    original = publisher.publish

    def publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
        if outputs is not None and isinstance(data, dict):
            outputs.append({"output_type": "display_data", "data": dict(data), "metadata": dict(metadata or {})})

    had_clear = "clear_output" in vars(publisher)
    original_clear = publisher.clear_output

    def clear_output(*args: Any, **kwargs: Any) -> None:
        if outputs is not None:
            outputs.clear()

    publisher.publish, publisher.clear_output = publish, clear_output
    try:
        yield
    finally:
        for name, own, before in (("publish", had_own, original), ("clear_output", had_clear, original_clear)):
            if own:
                setattr(publisher, name, before)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(publisher, name)
