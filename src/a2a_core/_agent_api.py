"""What an agent sees and what it may produce.

An agent is an async callable taking an :class:`AgentContext`. It either returns a result or is an
async generator yielding updates; it may raise :class:`MissingInput` to ask the user something.
The adapter runs it on its event loop and hands every yielded value, the return value or the
exception to the core *as data*; :func:`normalize` below turns that value into updates the
reducer understands. So the rules for what an agent may say live here, in one pure place, and
are the same on asyncio and trio.

What a value means:

=====================  ==========================================  ===========================
value                  yielded (progress)                          returned (final)
=====================  ==========================================  ===========================
``None``               nothing                                      nothing more
``str``                status ``working`` with that text            ``completed`` with that text
``StateChange``        that status (``input_required(…)``, …)       the same
``Artifact``           a whole artifact                             the same
``ArtifactChunk``      a chunk (``append`` / ``last_chunk``)        the same
``Message``            a direct reply: the task completes with it   the same
list / tuple           each item in turn                            the same
=====================  ==========================================  ===========================

An adapter may hand over several yielded values at once, as :class:`Outputs`: the values an
agent yielded one after the other without pausing (awaiting nothing) in between. They are
decided together, as one write, and mean exactly what they would have meant one by one: a value
the core cannot read fails the task after the ones before it count. :func:`ends_run` tells an
adapter when to stop gathering (at a value that would finish the task).

When the run ends and the task is still submitted or working, it completes; a task the agent
left waiting (input or auth required) keeps waiting for the user.

Raising :class:`InputError` (or its alias :class:`MissingInput`) moves the task to
``input-required`` with the exception's text as the question; the user's answer re-runs the agent
over the whole conversation. Any other exception fails the task.
"""

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import attrs

from ._errors import InternalError, InvalidAgentResponseError
from ._json import string_problem, value_problem
from .model._task import Artifact, Message, Metadata, Part, Role, TaskState

__all__ = [
    "Agent",
    "AgentContext",
    "ArtifactChunk",
    "InputError",
    "MissingInput",
    "Outputs",
    "RunAbandoned",
    "StateChange",
    "Update",
    "agent_message",
    "auth_required",
    "completed",
    "ends_run",
    "exception_status",
    "failed",
    "input_required",
    "normalize",
    "rejected",
    "reply",
    "text_artifact",
    "working",
]


@attrs.frozen
class AgentContext:
    """Everything an agent run knows: the task, the conversation so far, and who asked."""

    task_id: str
    context_id: str
    #: The user message that started this run.
    message: Message
    #: The whole conversation, oldest first, ending with :attr:`message`.
    history: tuple[Message, ...]
    #: The authenticated caller the task belongs to.
    principal: str
    tenant: str = ""
    #: The skill the request was routed to ("" when the agent serves every request).
    skill_id: str = ""
    metadata: Metadata = attrs.field(factory=dict)
    accepted_output_modes: tuple[str, ...] = ()
    #: The extensions the client declared for the request that started this run (its
    #: ``A2A-Extensions`` header and the message's ``extensions``); those the card supports are
    #: active, and the answer says so. Empty for a run a restart started again.
    requested_extensions: frozenset[str] = frozenset()

    @property
    def text(self) -> str:
        """The text of the user's latest message."""
        return self.message.text


#: An agent: ``async def agent(ctx) -> result`` or ``async def agent(ctx): yield update``.
Agent = Callable[[AgentContext], Awaitable[Any] | AsyncIterator[Any]]


class InputError(Exception):
    """The agent needs more (or different) input; the message is the question for the user."""


#: The name the seed used; raising either has the same effect.
MissingInput = InputError


class RunAbandoned(Exception):
    """Not raised by agents: the adapter reports with it a run it had to stop on its own
    account (the server shutting down), or one a restart left behind (``restarted``), so that
    the task is failed with a record of why rather than left working with no agent behind it."""

    def __init__(self, *, restarted: bool = False) -> None:
        super().__init__("the server restarted" if restarted else "the server stopped")
        self.restarted = restarted


class RunTimedOut(Exception):
    """Not raised by agents: the machine reports with it a run it stopped for passing a time
    limit, the whole run's (``max_run_time``) or one without output (``run_idle_time``), so
    that the task is failed with a record of which limit, rather than left working forever."""

    def __init__(self, limit: timedelta, *, idle: bool) -> None:
        seconds = f"{limit.total_seconds():g} s"
        super().__init__(
            f"gave no output for {seconds}" if idle else f"ran longer than its limit of {seconds}"
        )
        self.limit = limit
        self.idle = idle


@attrs.frozen
class StateChange:
    """The agent moves its task to ``state``, optionally with a message for the user."""

    state: TaskState
    message: Message | None = None


@attrs.frozen
class ArtifactChunk:
    """A piece of an artifact: ``append`` extends the one with the same id."""

    artifact: Artifact
    append: bool = False
    last_chunk: bool = False


@attrs.frozen
class Outputs:
    """Values a run yielded in a row, without pausing between them, handed over as one output.

    An adapter gathers them so that a run saying several things at once (an echo agent's
    artifact and its completion) costs one decision, one write and one wake-up of whoever
    waits, rather than one for each. Each value means what it would mean alone."""

    values: tuple[Any, ...]


def ends_run(value: Any) -> bool:
    """Whether yielding ``value`` may finish the task, and so its run: anything but progress
    (nothing, a text, a non-final status, an artifact or a chunk, or a list of those).

    An adapter that gathers :class:`Outputs` stops at such a value: the run's code after that
    ``yield`` must not run before the core has said whether the run goes on. Only the type is
    looked at; a value this lets through and the core then refuses fails the task as usual."""
    if value is None or type(value) in _PROGRESS:
        return False
    if type(value) is StateChange:
        return value.state.terminal
    if isinstance(value, list | tuple):
        return any(ends_run(item) for item in value)
    return True


_PROGRESS = frozenset({str, ArtifactChunk, Artifact})


def agent_message(text: str, *, metadata: Metadata | None = None) -> Message:
    """A message from the agent; the core fills in its ids."""
    return Message(message_id="", role=Role.AGENT, parts=(Part(text=text),), metadata=metadata)


def _status(state: TaskState, text: str | None) -> StateChange:
    return StateChange(state, agent_message(text) if text is not None else None)


def working(text: str | None = None) -> StateChange:
    """Progress: the task is being worked on."""
    return _status(TaskState.WORKING, text)


def input_required(question: str | None = None) -> StateChange:
    """The task waits for the user's answer."""
    return _status(TaskState.INPUT_REQUIRED, question)


def auth_required(text: str) -> StateChange:
    """The task waits for credentials (obtained out of band)."""
    return _status(TaskState.AUTH_REQUIRED, text)


def completed(text: str | None = None) -> StateChange:
    """The task is done."""
    return _status(TaskState.COMPLETED, text)


def failed(text: str | None = None) -> StateChange:
    """The task could not be done."""
    return _status(TaskState.FAILED, text)


def rejected(text: str | None = None) -> StateChange:
    """The agent will not do the task."""
    return _status(TaskState.REJECTED, text)


def reply(text: str) -> Message:
    """A direct reply: the send answers with this message rather than with a task."""
    return agent_message(text)


def text_artifact(text: str, *, name: str = "", artifact_id: str = "") -> Artifact:
    """An artifact holding one text part (the core assigns an id when none is given)."""
    return Artifact(artifact_id=artifact_id, parts=(Part(text=text),), name=name)


#: A normalized agent update, as the reducer consumes it.
Update = StateChange | ArtifactChunk | Message


def normalize(value: Any, *, final: bool) -> list[Update]:
    """The updates an agent's yielded (``final=False``) or returned (``final=True``) value means.

    Raises :class:`InvalidAgentResponseError` for a value that means nothing in A2A.
    """
    match value:
        case None:
            return []
        case str():
            if not value.isascii():
                _check_text(value, "the text")
            return [completed(value) if final else working(value)]
        case StateChange(message=message):
            if message is not None:
                _check_content(message, "the status message")
            return [value]
        case ArtifactChunk(artifact=artifact):
            _check_content(artifact, "the artifact")
            return [value]
        case Message():
            _check_content(value, "the message")
            return [value]
        case Artifact():
            _check_content(value, "the artifact")
            return [ArtifactChunk(value, last_chunk=True)]
        case list() | tuple():
            return [update for item in value for update in normalize(item, final=False)]
        case Outputs(values=values):
            updates: list[Update] = []
            for item in values:
                try:
                    updates += normalize(item, final=False)
                except InvalidAgentResponseError as error:
                    return [*updates, exception_status(error)]  # as if it had come alone
            return updates
    raise InvalidAgentResponseError(
        f"Invalid agent response: the agent produced a value of type {type(value).__name__}, "
        "which is not an A2A update"
    )


def _check_content(value: Message | Artifact | Part, where: str) -> None:
    """Refuse content that could be stored but never written back as JSON: a lone surrogate in
    a string, a data or metadata value that is not JSON (a set, a NaN, an object), nesting past
    the limit. Stored, it would break every later read of the task and every listing holding
    it; refused here, it fails only this output (the task fails with the reason)."""
    texts, documents, lists = _CONTENT_FIELDS[type(value)]
    for name in texts:
        item = getattr(value, name)
        if item is not None and not (type(item) is str and item.isascii()):
            _check_text(item, f"{where}'s {name}")
    for name in documents:
        item = getattr(value, name)
        if item is not None:
            problem = value_problem(item, root=f"{where}'s {name}")
            if problem is not None:
                raise InvalidAgentResponseError(f"Invalid agent response: {' '.join(problem)}")
    for name in lists:
        for index, item in enumerate(getattr(value, name)):
            if name == "parts":
                if not isinstance(item, Part):
                    raise InvalidAgentResponseError(
                        f"Invalid agent response: {where}'s parts[{index}] is a "
                        f"{type(item).__name__}, not a Part"
                    )
                _check_content(item, f"{where}'s parts[{index}]")
            elif not (type(item) is str and item.isascii()):
                _check_text(item, f"{where}'s {name}[{index}]")


def _check_text(text: object, where: str) -> None:
    if type(text) is not str:
        raise InvalidAgentResponseError(
            f"Invalid agent response: {where} is a {type(text).__name__}, not a string"
        )
    problem = string_problem(text)
    if problem is not None:
        raise InvalidAgentResponseError(f"Invalid agent response: {where} {problem}")


#: Per content class: its string fields, its JSON-valued fields, its fields holding sequences
#: (of parts, or of strings).
_CONTENT_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    Part: (("text", "url", "filename", "media_type"), ("data", "metadata"), ()),
    Message: (
        ("message_id", "context_id", "task_id"),
        ("metadata",),
        ("parts", "extensions", "reference_task_ids"),
    ),
    Artifact: (
        ("artifact_id", "name", "description"),
        ("metadata",),
        ("parts", "extensions"),
    ),
}


def exception_status(error: BaseException) -> StateChange:
    """What an exception escaping the agent does to its task."""
    if isinstance(error, InputError):
        return input_required(str(error) or "More input is required.")
    if isinstance(error, InvalidAgentResponseError):
        return failed(error.message)
    if isinstance(error, RunAbandoned):
        how = "restarted" if error.restarted else "stopped"
        return failed(f"The server {how} before the agent finished; send a new message to retry.")
    if isinstance(error, RunTimedOut):
        return failed(f"The agent {error}, so the server stopped it; send a new message to retry.")
    if isinstance(error, InternalError):
        return failed("The server failed while the agent ran; send a new message to retry.")
    # The exception's text may hold internals (paths, queries, secrets): the client gets its
    # type only; the adapter logs the traceback.
    return failed(f"The agent failed ({type(error).__name__}).")
