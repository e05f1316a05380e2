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
