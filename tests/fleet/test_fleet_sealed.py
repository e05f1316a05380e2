"""The run's sealed channel between the kernel and a fleet's Dask workers (issue 32, point 2):
a message opens only with the run's key, for its run, direction, row and attempt, once."""

from __future__ import annotations

import json

import pytest

from kandev_nb.fleet.sealed import KERNEL, WORKER, Channel, Forged, canonical, claimed_kind, new_key


def ends(run: str = "run1") -> tuple[Channel, Channel]:
    key = new_key()
    return Channel(key, run, KERNEL), Channel(key, run, WORKER)


def test_a_message_opens_once_with_its_fields_and_binding() -> None:
    kernel, worker = ends()
    wire = kernel.seal("answer", "T1", "a1", request_id="r1", decision={"behavior": "allow"})
    body = worker.open(wire, row="T1", attempt="a1")
    assert body["kind"] == "answer" and body["request_id"] == "r1" and body["decision"] == {"behavior": "allow"}
    assert (body["run"], body["dir"], body["row"], body["attempt"]) == ("run1", KERNEL, "T1", "a1")
    with pytest.raises(Forged, match="replayed"):
        worker.open(wire, row="T1", attempt="a1")


@pytest.mark.parametrize(
    "forge",
    [
        lambda wire, key: {"kind": "answer", "request_id": "r1"},  # the plain form
        lambda wire, key: {**wire, "mac": "00" * 32},
        lambda wire, key: {"body": wire["body"].replace("r1", "r2"), "mac": wire["mac"]},
        lambda wire, key: Channel(new_key(), "run1", KERNEL).seal("answer", "T1", "a1", request_id="r1"),
        lambda wire, key: Channel(key, "run2", KERNEL).seal("answer", "T1", "a1", request_id="r1"),
        lambda wire, key: Channel(key, "run1", KERNEL).seal("answer", "T2", "a1", request_id="r1"),
        lambda wire, key: Channel(key, "run1", KERNEL).seal("answer", "T1", "old", request_id="r1"),
        lambda wire, key: Channel(key, "run1", WORKER).seal("answer", "T1", "a1", request_id="r1"),
        lambda wire, key: "not a dict",
    ],
    ids=[
        "plain",
        "zero-mac",
        "changed-body",
        "other-key",
        "other-run",
        "other-row",
        "other-attempt",
        "reflected",
        "junk",
    ],
)
def test_a_forged_message_does_not_open(forge: object) -> None:
    kernel, worker = ends()
    wire = kernel.seal("answer", "T1", "a1", request_id="r1")
    with pytest.raises(Forged):
        worker.open(forge(wire, kernel.key), row="T1", attempt="a1")  # type: ignore[operator]


def test_the_kernel_takes_a_worker_s_messages_in_order_and_a_worker_the_kernel_s_in_any_order() -> None:
    kernel, worker = ends()
    first, second = worker.seal("start", "T1", "a1"), worker.seal("ask", "T1", "a1")
    kernel.open(second)
    with pytest.raises(Forged, match="replayed"):
        kernel.open(first)  # an older message after a newer one (the topic keeps the order)
    one, two = kernel.seal("answer", "T1", "a1"), kernel.seal("rules", "T1", "a1", deny=[])
    assert worker.open(two)["seq"] > worker.open(one)["seq"]  # concurrent puts may pass each other


def test_the_seal_covers_canonical_json_and_the_claimed_kind_is_reported() -> None:
    kernel, _ = ends()
    wire = kernel.seal("rules", "T1", "a1", deny=["Bash(rm:*)"])
    assert wire["body"] == canonical(json.loads(wire["body"]))
    assert claimed_kind(wire) == "rules" and claimed_kind({"kind": "answer"}) == "answer" and claimed_kind(3) == "?"
    with pytest.raises(ValueError):
        Channel(b"", "run1", KERNEL)


# -- attack review E: the row's session Variable is sealed; an older attempt's start is ignored --


def test_a_stored_value_opens_only_with_the_run_s_key_and_its_own_slot() -> None:
    kernel, worker = ends()
    wire = worker.seal_value("topic-session-0", {"session_id": "s1", "pid": 42, "host": "h", "n": 1})
    assert kernel.open_value(wire, "topic-session-0")["pid"] == 42
    assert worker.open_value(wire, "topic-session-0")["session_id"] == "s1"  # read again by a later attempt
    forged = [
        {"session_id": "s1", "pid": 1, "host": "h"},  # the plain value the worker acted on unopened
        Channel(new_key(), "run1", WORKER).seal_value("topic-session-0", {"pid": 1}),
        Channel(worker.key, "run2", WORKER).seal_value("topic-session-0", {"pid": 1}),
        worker.seal_value("topic-session-1", {"pid": 1}),  # another row's slot
        worker.seal("start", "T1", "a1", pid=1),  # a message is not a value
        {**wire, "mac": "00" * 32},
    ]
    for wire in forged:
        with pytest.raises(Forged):
            kernel.open_value(wire, "topic-session-0")
    with pytest.raises(Forged):
        kernel.open(worker.seal_value("topic-session-0", {}))  # a value is not a message


class _Variable:
    def __init__(self, value: object) -> None:
        self.value = value

    async def get(self, timeout: float) -> object:
        return self.value


def test_a_worker_ignores_and_reports_a_session_variable_the_run_did_not_seal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Old code: the worker SIGKILLed the value's ``pid`` (any ``claude`` process on its host)
    and resumed its ``session_id``, whoever wrote it."""
    import asyncio
    from types import SimpleNamespace

    from kandev_nb.fleet import cluster_worker as cw

    key = new_key()
    kernel = Channel(key, "run1", KERNEL)
    logged: list[tuple[str, object]] = []
    worker = SimpleNamespace(address="tcp://w:1", log_event=lambda topic, msg: logged.append((topic, msg)))
    job = SimpleNamespace(seal_key=key, fleet_id="run1", key_text="T1", session_var="t-session-0", topic="t", deny=())
    row = cw._Row(job, worker)  # type: ignore[arg-type]
    row.attempt = "a1"
    killed: list[int] = []
    monkeypatch.setattr(cw, "_kill_cli", killed.append)
    forged = {"session_id": "victim", "pid": 4242, "host": "h"}
    saved = asyncio.run(cw._saved(_Variable(forged), row))
    assert saved == {} and cw._resume_id(saved, "h") is None and killed == []
    dropped = kernel.open(logged[-1][1])
    assert dropped["kind"] == "dropped" and "not sealed" in dropped["why"]
    good = kernel.seal_value("t-session-0", {"host": "h", "pid": 4242, "n": 1})
    saved = asyncio.run(cw._saved(_Variable(good), row))
    assert saved["pid"] == 4242
    cw._resume_id(saved, "h")
    assert killed == [4242]


def test_the_kernel_ignores_the_late_start_of_an_older_attempt() -> None:
    """Old code: whichever ``start`` came last made its attempt the row's current one, so an
    older attempt's late start sent the answers to a queue nobody reads."""
    from kandev_nb.fleet.cluster import ClusterFleet
    from kandev_nb.fleet.runner import RowState

    key = new_key()
    fleet = ClusterFleet.__new__(ClusterFleet)
    fleet.channel = Channel(key, "run1", KERNEL)
    state = RowState(key="T1", position=0, prompt="p")
    fleet._by_text, fleet.where, fleet._attempts, fleet._attempt_no = {"T1": state}, {}, {}, {}
    fleet._mirrors, fleet.dropped = {}, []
    fleet._changed = lambda: None  # type: ignore[method-assign]
    old, new = Channel(key, "run1", WORKER), Channel(key, "run1", WORKER)
    fleet._receive(new.seal("start", "T1", "bbb", worker="tcp://w2:1", host="h2", n=2))
    fleet._receive(old.seal("start", "T1", "aaa", worker="tcp://w1:1", host="h1", n=1))
    assert fleet._attempts["T1"] == "bbb" and fleet.where["T1"][0] == "tcp://w2:1"
    assert any("older than the current" in d for d in fleet.dropped)
