"""The push outbox, driven alone: what it holds back, and when."""

import pytest

from a2a_core.machine import _outbox
from a2a_core.machine._phases import IllegalPhase


def test_the_outbox_holds_what_is_decided_during_its_first_read_and_only_then() -> None:
    from a2a_core import TaskPushNotificationConfig
    from a2a_core.decide._effects import Push
    from a2a_core.store import LoggedEvent

    def push(seq: int) -> Push:
        config = TaskPushNotificationConfig(task_id="t", id="c", url="https://h.example/a")
        return Push("t", config, LoggedEvent(seq, None))  # type: ignore[arg-type]

    outbox = _outbox.Outbox(push=True)
    assert outbox.to_read
    assert not outbox.settled
    outbox.reading()
    assert not outbox.hand_out(push(1))  # held behind the read
    outbox.failed()
    assert outbox.to_read
    assert not outbox.hand_out(push(2))  # still held: the outbox is not read yet
    outbox.reading()
    assert outbox.read_through() == [push(1), push(2)]
    assert outbox.settled
    assert not outbox.to_read
    assert outbox.hand_out(push(3))
    assert not outbox.hand_out(push(3))  # out already, until reported
    outbox.reclaim()
    outbox.reading()
    assert outbox.hand_out(push(4))  # a later read holds nothing back
    with pytest.raises(IllegalPhase):
        outbox.reclaim()  # not while it is being read


def test_push_off_leaves_no_outbox_to_read() -> None:
    outbox = _outbox.Outbox(push=False)
    assert outbox.settled
    assert not outbox.to_read
    outbox.reclaim()
    assert outbox.phase is _outbox.OutboxPhase.OFF
