"""The protocol's errors: the codes each carries, and how they compare."""

import pytest

from a2a_core.errors import (
    ERROR_CODES,
    A2AError,
    FieldViolation,
    TaskNotFoundError,
    UnavailableError,
    UsageError,
)


def test_an_error_without_a_row_of_its_own_carries_its_parents_codes() -> None:
    class ShardMissing(TaskNotFoundError):
        """What a store may raise: a task-not-found to the client, whatever it is named."""

    error = ShardMissing()
    assert error.codes == ERROR_CODES[TaskNotFoundError]
    assert error.message == "Task not found"


def test_an_error_with_no_row_up_its_classes_is_a_usage_error() -> None:
    """``A2AError`` itself is the root, with no codes: raising it is the caller's bug."""
    with pytest.raises(UsageError, match="A2AError has no row in ERROR_CODES"):
        A2AError()
    with pytest.raises(UsageError, match="A2AError has no row"):
        _ = A2AError("a message, but still no codes").codes


def test_errors_are_equal_by_class_message_metadata_and_violations() -> None:
    violation = FieldViolation("params.id", "required field is missing")
    error = TaskNotFoundError("gone", metadata={"taskId": "t"}, violations=(violation,))
    same = TaskNotFoundError("gone", metadata={"taskId": "t"}, violations=(violation,))
    assert error == same
    assert hash(error) == hash(same)
    assert len({error, same}) == 1
    assert error != TaskNotFoundError("gone")
    assert error != TaskNotFoundError("gone", metadata={"taskId": "u"}, violations=(violation,))
    assert error != UnavailableError("gone")
    assert error != "gone"
    assert repr(error) == "TaskNotFoundError('gone')"
