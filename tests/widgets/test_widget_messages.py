"""The page's messages read strictly where it matters (an attacker's review): a toast's answer
must say it is one, and an index or an id is never coerced from text or a float."""

from __future__ import annotations

from kandev_nb.notebook.widget_messages import ApprovalPress, ToastAnswer, read


def test_a_toast_answer_must_say_it_is_one() -> None:
    assert read(ToastAnswer, {"id": "req-1", "action": "allow", "digest": "ab"}) is None  # old: read as an answer
    assert read(ToastAnswer, {"kind": "something-else", "id": "req-1", "action": "deny"}) is None
    answer = read(ToastAnswer, {"kind": "answer", "id": "req-1", "action": "deny", "extra": 1})
    assert answer is not None and answer.action == "deny" and answer.digest is None


def test_an_index_is_never_coerced() -> None:
    for index in ("1", 1.0, True):
        press = read(ApprovalPress, {"action": "allow_suggestion", "index": index})
        assert press is not None and press.index is None, index  # old: index 1
    press = read(ApprovalPress, {"action": "allow_suggestion", "index": 1})
    assert press is not None and press.index == 1
    assert read(ToastAnswer, {"kind": "answer", "id": 7, "action": "allow"}) is None  # an id is text
