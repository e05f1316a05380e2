"""`Session.run(prompt, output_type=...)` against the real CLI (2.1.332) and the scripted model:
TypedDicts and JSON-schema dicts, a schema change between turns, and the schemas we send."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import pytest

from kandev_nb import NoStructuredOutputError, StructuredOutputError
from kandev_nb.agent.session import Session
from kandev_nb.agent.structured import OutputSpec
from kandev_nb.testing import Reply, ScriptedModelServer, tool_use

pytestmark = pytest.mark.timeout(240)


class City(TypedDict):
    name: str
    population: int


COUNTRY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "capital": {"type": "string"}},
    "required": ["name", "capital"],
}


def _schema_sent(server: ScriptedModelServer, index: int) -> dict[str, object]:
    tools = server.main_requests[index].body["tools"]
    return next(t["input_schema"] for t in tools if t["name"] == "StructuredOutput")


async def test_typed_dicts_and_schema_dicts_and_a_schema_change_restart_resuming(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(
        Reply(tool_use("StructuredOutput", {"name": "Lyon", "population": 520000})),
        Reply(tool_use("StructuredOutput", {"name": "France", "capital": "Paris"})),
        Reply(tool_use("StructuredOutput", {"name": "Nice", "population": 340000})),
    )
    session = Session(cwd=claude_workdir, env=claude_env)
    try:
        city = await session.run("A French city", output_type=City)
        first_pid = session.pid
        country = await session.run("Its country", output_type=COUNTRY)
        second_pid = session.pid
        again = await session.run("Another city", output_type=City)
        third_pid = session.pid
    finally:
        await session.close()
    assert city.output == {"name": "Lyon", "population": 520000} and city.output_raw == city.output
    assert country.output == {"name": "France", "capital": "Paris"}
    assert again.output == {"name": "Nice", "population": 340000}
    # Measured: the schema is a launch flag, so each change is a new process...
    assert first_pid != second_pid != third_pid
    properties = _schema_sent(scripted_model, 0)["properties"]
    assert isinstance(properties, dict) and set(properties) == {"name", "population"}
    assert _schema_sent(scripted_model, 1) == COUNTRY
    # ... that resumes the conversation (the CLI's --resume): the first turn is in the history.
    assert "A French city" in repr(scripted_model.main_requests[2].body["messages"])
    assert len({city.session_id, country.session_id, again.session_id}) == 1


async def test_an_answer_the_schema_dict_rejects_is_a_one_line_error_with_the_raw_answer(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    # The CLI checks the answer against the schema it was sent; kandev-nb checks the
    # requested type's own rules too (here a pattern that was not sent).
    picky = {**COUNTRY, "properties": {"name": {"type": "string"}, "capital": {"type": "string", "pattern": "^[A-Z]"}}}
    scripted_model.push(Reply(tool_use("StructuredOutput", {"name": "France", "capital": "paris"})))
    session = Session(cwd=claude_workdir, env=claude_env)
    spec = OutputSpec(target=picky, schema=COUNTRY)
    try:
        with pytest.raises(StructuredOutputError) as caught:
            await session.run("Country?", output_type=spec)
    finally:
        await session.close()
    assert str(caught.value) == "1 validation error for schema: capital: 'paris' does not match '^[A-Z]'"
    assert caught.value.turn is session.turns[-1]
    assert session.turns[-1].output_raw == {"name": "France", "capital": "paris"}
    assert session.turns[-1].output is None
    assert not isinstance(caught.value, NoStructuredOutputError)


async def test_the_cli_giving_up_after_its_retries_is_a_clear_error(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    # Measured (2.1.332): the CLI checks each StructuredOutput call against the schema and
    # gives up after 5 attempts with result subtype error_max_structured_output_retries.
    scripted_model.push(*[Reply(tool_use("StructuredOutput", {"name": "Lyon"})) for _ in range(6)])
    session = Session(cwd=claude_workdir, env=claude_env)
    try:
        with pytest.raises(NoStructuredOutputError) as caught:
            await session.run("A city", output_type=City)
    finally:
        await session.close()
    message = str(caught.value)
    assert message.startswith(
        "no structured answer for City: the model did not give a valid StructuredOutput "
        "answer within the CLI's retries (Failed to provide valid structured output after 5"
    )
    assert "population" in message
    assert session.turns[-1].stats is not None
    assert session.turns[-1].stats.result_subtype == "error_max_structured_output_retries"
    assert session.turns[-1].output_raw is None


def test_specs_wrap_lists_and_scalars_in_an_object() -> None:
    assert OutputSpec.of(list[City]).schema["properties"]["items"]["type"] == "array"
    assert OutputSpec.of(list[City]).validate({"items": [{"name": "A", "population": 1}]}) == [
        {"name": "A", "population": 1}
    ]
    scalar = OutputSpec.of(int)
    assert scalar.schema["type"] == "object" and scalar.validate({"value": 3}) == 3
    with pytest.raises(TypeError, match="cannot be a --schema"):
        OutputSpec.of(object())
    with pytest.raises(StructuredOutputError, match="1 validation error for City: population: Input should be a valid"):
        OutputSpec.of(City).validate({"name": "A", "population": "many"})
