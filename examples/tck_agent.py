"""The agent the official A2A conformance kit (a2aproject/a2a-tck, branch 1.0-dev) expects.

The kit drives the agent through the ``messageId`` prefix of each message (its
``scenarios/*.feature`` files list them). Serve it with:

    python -m a2a_adapters serve examples.tck_agent:agent --card examples.tck_agent:card

``--card examples.tck_agent:card_requiring_extension`` serves the same card requiring the
extension the kit's CORE-CAP-004 tests look for (they are skipped otherwise); the kit's other
tests do not declare it, so serve that card for those two tests only.

It also serves the 0.3.x kit, whose messages carry no such prefix: those are worked on for a
second and answered with an artifact, and the task then waits for the user's next message. The
kit cancels, continues and reads those tasks after its ``message/send`` returns, and a send
blocks (as the official SDK's does) until the task is terminal or waiting: so the task waits,
as a conversation does, rather than ending. It only uses the agent API and ``anyio.sleep``, so
it runs unchanged on asyncio and trio.
"""

from collections.abc import AsyncIterator

import anyio
import attrs

from a2a_core import (
    AgentContext,
    Artifact,
    ArtifactChunk,
    Part,
    Update,
    completed,
    input_required,
    rejected,
    reply,
    text_artifact,
    working,
)
from a2a_core.card import AgentCapabilities, AgentCard, AgentExtension, AgentSkill

card = AgentCard(
    name="a2a-sansio TCK agent",
    description="Behaves as the A2A conformance kit asks, by messageId prefix.",
    version="1.0.0",
    # It looks only at message ids, so any content is acceptable to it.
    default_input_modes=("*/*",),
    skills=(
        AgentSkill(
            id="tck",
            name="TCK Conformance",
            description="Handles TCK conformance test messages",
            tags=("tck",),
        ),
    ),
)

#: The extension the kit's CORE-CAP-004 tests expect a card to require.
KIT_REQUIRED_EXTENSION = "urn:a2a:tck:required-extension"
card_requiring_extension = attrs.evolve(
    card,
    capabilities=AgentCapabilities(
        extensions=(
            AgentExtension(
                uri=KIT_REQUIRED_EXTENSION,
                description="Required by the kit's CORE-CAP-004 tests",
                required=True,
            ),
        )
    ),
)

#: How long ``test-resubscribe-message-id`` stays working (twice the kit's streaming timeout).
RESUBSCRIBE_SECONDS = 4.0
#: How long any other message takes (the 0.3.x kit's reference agent takes about as long).
DEFAULT_SECONDS = 1.0

_FILE = Part(raw=b"tck", media_type="text/plain", filename="output.txt")
_FILE_URL = Part(
    url="https://example.com/output.txt", media_type="text/plain", filename="output.txt"
)


def _artifact(part: Part) -> Artifact:
    return Artifact(artifact_id="", parts=(part,))


def _streamed(text_or_part: str | Part) -> list[Update]:
    part = text_or_part if isinstance(text_or_part, Part) else Part(text=text_or_part)
    return [working(), ArtifactChunk(_artifact(part), last_chunk=True), completed()]


#: Prefix -> what the agent does. Longer prefixes come first where one extends another.
_SCRIPTS: list[tuple[str, list[Update]]] = [
    ("tck-complete-task", [completed("Hello from TCK")]),
    ("tck-artifact-text", [ArtifactChunk(text_artifact("Generated text content")), completed()]),
    ("tck-artifact-file-url", [ArtifactChunk(_artifact(_FILE_URL)), completed()]),
    ("tck-artifact-file", [ArtifactChunk(_artifact(_FILE)), completed()]),
    (
        "tck-artifact-data",
        [ArtifactChunk(_artifact(Part(data={"key": "value", "count": 42}))), completed()],
    ),
    ("tck-message-response", [reply("Direct message response")]),
    ("tck-input-required", [input_required()]),
    ("tck-reject-task", [rejected("rejected")]),
    ("tck-stream-001", _streamed("Stream hello from TCK")),
    ("tck-stream-002", [completed()]),
    ("tck-stream-003", _streamed("Stream task lifecycle")),
    ("tck-stream-ordering-001", _streamed("Ordered output")),
    ("tck-stream-artifact-text", _streamed("Streamed text content")),
    ("tck-stream-artifact-file", _streamed(_FILE)),
    (
        "tck-stream-artifact-chunked",
        [
            working(),
            ArtifactChunk(
                Artifact(artifact_id="chunked", parts=(Part(text="chunk-1 "),)), append=True
            ),
            ArtifactChunk(
                Artifact(artifact_id="chunked", parts=(Part(text="chunk-2"),)),
                append=True,
                last_chunk=True,
            ),
            completed(),
        ],
    ),
]


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    """Play the script for the message's prefix."""
    message_id = ctx.message.message_id
    if message_id.startswith("test-resubscribe-message-id"):
        yield working()
        await anyio.sleep(RESUBSCRIBE_SECONDS)
        yield completed()
        return
    for prefix, updates in _SCRIPTS:
        if message_id.startswith(prefix):
            for update in updates:
                yield update
            return
    # Any other message (the 0.3.x kit's): work a while, answer with an artifact, and wait for
    # the next turn of the conversation.
    yield working()
    await anyio.sleep(DEFAULT_SECONDS)
    answer = f"Received: {ctx.text}"
    yield ArtifactChunk(text_artifact(answer, name="response"), last_chunk=True)
    yield input_required(f"{answer}. Anything else?")
