"""Each benchmark in ``benchmarks/`` runs from the clone in quick mode and every figure it
prints is a finite positive number (memory growth: finite), its headline ratios last.

What is measured is never compared with a target here (the machine is shared); a figure
that is missing, zero, negative, NaN or infinite fails.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\d.,])|(?:nan|inf)(?![a-wyz]))", re.IGNORECASE
)  # "1,234.5", "0.99x", "12 ms", "nan"; not "2.1.332" nor "information"
HEADLINE = re.compile(r"^headline: (?P<label>.+): (?P<ratio>\S+)x (?P<baseline>.+)$")


def run(name: str, *args: str) -> list[str]:
    """stdout lines of ``python benchmarks/<name>.py --quick <args>`` run from the clone."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def numbers(text: str) -> list[float]:
    """Every number in `text` ("1,234.5", "nan", "-3"), as floats."""
    return [float(m.group().replace(",", "")) for m in NUMBER.finditer(text)]


def assert_positive(text: str, context: str) -> list[float]:
    found = numbers(text)
    assert found, f"no figure in {context!r}"
    bad = [x for x in found if not (math.isfinite(x) and x > 0)]
    assert not bad, f"{bad} in {context!r}"
    return found


def headlines(lines: list[str]) -> list[float]:
    """The headline ratios: the last lines, each a finite positive number."""
    tail = [line for line in lines if line.startswith("headline: ")]
    assert tail and lines[-len(tail) :] == tail, "the headline ratios must be printed last"
    ratios = []
    for line in tail:
        match = HEADLINE.match(line)
        assert match, line
        ratios.append(float(match["ratio"]))
        assert math.isfinite(ratios[-1]) and ratios[-1] > 0, line
    return ratios


def test_the_checks_reject_a_figure_that_is_not_finite_and_positive() -> None:
    for text in ("warm turn 0.000 s", "median nan ms", "ratio inf", "growth -1.0 MB", "no figure"):
        with pytest.raises(AssertionError):
            assert_positive(text, text)
    with pytest.raises(AssertionError):
        headlines(["table 1.0", "headline: ours: nanx json.loads"])
    assert assert_positive("1,234.5 lines/s; 3 (4); 0.99x; v2.1.332 information", "ok") == [1234.5, 3.0, 4.0, 0.99]


def test_bench_adapter_prints_rates_and_its_ratio_to_json_loads() -> None:
    lines = run("bench_adapter")
    header = next(i for i, line in enumerate(lines) if line.startswith("pipeline"))
    rows = [line for line in lines[header + 2 :] if line.strip() and not line.startswith("headline")]
    pipelines = [row for row in rows if ":" in row[:48] or "json.loads" in row[:48]]
    assert any(row.startswith("json.loads only") for row in pipelines)
    assert any(row.startswith("kandev_nb") for row in pipelines)
    for row in rows:
        assert_positive(row[48:] if row in pipelines else row, row)
    assert re.search(r"^headline: framer \+ parse \+ adapter: \d+\.\d\dx json\.loads", "\n".join(lines), re.MULTILINE)
    headlines(lines)


def test_bench_ledger_prints_times_and_its_ratio() -> None:
    lines = run("bench_ledger")
    labels = ("headline", "==", "backend", "(no PostgreSQL")  # headlines, section and table headers
    figures = [line for line in lines if line.strip() and not line.startswith(labels)]
    assert len(figures) >= 12
    for line in figures:
        assert_positive(line.split("//")[0] if line.startswith("file size") else line, line)
    table = [line for line in figures if line.startswith(("sqlite ", "postgresql "))]
    assert table and all(len(numbers(line)) == 6 for line in table)
    assert len(headlines(lines)) == len(table)


UI_ROWS = (
    "bytes/byte, 80 KB over 60 s",
    "bytes/byte, 6,000-delta turn, simulated",
    "bytes/byte, 6,000-delta turn, real CLI",
    "text updates in any 1 s while streaming, simulated",
    "text updates in any 1 s while streaming, real CLI",
    "first token: CLI line read -> widget append sent",
    "prompt sent -> first delta: raw loop vs %%claude widget",
    "final rendering equal to the text: Markdown",
    "final rendering equal to the text: a code block split across chunks",
    "final rendering equal to the text: a table",
    "final rendering: real CLI turn text == scripted text",
    "large output, shell stdout 5 MB",
    "large output, file read 2 MB",
    "warm turn, raw loop",
    "warm turn, %%claude path",
    "per-turn overhead: %%claude / raw",
    "our CPU per warm turn: raw loop vs %%claude",
    "start-up (process + initialize): raw vs kandev Session.start",
    "first turn incl. start-up: raw vs %%claude",
    "warm %%claude turns, one session: RSS growth",
    "warm %%claude turns: Python heap growth",
)


def ui_summary(lines: list[str]) -> dict[str, str]:
    """The summary table's `measured` column by row, read at the header's column offsets."""
    start = lines.index("Issue 8: every figure")
    header = lines[start + 1]
    left, right = header.index("measured"), header.index("result")
    rows = [line for line in lines[start + 2 :] if line and not line.startswith("headline")]
    return {row[:left].strip(): row[left:right].strip() for row in rows}


def check_ui(lines: list[str], expected: tuple[str, ...]) -> None:
    measured = ui_summary(lines)
    missing = [name for name in expected if not any(name in row for row in measured)]
    assert not missing, f"rows missing: {missing}\n{measured}"
    for row, value in measured.items():
        if value.startswith("equal") or value == "DIFFERENT":
            assert value == "equal", row  # the rendering checks are exact, not timed
        elif "growth" in row:  # memory can shrink a little; it must still be a number
            assert all(math.isfinite(x) for x in numbers(value)) and numbers(value), f"{row}: {value}"
        else:
            assert_positive(value, f"{row}: {value}")
    headlines(lines)


def test_bench_ui_quick_with_the_real_cli(cli_binary: object) -> None:
    lines = run("bench_ui", "--turns", "10")
    check_ui(lines, UI_ROWS)
    assert any("kernel CPU per 6,000-delta turn" in line for line in lines if line.startswith("headline"))


def test_bench_ui_without_the_cli_still_has_the_offline_rows() -> None:
    lines = run("bench_ui", "--no-real", "--turns", "10")
    offline = tuple(
        row
        for row in UI_ROWS
        if "real CLI" not in row and "raw" not in row and "%%claude" not in row and "first token" not in row
    )
    assert len(offline) == 8
    check_ui(lines, (*offline, "finished TurnViews (no CLI): Python heap growth"))


@pytest.fixture
def cli_binary() -> object:
    from kandev_nb.wire.cli import CLINotFoundError, find_cli

    try:
        return find_cli(None)
    except CLINotFoundError:
        pytest.skip("no Claude Code CLI here")


BROWSER_COLUMNS = (
    "long",
    "TBT ms",
    "worst ms",
    "swap worst",
    "main ms",
    "upd med",
    "upd max",
    "slope/100KB",
    "1st token",
)


def test_bench_browser_quick_prints_page_figures_against_jupyterlabs_stream_output(cli_binary: object) -> None:
    lines = run("bench_browser")
    start = next(i for i, line in enumerate(lines) if line.startswith("run "))
    assert all(c in lines[start] for c in BROWSER_COLUMNS)
    rows = lines[start + 1 : lines.index("", start)]
    names = [row[:32].strip() for row in rows]
    assert any(n.startswith("mix: %%claude") for n in names), names
    assert any(n.startswith("mix: JupyterLab stream") for n in names), names
    assert any(n.startswith("again: %%claude") for n in names), names
    for row in rows:
        floor = "JupyterLab stream" in row[:32]
        cells = dict(zip(BROWSER_COLUMNS, row[32:].split(), strict=True))
        for col, value in cells.items():
            if value == "-":  # the floor has no swap and no message handler of ours
                assert floor and col in ("swap worst", "upd med", "upd max", "slope/100KB"), row
                continue
            x = float(value.replace(",", ""))
            assert math.isfinite(x), f"{row}: {col}"
            if col in ("main ms", "1st token"):
                assert x > 0, f"{row}: {col}"
            elif col != "slope/100KB":  # counts and long-task times can be 0; a slope can be negative
                assert x >= 0, f"{row}: {col}"
    assert any(line.startswith("against JupyterLab's own stream output") for line in lines)
    targets = next(line for line in lines if line.startswith("targets, mix"))
    figures = dict(
        re.findall(
            r"(median TBT|JupyterLab's stream output|difference|worst task|first token) (-?[\d,.]+|nan)", targets
        )
    )
    assert set(figures) == {"median TBT", "JupyterLab's stream output", "difference", "worst task", "first token"}
    for label, value in figures.items():
        x = float(value.replace(",", ""))
        assert math.isfinite(x), targets
        assert x > 0 if label == "first token" else (label == "difference" or x >= 0), targets
    assert len(headlines(lines)) == 2


FLEET_LABEL = 44
"""Width of a ``bench_fleet`` table line's label: its figures start after it."""

KERNEL_STRETCHES = [
    "slot -> CLI spawned (ours)",
    "CLI start + initialize (spawn -> answer)",
    "initialize -> prompt sent (ours)",
    "prompt -> model request (the CLI)",
    "model request -> result read",
    "of which the API (duration_api_ms)",
    "result -> close (ours: judge, ledger)",
    "CLI exit (Session.close)",
    "close -> row finished (ours)",
    "row: slot -> finished",
]
CLUSTER_STRETCHES = [
    "start msg -> prompt sent (CLI start, init)",
    "prompt -> model request (the CLI)",
    "model request -> result read",
    "of which the API (duration_api_ms)",
    "result -> CLI exited (Session.close)",
    "CLI exited -> task returned (lease back)",
    "task returned -> kernel has it (Dask)",
    "kernel has it -> row finished (ours)",
    "row: slot -> finished",
]


def fleet_figures(lines: list[str]) -> dict[str, list[float]]:
    """``bench_fleet``'s table before where a row's time goes: label -> its figures."""
    end = next(i for i, line in enumerate(lines) if line.startswith("where a row's time goes"))
    return {line[:FLEET_LABEL].strip(): numbers(line[FLEET_LABEL:]) for line in lines[1:end]}


def check_costs(figures: dict[str, list[float]], rows: int) -> None:
    """The kernel's side of the fleet: CPU, memory growth (finite, >= 0), saved output, comm."""
    assert figures["kernel CPU per row"][0] > 0
    growth = figures["kernel peak RSS growth"][0]
    assert math.isfinite(growth) and growth >= 0
    assert figures["fleet cell saved output"][0] > 0
    assert figures[f"board comm over the {rows}-row fleet"][0] > 0


def check_stretches(lines: list[str], labels: list[str], rows: int) -> None:
    """Where a row's time goes: every row measured, the labels in order, each figure finite;
    the row's total positive and the stretches adding up to it."""
    start = next(i for i, line in enumerate(lines) if line.startswith("where a row's time goes"))
    assert f"({rows} rows)" in lines[start], lines[start]
    table = [line for line in lines[start + 2 :] if line.startswith("  ")]
    assert [line[:FLEET_LABEL].strip() for line in table] == labels, table
    means = []
    for line in table:
        figures = numbers(line[FLEET_LABEL:])
        assert len(figures) == 3 and all(math.isfinite(x) for x in figures), line
        means.append(figures[0])
    parts = [mean for label, mean in zip(labels, means, strict=True) if not label.startswith("of which")]
    assert means[-1] > 0 and abs(sum(parts[:-1]) - means[-1]) < 0.01 * means[-1] + 1, table


def test_bench_fleet_quick_prints_rows_per_minute_and_its_ratios(cli_binary: object) -> None:
    lines = run("bench_fleet")
    figures = fleet_figures(lines)
    rates = ("Agent SDK gather + semaphore", "kandev_nb.fleet (ledger, board)", "kandev_nb.fleet at concurrency 1")
    for label in rates:
        assert figures[label][0] > 0, label
    check_costs(figures, 8)
    assert figures["board comm, 6 rows streaming"][0] > 0
    check_stretches(lines, KERNEL_STRETCHES, 8)
    assert len(headlines(lines)) == 2


@pytest.mark.cluster
def test_bench_fleet_cluster_quick_prints_rows_per_minute_round_trip_and_messages(cli_binary: object) -> None:
    pytest.importorskip("distributed")
    lines = run("bench_fleet", "--cluster")
    figures = fleet_figures(lines)
    assert list(figures) == [
        "LocalCluster(2 worker processes) up",
        "Agent SDK gather + semaphore",
        "fleet in the kernel",
        "fleet on the LocalCluster",
        "kernel CPU per row",
        "kernel peak RSS growth",
        "fleet cell saved output",
        "board comm over the 8-row fleet",
        "approval round trip, 6 asks",
        "Dask messages per row, no approval",
        "Dask messages per row, one approval",
    ], lines
    for label in list(figures)[:4] + ["approval round trip, 6 asks"]:
        assert figures[label] and all(x > 0 and math.isfinite(x) for x in figures[label]), label
    check_costs(figures, 8)
    for label in list(figures)[-2:]:  # no approval: no Queue answer (0) is the right figure
        log_events, answers = figures[label]
        assert math.isfinite(answers) and answers >= 0 and log_events > 0, label
    check_stretches(lines, CLUSTER_STRETCHES, 8)
    assert len(headlines(lines)) == 2
