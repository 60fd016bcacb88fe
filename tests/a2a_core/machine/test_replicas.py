"""Replica checks, driven alone: a ring during a read is one more read, not two."""

from a2a_core.machine import _replicas


def test_a_replica_check_rung_again_while_reading_is_read_once_more() -> None:
    replicas = _replicas.Replicas(shared=True)
    assert replicas.check("t")
    assert not replicas.check("t")
    assert not replicas.check("t")
    assert replicas.checked("t")  # read once more, not twice
    assert replicas.check("t")
    assert not replicas.checked("t")
    assert replicas.check("t")
    replicas.failed("t")
    assert replicas.recheck == {"t"}
    assert replicas.check("t")  # a failed read is no longer under way
