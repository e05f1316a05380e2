"""The pure pieces: secret names, listings, inspections, caps, redaction of cell sources."""

from __future__ import annotations

import os
import types

import numpy as np
import pandas as pd
import pytest

from kandev_nb.kernel_tools._history import format_history, redact_assignments
from kandev_nb.kernel_tools._namespace import (
    HIDDEN,
    cap,
    format_listing,
    inspect_value,
    is_secret_name,
    list_variables,
    redact_secrets,
    redacted_copy,
    secret_values,
)


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "API_KEY",
        "GITHUB_TOKEN",
        "dbPassword",
        "client_secret",
        "apikey",
        "authtoken",
        "openaiApiKey",
        "pwd",
        "SECRET",
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["monkey", "keys", "df", "tokens_per_row", "donkey_count", "secretary"])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_listing_skips_modules_private_and_ipython_names_and_filters() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5]})
    ns = {
        "np": np,
        "_hidden": 1,
        "In": [],
        "Out": {},
        "get_ipython": print,
        "sales": frame,
        "weights": np.zeros((4, 2)),
        "names": ["x", "y"],
        "initial": 7,
    }
    rows = list_variables(ns, hidden={"initial": 7})
    assert [r.name for r in rows] == ["names", "sales", "weights"]
    by_name = {r.name: r for r in rows}
    assert (by_name["sales"].type, by_name["sales"].shape) == ("pandas.DataFrame", "(3, 2)")
    assert by_name["sales"].summary == "columns: a, b"
    assert (by_name["weights"].type, by_name["weights"].shape, by_name["weights"].size_bytes) == (
        "numpy.ndarray",
        "(4, 2)",
        64,
    )
    assert by_name["names"].shape == "len 2"
    assert [r.name for r in list_variables(ns, type_filter="dataframe")] == ["sales"]
    assert [r.name for r in list_variables(ns, name_pattern="w*")] == ["weights"]
    assert [r.name for r in list_variables(ns, name_pattern="ale")] == ["sales"]
    table = format_listing(rows)
    assert table.splitlines()[0].split() == ["name", "type", "shape", "size", "summary"]
    assert "sales    pandas.DataFrame  (3, 2)" in table


def test_secret_values_are_listed_hidden_unless_revealed() -> None:
    ns = {"api_token": "tok-123456", "n": 1}
    hidden = {r.name: r.summary for r in list_variables(ns)}
    assert hidden == {"api_token": HIDDEN, "n": "1"}
    assert {r.name: r.summary for r in list_variables(ns, reveal_secrets=True)}["api_token"] == "'tok-123456'"
    assert "tok-123456" not in inspect_value("api_token", ns["api_token"])
    assert "tok-123456" in inspect_value("api_token", ns["api_token"], reveal_secrets=True)


def test_secret_values_are_found_one_level_down_and_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "environ", {"PWD": "/work", "HOME": "/root"})  # no secrets in the environment
    settings = types.SimpleNamespace(password="hunter2hunter2", user="ada")
    ns = {
        "api_key": "sk-abcdef",
        "config": {"token": "t-987654", "name": "demo"},
        "settings": settings,
        "short_key": "ab",
    }
    assert secret_values(ns) == ["hunter2hunter2", "sk-abcdef", "t-987654"]
    assert redact_secrets("key sk-abcdef and t-987654 for ada", secret_values(ns)) == (
        "key <redacted> and <redacted> for ada"
    )


def test_inspect_dataframe_shows_dtypes_head_describe_and_nulls() -> None:
    frame = pd.DataFrame({"units": [3, 5, None], "region": ["n", "s", "e"]})
    text = inspect_value("frame", frame)
    assert "shape: (3, 2)" in text
    assert "units     float64" in text
    assert "null counts:\nunits     1\nregion    0" in text
    assert "describe():" in text and "mean" in text


def test_inspect_array_and_other_objects() -> None:
    text = inspect_value("arr", np.array([[1.0, np.nan], [3.0, 5.0]]))
    assert "shape: (2, 2)" in text and "dtype: float64" in text
    assert "min=1.0" in text and "max=5.0" in text and "nan count=1" in text
    long = inspect_value("long", "x" * 5000, repr_chars=100)
    assert "length: 5000" in long and "[repr cut: the first 100 of 5000 characters shown]" in long

    def area(width: float, height: float = 1.0) -> float:
        """Area of a rectangle."""
        return width * height

    func = inspect_value("area", area)
    assert "signature: area(width: 'float', height: 'float' = 1.0) -> 'float'" in func
    assert "doc: Area of a rectangle." in func


def test_cap_says_what_was_cut() -> None:
    assert cap("short", 10) == "short"
    assert cap("x" * 30, 10) == "x" * 10 + "\n[output cut: 10 of 30 characters shown]"


def test_redact_assignments_in_cell_sources() -> None:
    source = (
        'api_key = "sk-123"\nconnect(password="pw", user="me")\ncfg = {"token": "abc", "n": "x"}\n'
        'os.environ["OPENAI_API_KEY"] = "sk-9"\nif token_count == 3: pass\nkeys = ["a"]'
    )
    assert redact_assignments(source) == (
        'api_key = <redacted>\nconnect(password=<redacted>, user="me")\ncfg = {"token": <redacted>, "n": "x"}\n'
        'os.environ["OPENAI_API_KEY"] = <redacted>\nif token_count == 3: pass\nkeys = ["a"]'
    )


class _Shell:
    """The parts of an IPython shell that format_history reads."""

    def __init__(self, cells: list[str], outputs: dict[int, object]) -> None:
        self.history_manager = types.SimpleNamespace(input_hist_raw=["", *cells])
        self.user_ns = {"Out": outputs}
        self.execution_count = len(cells)  # the last cell is the one running
        self.compile = types.SimpleNamespace(_filename_map={})


def test_history_lists_the_cells_before_the_running_one(monkeypatch: pytest.MonkeyPatch) -> None:
    shell = _Shell(["x = 1", "secret = 'abc'", "x + 1", "%%claude\nwhat is x?"], {3: 2})
    monkeypatch.delattr("sys.last_value", raising=False)
    text = format_history(shell, cells=5)
    assert text == (
        "In [1]:\nx = 1\n\nIn [2]:\nsecret = <redacted>\n\nIn [3]:\nx + 1\n\nOut [3]: 2\n\n"
        "Last error: (no error so far)"
    )
    assert format_history(shell, cells=1).startswith("In [3]:")


def test_history_shows_the_last_error(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        {}["missing"]
    except KeyError as exc:
        monkeypatch.setattr("sys.last_value", exc, raising=False)
    text = format_history(_Shell(["{}['missing']", "%%claude\nwhy?"], {}))
    assert "Last error:\nTraceback (most recent call last):" in text
    assert text.rstrip().endswith("KeyError: 'missing'")


def test_secrets_are_found_at_any_depth_in_frames_and_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 17, 4
    monkeypatch.setattr(os, "environ", {"SERVICE_TOKEN": "svc-123456", "PWD": "/work", "HOME": "/root"})
    ns = {
        "cfg": {"a": {"b": {"password": "deep-pw-1"}}},
        "users": [{"token": "tok-in-list"}],
        "opts": {"password": ["pw-one", "pw-two"]},
        "people": pd.DataFrame({"password": ["col-pw-1"], "n": [1]}),
        "In": ["api_key = 'history-only'"],
    }
    found = secret_values(ns, extra=["conf-value"])
    assert sorted(found) == sorted(
        ["deep-pw-1", "tok-in-list", "pw-one", "pw-two", "col-pw-1", "svc-123456", "conf-value"]
    )


def test_shown_structures_and_frames_redact_secret_keys_and_columns() -> None:
    value = {"db": {"password": "x1", "host": "h"}, "items": [{"token": "t"}, 3], "ok": (1, {"secret": 2})}
    assert redacted_copy(value) == {
        "db": {"password": "<redacted>", "host": "h"},
        "items": [{"token": "<redacted>"}, 3],
        "ok": (1, {"secret": "<redacted>"}),
    }
    text = inspect_value("value", value)
    assert "x1" not in text and "'host': 'h'" in text
    frame = pd.DataFrame({"user": ["ada", "bob"], "password": ["pw-aaaa1", "pw-bbbb2"], "age": [3, 4]})
    shown = inspect_value("frame", frame)
    assert "pw-aaaa1" not in shown and "ada" in shown and "redacted columns (secret-looking names): password" in shown
    assert "pw-aaaa1" in inspect_value("frame", frame, reveal_secrets=True)
    series = inspect_value("col", frame["password"])
    assert "pw-aaaa1" not in series and "<hidden" in series
