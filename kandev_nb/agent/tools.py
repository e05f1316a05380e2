"""Tool calls and results -> `NormalizedPayload`, the seed's discriminated union.

A `tool_use` block (name, id, input) becomes a payload with :func:`normalize_tool_call`;
the matching `tool_result` block (plus the `user` line's structured `tool_use_result`)
enriches it with :func:`normalize_tool_result`. Payloads are plain values: the adapter
keeps the latest one per `tool_use_id` and renderers switch on ``payload.kind``.

Kinds (the seed's table)::

    Edit, Write, NotebookEdit        -> modify_file   (with a unified diff)
    Read                             -> read_file
    Glob, Grep                       -> code_search
    Bash                             -> shell_exec
    WebFetch, WebSearch              -> http_request
    Task, Agent                      -> subagent_task
    TaskCreate                       -> create_task
    TaskUpdate, TaskList, TodoWrite  -> manage_todos
    ExitPlanMode                     -> plan
    mcp__kernel__<notebook tool>     -> notebook_cell (kandev_nb.agent.cells)
    anything else                    -> generic
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kandev_nb.agent.cells import NOTEBOOK_TOOLS, NotebookCell, notebook_cell

__all__ = [
    "CodeSearch",
    "CreateTask",
    "FileMutation",
    "Generic",
    "HttpRequest",
    "ManageTodos",
    "ModifyFile",
    "NormalizedPayload",
    "NotebookCell",
    "Plan",
    "ReadFile",
    "ShellExec",
    "ShellOutput",
    "SubagentTask",
    "TodoItem",
    "map_todo_status",
    "normalize_tool_call",
    "normalize_tool_result",
    "tool_result_images",
    "tool_result_text",
    "tool_title",
    "unified_diff",
]


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReadFile(_Payload):
    """A `Read` call: `file_path`, optional 1-based `offset` and `limit` (lines)."""

    kind: Literal["read_file"] = "read_file"
    file_path: str
    offset: int | None = None
    limit: int | None = None
    content: str | None = None
    line_count: int | None = None
    start_line: int | None = None
    total_lines: int | None = None
    truncated: bool = False


class FileMutation(_Payload):
    """One change to a file. `type` is "create", "replace" or "notebook_edit"."""

    type: Literal["create", "replace", "notebook_edit"]
    content: str | None = None
    old_content: str | None = None
    new_content: str | None = None
    diff: str = ""
    added: int = 0
    removed: int = 0


class ModifyFile(_Payload):
    """`Edit`, `Write` or `NotebookEdit`: the path and its mutations, each with a diff."""

    kind: Literal["modify_file"] = "modify_file"
    tool: str
    file_path: str
    mutations: tuple[FileMutation, ...] = ()
    result: str | None = None


class ShellOutput(_Payload):
    """What a shell command printed. `exit_code` is None when the CLI did not say."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    interrupted: bool = False


class ShellExec(_Payload):
    """A `Bash` call. `timeout` is in milliseconds, as the CLI's input gives it."""

    kind: Literal["shell_exec"] = "shell_exec"
    command: str
    description: str | None = None
    timeout: int | None = None
    background: bool = False
    work_dir: str | None = None
    output: ShellOutput | None = None


class CodeSearch(_Payload):
    """`Glob` or `Grep`: the pattern and scope; `files` and `text` once the result arrives."""

    kind: Literal["code_search"] = "code_search"
    tool: str
    pattern: str
    path: str | None = None
    glob: str | None = None
    files: tuple[str, ...] = ()
    file_count: int | None = None
    text: str | None = None
    truncated: bool = False


class HttpRequest(_Payload):
    """`WebFetch` (url) or `WebSearch` (query); `status` is the HTTP code when known."""

    kind: Literal["http_request"] = "http_request"
    tool: str
    url: str | None = None
    query: str | None = None
    method: str = "GET"
    status: int | None = None
    response: str | None = None
    is_error: bool = False


class SubagentTask(_Payload):
    """A `Task`/`Agent` call; totals (ms, tokens) filled from the result's structured data."""

    kind: Literal["subagent_task"] = "subagent_task"
    description: str = ""
    prompt: str = ""
    subagent_type: str | None = None
    result: str | None = None
    total_duration_ms: int | None = None
    total_tokens: int | None = None
    total_tool_use_count: int | None = None


class CreateTask(_Payload):
    """`TaskCreate`: a task the agent added to its list."""

    kind: Literal["create_task"] = "create_task"
    title: str
    description: str | None = None
    task_id: str | None = None
    active_form: str | None = None


class TodoItem(_Payload):
    """One entry of the agent's task list; `status` is pending, in_progress or completed."""

    id: str
    description: str
    status: Literal["pending", "in_progress", "completed"] = "pending"
    active_form: str | None = None


class ManageTodos(_Payload):
    """`TodoWrite` ("replace"), `TaskUpdate` ("update"; "delete" for status deleted), `TaskList` ("list").

    For "update", `items` holds the one task named by the call, with only the fields the
    call gave filled in (a status the call did not give reads "pending").
    """

    kind: Literal["manage_todos"] = "manage_todos"
    tool: str
    operation: Literal["replace", "update", "delete", "list"]
    items: tuple[TodoItem, ...] = ()
    result: str | None = None


class Plan(_Payload):
    """`ExitPlanMode`: the plan (Markdown) the agent asks to carry out."""

    kind: Literal["plan"] = "plan"
    plan: str
    result: str | None = None


class Generic(_Payload):
    """Any other tool, MCP tools included: its raw input and its output text.

    `wrapped`: for the ``StructuredOutput`` call of a ``--schema`` turn whose answer kandev-nb
    sent wrapped (a list as ``{"items": [...]}``, a plain value as ``{"value": ...}``, as the
    CLI needs an object), the wrapper's property: the card shows what is inside it, the answer
    (set by the session, :func:`kandev_nb.agent.structured.mark_wrapped`; not serialized).
    """

    kind: Literal["generic"] = "generic"
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    output: str | None = None
    wrapped: str | None = Field(default=None, exclude=True)


NormalizedPayload = Annotated[
    ReadFile
    | ModifyFile
    | ShellExec
    | CodeSearch
    | HttpRequest
    | SubagentTask
    | CreateTask
    | ManageTodos
    | Plan
    | NotebookCell
    | Generic,
    Field(discriminator="kind"),
]


# -- small helpers ---------------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def snippet_diff(old: str, new: str, path: str) -> tuple[str, int, int]:
    """:func:`unified_diff` of an Edit's `old_string` -> `new_string`: a snippet's last line
    is not the end of the file, so no "No newline at end of file" marker is made up (a
    snippet's hunks count lines from 1; :func:`kandev_nb.agent.file_lines.shift_hunks` moves them)."""
    if old and new and not old.endswith("\n") and not new.endswith("\n"):
        old, new = old + "\n", new + "\n"
    return unified_diff(old, new, path)


def unified_diff(old: str, new: str, path: str) -> tuple[str, int, int]:
    """A unified diff of `old` -> `new` for `path`, with counts of added/removed lines."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{path.lstrip('/')}" if old else "/dev/null",
            tofile=f"b/{path.lstrip('/')}",
        )
    )
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    text = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
    return text, added, removed


_TODO_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def map_todo_status(status: Any) -> Literal["pending", "in_progress", "completed"]:
    """The TodoWrite bridge's status mapping: known statuses kept, anything else pending."""
    mapped = _TODO_STATUS.get(status if isinstance(status, str) else "", "pending")
    return mapped  # type: ignore[return-value]


def _todo_items(todos: Any, prefix: str = "") -> tuple[TodoItem, ...]:
    if not isinstance(todos, list):
        return ()
    items = []
    for index, todo in enumerate(todos):
        if not isinstance(todo, dict):
            continue
        items.append(
            TodoItem(
                id=str(todo.get("id") or f"{prefix}{index}"),
                description=str(todo.get("content") or todo.get("subject") or ""),
                status=map_todo_status(todo.get("status")),
                active_form=_str(todo.get("activeForm")),
            )
        )
    return tuple(items)


# -- tool_use -> payload ---------------------------------------------------------------


def normalize_tool_call(name: str, tool_input: dict[str, Any]) -> NormalizedPayload:
    """Map a `tool_use` block's `name` and `input` to its payload (no output yet).

    Never raises: missing or mistyped fields fall back to defaults, and an unknown tool
    becomes :class:`Generic` with the input unchanged.
    """
    i = tool_input if isinstance(tool_input, dict) else {}
    path = _str(i.get("file_path")) or _str(i.get("notebook_path")) or ""
    match name:
        case "Read":
            return ReadFile(file_path=path, offset=_int(i.get("offset")), limit=_int(i.get("limit")))
        case "Write":
            content = _str(i.get("content")) or ""
            diff, added, removed = unified_diff("", content, path)
            mutation = FileMutation(type="create", content=content, diff=diff, added=added, removed=removed)
            return ModifyFile(tool=name, file_path=path, mutations=(mutation,))
        case "Edit":
            old, new = _str(i.get("old_string")) or "", _str(i.get("new_string")) or ""
            diff, added, removed = snippet_diff(old, new, path)
            mutation = FileMutation(
                type="replace", old_content=old, new_content=new, diff=diff, added=added, removed=removed
            )
            return ModifyFile(tool=name, file_path=path, mutations=(mutation,))
        case "MultiEdit":
            mutations = []
            edits = i.get("edits")
            for edit in edits if isinstance(edits, list) else []:  # a model's malformed input: no edits
                if isinstance(edit, dict):
                    old, new = _str(edit.get("old_string")) or "", _str(edit.get("new_string")) or ""
                    diff, added, removed = snippet_diff(old, new, path)
                    mutations.append(
                        FileMutation(
                            type="replace", old_content=old, new_content=new, diff=diff, added=added, removed=removed
                        )
                    )
            return ModifyFile(tool=name, file_path=path, mutations=tuple(mutations))
        case "NotebookEdit":
            source = _str(i.get("new_source")) or ""
            diff, added, removed = unified_diff("", source, path)
            mutation = FileMutation(type="notebook_edit", new_content=source, diff=diff, added=added, removed=removed)
            return ModifyFile(tool=name, file_path=path, mutations=(mutation,))
        case "Bash":
            return ShellExec(
                command=_str(i.get("command")) or "",
                description=_str(i.get("description")),
                timeout=_int(i.get("timeout")),
                background=bool(i.get("run_in_background")),
            )
        case "Glob" | "Grep":
            return CodeSearch(
                tool=name,
                pattern=_str(i.get("pattern")) or "",
                path=_str(i.get("path")),
                glob=_str(i.get("glob")),
            )
        case "WebFetch":
            return HttpRequest(tool=name, url=_str(i.get("url")))
        case "WebSearch":
            return HttpRequest(tool=name, query=_str(i.get("query")))
        case "Task" | "Agent":
            return SubagentTask(
                description=_str(i.get("description")) or "",
                prompt=_str(i.get("prompt")) or "",
                subagent_type=_str(i.get("subagent_type")),
            )
        case "TaskCreate":
            return CreateTask(
                title=_str(i.get("subject")) or _str(i.get("title")) or "",
                description=_str(i.get("description")),
                active_form=_str(i.get("activeForm")),
            )
        case "TodoWrite":
            return ManageTodos(tool=name, operation="replace", items=_todo_items(i.get("todos")))
        case "TaskUpdate":
            item = TodoItem(
                id=str(i.get("taskId") or i.get("id") or ""),
                description=_str(i.get("subject")) or "",
                status=map_todo_status(i.get("status")),
                active_form=_str(i.get("activeForm")),
            )
            operation: Literal["update", "delete"] = "delete" if i.get("status") == "deleted" else "update"
            return ManageTodos(tool=name, operation=operation, items=(item,))
        case "TaskList":
            return ManageTodos(tool=name, operation="list")
        case "ExitPlanMode":
            return Plan(plan=_str(i.get("plan")) or "")
        case _ if name in NOTEBOOK_TOOLS:
            return notebook_cell(name, i)
        case _:
            return Generic(name=name, input=dict(i))


def tool_title(name: str, payload: NormalizedPayload) -> str:
    """A one-line title for a card: the command, the path, the pattern, the URL..."""
    match payload:
        case ShellExec(command=command):
            first = command.strip().splitlines()[0] if command.strip() else ""
            return first[:200]
        case ReadFile(file_path=path) | ModifyFile(file_path=path):
            return path
        case CodeSearch(pattern=pattern, path=path):
            return f"{pattern}" + (f" in {path}" if path else "")
        case HttpRequest(url=url, query=query):
            return url or query or name
        case SubagentTask(description=description, subagent_type=kind):
            return description or (kind or name)
        case CreateTask(title=title):
            return title
        case ManageTodos(items=items, operation=operation):
            return f"{len(items)} tasks" if operation == "replace" else operation
        case Plan():
            return "Plan"
        case NotebookCell():  # the card's label names the tool ("kernel · read_notebook")
            return payload.where
        case _:
            return name


# -- tool_result -> enriched payload ---------------------------------------------------


_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def tool_result_images(content: Any) -> tuple[str, ...]:
    """The pictures of a `tool_result.content` as ``data:`` URIs, in order.

    Only base64 image blocks (``{"type": "image", "source": {"type": "base64",
    "media_type": "image/png", "data": ...}}``, as the in-kernel `run_code` returns its
    figures) of PNG, JPEG, GIF or WebP; anything else (URL sources) is skipped, so showing
    them never fetches anything.
    """
    if not isinstance(content, list):
        return ()
    out = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "image":
            continue
        source = block.get("source")
        if not isinstance(source, dict):  # a hostile block: skipped, never fails the tool_result
            continue
        media, data = source.get("media_type"), source.get("data")
        if (
            source.get("type") == "base64"
            and isinstance(media, str)
            and media in _IMAGE_TYPES
            and isinstance(data, str)
            and re.fullmatch(r"[A-Za-z0-9+/=\s]*", data)
        ):
            out.append(f"data:{media};base64,{data}")
    return tuple(out)


def tool_result_text(content: Any) -> str:
    """The text of a `tool_result.content`: a string, or text blocks joined by newlines.

    Image blocks become a placeholder like ``[image: image/png]`` so that nothing is
    silently dropped from what is shown.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            source = block.get("source")
            media = source.get("media_type", "unknown") if isinstance(source, dict) else "unknown"
            parts.append(f"[image: {media}]")
        else:
            parts.append(f"[{block.get('type', 'block')}]")
    return "\n".join(parts)


_EXIT_CODE = re.compile(r"(?:exit code|Exit code)[:\s]+(-?\d+)")


def _shell_output(text: str, structured: Any, is_error: bool) -> ShellOutput:
    if isinstance(structured, dict) and ("stdout" in structured or "stderr" in structured):
        code = _int(structured.get("exitCode", structured.get("exit_code")))
        interrupted = bool(structured.get("interrupted"))
        if code is None and not interrupted:
            code = 1 if is_error else 0
        return ShellOutput(
            stdout=_str(structured.get("stdout")) or "",
            stderr=_str(structured.get("stderr")) or "",
            exit_code=code,
            interrupted=interrupted,
        )
    match = _EXIT_CODE.search(text)
    code = int(match.group(1)) if match else (1 if is_error else 0)
    if is_error:
        return ShellOutput(stderr=text, exit_code=code)
    return ShellOutput(stdout=text, exit_code=code)


def normalize_tool_result(
    payload: NormalizedPayload, content: Any, is_error: bool, structured: Any = None
) -> NormalizedPayload:
    """Enrich `payload` with a `tool_result`.

    Args:
        payload: what :func:`normalize_tool_call` returned for this `tool_use_id`.
        content: the `tool_result.content` (a string or a list of blocks).
        is_error: the `tool_result.is_error` flag.
        structured: the `user` line's top-level `tool_use_result`, when present (a dict for
            Bash/Read/Edit/Task results; a plain string on a denial).

    Returns:
        A new payload of the same kind; never raises on odd input.
    """
    text = tool_result_text(content)
    s = structured if isinstance(structured, dict) else {}
    match payload:
        case ShellExec():
            return payload.model_copy(update={"output": _shell_output(text, structured, is_error)})
        case ReadFile():
            file = s.get("file") if isinstance(s.get("file"), dict) else {}
            body = _str(file.get("content")) if file else None
            return payload.model_copy(
                update={
                    "content": body if body is not None else text,
                    "line_count": _int(file.get("numLines")) if file else None,
                    "start_line": _int(file.get("startLine")) if file else None,
                    "total_lines": _int(file.get("totalLines")) if file else None,
                }
            )
        case ModifyFile():
            original = _str(s.get("originalFile"))
            if payload.tool == "Edit" and original is not None and not is_error:
                old, new = _str(s.get("oldString")) or "", _str(s.get("newString")) or ""
                updated = original.replace(old, new) if s.get("replaceAll") else original.replace(old, new, 1)
                diff, added, removed = unified_diff(original, updated, payload.file_path)
                mutation = FileMutation(
                    type="replace", old_content=old, new_content=new, diff=diff, added=added, removed=removed
                )
                return payload.model_copy(update={"mutations": (mutation,), "result": text})
            return payload.model_copy(update={"result": text})
        case CodeSearch():
            if is_error:
                return payload.model_copy(update={"text": text})
            files = s.get("filenames")
            if isinstance(files, list):
                names = tuple(str(f) for f in files)
                return payload.model_copy(
                    update={
                        "files": names,
                        "file_count": _int(s.get("numFiles")) or len(names),
                        "text": text,
                        "truncated": bool(s.get("truncated")),
                    }
                )
            lines = tuple(ln for ln in text.splitlines() if ln.strip())
            return payload.model_copy(update={"text": text, "files": lines, "file_count": len(lines)})
        case HttpRequest():
            return payload.model_copy(update={"response": text, "is_error": is_error, "status": _int(s.get("code"))})
        case SubagentTask():
            return payload.model_copy(
                update={
                    "result": text,
                    "total_duration_ms": _int(s.get("totalDurationMs")),
                    "total_tokens": _int(s.get("totalTokens")),
                    "total_tool_use_count": _int(s.get("totalToolUseCount")),
                }
            )
        case CreateTask():
            task = s.get("task") if isinstance(s.get("task"), dict) else {}
            return payload.model_copy(update={"task_id": str(task["id"]) if task and "id" in task else None})
        case ManageTodos(operation="list"):
            tasks = s.get("tasks")
            return payload.model_copy(update={"items": _todo_items(tasks), "result": text})
        case ManageTodos():
            return payload.model_copy(update={"result": text})
        case Plan():
            return payload.model_copy(update={"result": text})
        case NotebookCell():
            return payload.model_copy(update={"output": text})
        case Generic():
            return payload.model_copy(update={"output": text})
    return payload
