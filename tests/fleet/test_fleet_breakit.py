"""A skeptic's findings on the fleet (issue 25): each test failed on the code it was written against."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from kandev_nb.fleet.spec import FleetError, FleetSpec


def test_a_notebook_secret_in_the_template_is_redacted_as_in_a_cell() -> None:
    """A cell's ``{api_key}`` sends ``<redacted>``; a fleet row's prompt sent the key itself."""
    key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
    cfg = {"password": "hunter2-very-secret"}
    spec = FleetSpec.of(
        pd.DataFrame({"id": [1]}),
        "Ticket {id}: call the API with {api_key}, log in with {cfg}",
        variables={"api_key": key, "cfg": cfg},
    )
    prompt = spec.prompts[0]
    assert prompt.startswith("Ticket 1: call the API with <redacted>")
    assert key not in prompt and "hunter2-very-secret" not in prompt


@pytest.mark.parametrize("template", ["{os.environ}", "{os.path}", "{_secret}", "{id.__class__}", "{In}"])
def test_module_private_and_ipython_names_are_refused_as_in_a_cell(template: str) -> None:
    """``{os.environ}`` sent the kernel's whole environment (tokens included) to every row."""
    with pytest.raises(FleetError):
        FleetSpec.of(pd.DataFrame({"id": [1]}), template, variables={"os": os, "_secret": "x", "In": ["a"]})
