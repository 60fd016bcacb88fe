"""The engine's ids (``_clock.new_uuid``): version-4 UUIDs from a pool of random bytes, never
repeated, and never shared with a process forked from this one."""

import os
import uuid

from a2a_adapters._clock import new_uuid


def test_ids_are_version_4_uuids_spelled_as_uuid_spells_them_and_never_repeat() -> None:
    ids = [new_uuid() for _ in range(5_000)]  # across many refills of the pool
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert str(parsed) == text
    # Random in every bit a version-4 UUID leaves free: each is 0 in some id and 1 in another.
    numbers = [uuid.UUID(text).int for text in ids]
    fixed = (0xF << 76) | (0x3 << 62)
    ones = zeros = 0
    for number in numbers:
        ones |= number
        zeros |= ~number
    assert (ones & zeros) | fixed == (1 << 128) - 1


def test_a_forked_process_makes_ids_of_its_own() -> None:
    new_uuid()  # the pool holds ids now
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover  (the child's coverage is not collected)
        os.close(reading)
        os.write(writing, " ".join(new_uuid() for _ in range(100)).encode())
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        theirs = set(pipe.read().split())
    os.waitpid(child, 0)
    ours = {new_uuid() for _ in range(100)}
    assert len(theirs) == 100
    assert not theirs & ours
