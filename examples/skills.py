"""Skill routing: one server, one agent per skill.

A send names the skill in ``metadata.skillId`` (of the request or of the message); a follow-up
stays with its task's skill; a send that names none goes to the first skill.

    python -m a2a_adapters serve examples.skills:agents --card examples.skills:card
"""

from a2a_core import AgentContext, MissingInput
from a2a_core.card import AgentCard, AgentSkill

card = AgentCard(
    name="Text tools",
    description="Two small text skills behind one endpoint.",
    version="1.0.0",
    skills=(
        AgentSkill(
            id="upper",
            name="Shout",
            description="Upper-cases the text.",
            tags=("text",),
            examples=("hello",),
        ),
        AgentSkill(
            id="count",
            name="Count words",
            description="Counts the words of the text; asks for text if there is none.",
            tags=("text",),
        ),
    ),
)


async def upper(ctx: AgentContext) -> str:
    """Upper-case the text."""
    return ctx.text.upper()


async def count(ctx: AgentContext) -> str:
    """Count the words of the text."""
    words = ctx.text.split()
    if not words:
        raise MissingInput("Which text should I count?")
    return f"{len(words)} words"


#: Skill id -> agent. ``serve`` routes each send to the agent of the skill it names.
agents = {"upper": upper, "count": count}
