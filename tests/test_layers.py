"""The package is layered by stage, and imports point one way (issue 12).

``wire`` (the CLI, transports, wire models, control plane) and ``policy`` (permission rules,
enforcement, grants, bindings; no imports of ours) <- ``agent`` (adapter, events, turns,
permissions, the Session) <- ``render`` (pure HTML/Markdown) / ``ledger`` / ``kernel_tools``
<- ``fleet`` (one agent per row of a DataFrame) <- ``notebook`` (the magic and widgets), and
only the extension entry point
``kandev_nb/__init__.py`` imports ``notebook``. ``testing`` ships the scripted model server
and stands alone. Every import is checked, also those inside functions; cycles are checked
among the imports that run at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "kandev_nb"
ROOT_FILES = {"__init__.py", "_version.py", "errors.py", "redact.py"}
SHARED = {"kandev_nb._version", "kandev_nb.errors", "kandev_nb.redact"}  # importable from every stage
ALLOWED: dict[str, set[str]] = {
    "wire": set(),
    "policy": set(),  # permission rules: pure, below agent
    "agent": {"wire", "policy"},
    "render": {"agent", "wire", "policy"},
    "ledger": {"agent", "wire", "policy"},
    "kernel_tools": {"agent", "wire", "policy"},
    "fleet": {"agent", "wire", "ledger", "kernel_tools", "policy"},
    "notebook": {"agent", "wire", "render", "ledger", "kernel_tools", "policy", "fleet"},
    "testing": set(),
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(module: str, *, import_time_only: bool) -> set[str]:
    """The kandev_nb modules that ``module`` imports (explicit names, resolved to modules)."""
    tree = ast.parse(MODULES[module].read_text())
    is_pkg = MODULES[module].name == "__init__.py"
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.orelse)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and import_time_only:
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("kandev_nb"))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = module.split(".") if is_pkg else module.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                if base.startswith("kandev_nb"):
                    for alias in node.names:
                        sub = f"{base}.{alias.name}"
                        found.add(sub if sub in MODULES else base)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    visit([child])

    visit(tree.body)
    found.discard(module)
    return found


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


def test_the_root_holds_only_the_entry_point_version_and_errors() -> None:
    extra = {p.name for p in PKG.glob("*.py")} - ROOT_FILES
    assert not extra, f"modules at the package root: {sorted(extra)}; put them in a stage package"
    assert {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()} <= set(ALLOWED)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    stage = _stage(module)
    if module == "kandev_nb":
        return  # the extension entry point wires the stages together
    wrong = []
    for target in _imports(module, import_time_only=False):
        if target in SHARED:
            continue
        other = _stage(target)
        if other is None:
            wrong.append(f"{target} (the package root; import the stage module itself)")
        elif other != stage and other not in ALLOWED.get(stage or "", set()):
            wrong.append(target)
    assert not wrong, f"{module} ({stage}) imports against the direction: {sorted(wrong)}"


def test_no_import_cycle_at_import_time() -> None:
    graph = {m: _imports(m, import_time_only=True) & MODULES.keys() for m in MODULES}
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := dfs(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := dfs(m)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_no_module_is_over_600_lines() -> None:
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert not long, f"split these modules: {long}"


def test_every_error_is_a_kandev_error_and_exported() -> None:
    import importlib
    import inspect

    import kandev_nb
    from kandev_nb import errors

    outside = {"kandev_nb.kernel_tools._run.RunStopped"}  # a BaseException raised inside user code
    found = []
    for module in MODULES:
        mod = importlib.import_module(module)
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module:
                found.append(obj)
                if f"{module}.{name}" not in outside:
                    assert issubclass(obj, errors.KandevError), f"{module}.{name} is not a KandevError"
    assert len(found) >= 15
    assert set(errors.__all__) <= set(kandev_nb.__all__)
    assert all((getattr(errors, n).__doc__ or "").strip() for n in errors.__all__)


HEADLESS = {"wire", "policy", "agent", "render"}  # run in a terminal, a test or a replay: no front end


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _stage(m) in HEADLESS))
def test_the_core_imports_no_front_end(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
    front = sorted(n for n in names if n.split(".")[0] in {"ipywidgets", "anywidget", "IPython", "pandas"})
    assert not front, f"{module} imports {front}: only notebook/ (widgets, magic) and ledger/ (pandas) may"
