"""Issue 37 (first slice): the prebuilt extension is part of the Python package.

- one version: package.json's is kandev_nb.__version__ and the built labextension's;
- the settings schema names kandev_nb's permission modes, as the TypeScript interface does;
- ``jupyter labextension list`` shows kandev-nb "enabled OK" (Lab and Notebook 7 both read it);
- (slow) a wheel built from the sources installs into a fresh environment with no Node.js on
  PATH and is "enabled OK" there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import kandev_nb
from kandev_nb.agent.permissions import MODES

REPO = Path(__file__).resolve().parents[2]
PACKAGE = json.loads((REPO / "package.json").read_text())
SCHEMA = json.loads((REPO / "schema" / "plugin.json").read_text())
ANSI = re.compile(r"\x1b\[[0-9;]*m")
ENABLED_OK = re.compile(r"kandev-nb v(\S+) enabled\s+OK")


def _labextension_list(python: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [python, "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
        check=False,
    )
    return ANSI.sub("", done.stdout + done.stderr)


def test_one_version_everywhere() -> None:
    from importlib.metadata import version

    assert kandev_nb.__version__ == PACKAGE["version"] == version("kandev-nb")
    built = REPO / "kandev_nb" / "labextension" / "package.json"
    if built.exists():  # an installed checkout (pip install -e) has it
        assert json.loads(built.read_text())["version"] == PACKAGE["version"]


def test_the_settings_schema_names_kandev_nbs_modes() -> None:
    props = SCHEMA["properties"]
    assert SCHEMA["title"] == "Claude (kandev-nb)"
    assert props["defaultMode"]["enum"] == list(MODES)
    assert props["defaultMode"]["default"] == "supervised"  # the CLI's "default" mode
    assert props["unansweredCard"]["enum"] == ["wait", "deny-after"]
    assert props["denyAfterSeconds"]["default"] == 300  # kandev_nb.notebook.state: approval_timeout
    assert props["notifications"]["default"] is True
    source = (REPO / "src" / "index.ts").read_text()
    union = re.search(r"export type PermissionMode = ([^;]+);", source)
    assert union is not None
    assert re.findall(r"'([^']+)'", union.group(1)) == list(MODES)
    for name in props:
        assert re.search(rf"^\s+{name}: ", source, re.MULTILINE), f"IKandevNbSettings lacks {name}"


def test_the_shortcuts_run_kandev_nb_commands_and_shadow_no_jupyterlab_default() -> None:
    """The schema's shortcuts (open the panel, allow / deny the oldest approval) are bound to
    commands the extension registers, and none of their keys is bound by JupyterLab 4 or
    Notebook 7 (their schemas, installed here) or another installed extension."""
    ours = {s["command"]: s["keys"] for s in SCHEMA["jupyter.lab.shortcuts"]}
    assert ours == {
        "kandev-nb:open-panel": ["Accel Shift A"],
        "kandev-nb:allow-oldest": ["Accel Alt Enter"],
        "kandev-nb:deny-oldest": ["Accel Alt Backspace"],
    }
    source = (REPO / "src" / "index.ts").read_text()
    for command in ours:
        assert f"'{command}'" in source, command
    share = Path(sys.prefix) / "share" / "jupyter"
    schemas = [*(share / "lab" / "schemas").rglob("*.json"), *(share / "labextensions").glob("**/schemas/**/*.json")]
    taken: dict[str, str] = {}
    for path in schemas:
        if "kandev" in str(path):
            continue
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        for shortcut in data.get("jupyter.lab.shortcuts", []) if isinstance(data, dict) else []:
            taken.setdefault(" , ".join(shortcut.get("keys", [])), shortcut.get("command", "?"))
    assert "Accel Shift C" in taken, "JupyterLab's own schemas were not found"  # the command palette
    for keys in ours.values():
        assert " , ".join(keys) not in taken, f"{keys} is {taken.get(' , '.join(keys))}'s"


def test_the_build_output_is_ignored_and_the_lock_is_committed() -> None:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    paths = [
        "kandev_nb/labextension/package.json",
        "kandev_nb/static/bridge.js",
        "node_modules/x",
        "lib/index.js",
        "tsconfig.tsbuildinfo",
        ".yarn/x",
    ]
    done = subprocess.run(["git", "check-ignore", *paths], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.stdout.split() == paths
    tracked = subprocess.run(["git", "ls-files", "yarn.lock"], cwd=REPO, capture_output=True, text=True, check=False)
    assert tracked.stdout.strip() == "yarn.lock"
    assert "://" not in (REPO / "yarn.lock").read_text()  # resolutions by name and version only


def test_the_turn_renderer_is_a_mime_extension_of_the_kernels_mime_type() -> None:
    """The finished turn's MIME type (issue 35) is spelled once on each side, the same, and the
    built extension declares the renderer as JupyterLab's mimeExtension."""
    from kandev_nb.notebook.answers import TURN_MIME

    source = (REPO / "src" / "mime.ts").read_text()
    assert f"export const TURN_MIME = '{TURN_MIME}';" in source
    assert PACKAGE["jupyterlab"]["mimeExtension"] == "lib/mime.js"
    built = json.loads((REPO / "kandev_nb" / "labextension" / "package.json").read_text())
    assert built["jupyterlab"]["_build"]["mimeExtension"] == "./mimeExtension"


def test_labextension_list_shows_it_enabled_ok() -> None:
    listing = _labextension_list(sys.executable)
    match = ENABLED_OK.search(listing)
    assert match is not None, listing
    assert match.group(1) == PACKAGE["version"]


def _tracked_copy(target: Path) -> Path:
    """The repository's files (tracked, and new ones not ignored) copied to `target`: a clean
    source tree without node_modules or a previous build, as a fresh clone has it."""
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for raw in names:
        if not raw:
            continue
        source = REPO / raw.decode()
        if source.is_file():
            dest = target / raw.decode()
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
    return target


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_wheel_installs_and_is_enabled_without_node(tmp_path: Path) -> None:
    """Build the wheel from a clean copy of the sources (``KANDEV_NB_WHEEL`` reuses one), install
    it into a fresh venv with PATH holding only that venv's bin (no node, npm or jlpm), and list
    the extensions there. The venv borrows this environment's third-party packages (jupyterlab,
    pydantic...) through a .pth file, so kandev_nb itself and its labextension come only from the
    wheel."""
    given = os.environ.get("KANDEV_NB_WHEEL")
    if given:
        wheel = Path(given)
    else:
        # From this checkout, as `python -m build` or `pip wheel .` would: the extension the
        # editable install built from source is packed (hatch-jupyter-builder's skip-if-exists),
        # so this test shows the wheel works without Node; the build from source is shown by
        # every `pip install -e .` (CI's first command) and by KANDEV_NB_CLEAN_BUILD=1 here.
        source = _tracked_copy(tmp_path / "src") if os.environ.get("KANDEV_NB_CLEAN_BUILD") else REPO
        dist = tmp_path / "dist"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(source)],
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        (wheel,) = dist.glob("kandev_nb-*.whl")

    names = set(zipfile.ZipFile(wheel).namelist())
    data = f"kandev_nb-{PACKAGE['version']}.data/data/share/jupyter/labextensions/kandev-nb"
    for expected in ("package.json", "install.json", "static/style.js", "schemas/kandev-nb/plugin.json"):
        assert f"{data}/{expected}" in names, sorted(n for n in names if "labextensions" in n)
    assert any(re.fullmatch(rf"{re.escape(data)}/static/remoteEntry\.[0-9a-f]+\.js", n) for n in names)
    assert "kandev_nb/_version.py" in names
    for built in ("bridge.js", "notify.js", "approval.js", "kandev_lib.js", "kandev.css", "turn_actions.css"):
        assert f"kandev_nb/static/{built}" in names, sorted(n for n in names if "static" in n)
    assert not any("node_modules" in n or n.endswith(".ts") for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH")}
    env["PATH"] = str(venv / "bin")
    env["HOME"] = str(tmp_path / "home")  # no user-level Jupyter data dir
    for tool in ("node", "npm", "jlpm", "yarn"):
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    done = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    where = subprocess.run(
        [python, "-c", "import kandev_nb; print(kandev_nb.__file__, kandev_nb.__version__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # not the checkout, whose kandev_nb would shadow the wheel's
        check=True,
    ).stdout.split()
    assert where[0].startswith(str(venv)) and where[1] == PACKAGE["version"], where
    assert (venv / "share" / "jupyter" / "labextensions" / "kandev-nb" / "install.json").exists()
    listing = _labextension_list(python, env, cwd=tmp_path)
    match = ENABLED_OK.search(listing)
    assert match is not None and match.group(1) == PACKAGE["version"], listing
    assert str(venv / "share" / "jupyter" / "labextensions") in listing, listing


@pytest.mark.parametrize(
    ("script", "generated", "names"),
    [
        (
            "build:messages:lab",
            "src/messages.ts",
            ("Hello", "Answer", "Stop", "Settings", "State", "Answered", "Mismatch", "Waiting"),
        ),
        (
            "build:messages:widgets",
            "src/widgets/messages.ts",
            ("BridgeRequest", "BridgeHello", "BridgeAnswer", "ChipNext", "ToastAnswer", "StreamAppend", "TurnPress"),
        ),
    ],
)
def test_the_typescript_messages_are_generated_from_the_pydantic_models(
    script: str, generated: str, names: tuple[str, ...]
) -> None:
    """src/messages.ts and src/widgets/messages.ts are what ``jlpm build:messages`` makes of
    kandev_nb/notebook/lab_messages.py and widget_messages.py (json-schema-to-typescript over the
    models' JSON Schema): one declaration, both sides."""
    json2ts = REPO / "node_modules" / ".bin" / "json2ts"
    if not json2ts.exists():
        pytest.skip("node_modules is not installed here (a wheel-only environment)")
    scripts = json.loads((REPO / "package.json").read_text())["scripts"]
    assert script in scripts["build:messages"]
    command = scripts[script].split(" > ")[0].replace("python -m", f"{sys.executable} -m", 1)
    assert scripts[script].endswith(f" > {generated}")
    env = dict(os.environ, PATH=f"{json2ts.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    made = subprocess.run(command, shell=True, cwd=REPO, env=env, capture_output=True, text=True, check=True)
    committed = (REPO / generated).read_text()
    assert made.stdout == committed, f"{generated} is stale: run `jlpm build:messages`"
    for name in names:
        assert f"export interface {name} " in committed


def test_the_pages_code_lives_in_the_typescript_tree() -> None:
    """Issue 37 point 9: no JavaScript or CSS source under kandev_nb/ (only the built
    kandev_nb/static/ and kandev_nb/labextension/, both ignored by git), and no page code inline
    in a Python module: every widget's module is src/widgets/<name>.ts, built by
    scripts/build-widgets.mjs, which jlpm build and build:prod (the wheel, the editable install) run."""
    built = ("kandev_nb/static/", "kandev_nb/labextension/")
    sources = [
        p.relative_to(REPO).as_posix()
        for p in (REPO / "kandev_nb").rglob("*")
        if p.suffix in (".js", ".mjs", ".css", ".ts") and not p.relative_to(REPO).as_posix().startswith(built)
    ]
    assert sources == []
    for module in (REPO / "kandev_nb").rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert "export default {" not in text and "document.createElement(" not in text, module
    script = (REPO / "scripts" / "build-widgets.mjs").read_text()
    names = re.findall(r'^  "(\w+)",$', script, re.MULTILINE)
    assert "bridge" in names and "kandev_lib" in names
    for name in names:
        assert (REPO / "src" / "widgets" / f"{name}.ts").is_file(), name
    scripts = PACKAGE["scripts"]
    assert scripts["build:widgets"] == "node scripts/build-widgets.mjs"
    assert "jlpm build:widgets" in scripts["build"] and "jlpm build:widgets" in scripts["build:prod"]
    assert scripts["install:extension"] == "jlpm build"
    for dep in ("esbuild", "marked", "highlight.js"):
        assert dep in PACKAGE["devDependencies"], dep


def test_a_checkout_without_the_widgets_build_builds_them() -> None:
    """hatch-jupyter-builder skips the build when every skip-if-exists path exists: one of them is
    a built widget module, so a checkout whose labextension was built before kandev_nb/static/
    existed still builds it; the wheel and the sdist ship kandev_nb/static/ (not in git)."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    hook = project["tool"]["hatch"]["build"]["hooks"]["jupyter-builder"]
    assert "kandev_nb/static/kandev_lib.js" in hook["skip-if-exists"]
    assert {"kandev_nb/static/bridge.js", "kandev_nb/static/kandev_lib.js"} <= set(hook["ensured-targets"])
    targets = project["tool"]["hatch"]["build"]["targets"]
    assert "kandev_nb/static" in targets["wheel"]["artifacts"]
    assert "kandev_nb/static" in targets["sdist"]["artifacts"]
