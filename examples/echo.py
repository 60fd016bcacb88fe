"""The smallest agent: answer every message with its own text.

python -m a2a_adapters serve examples.echo:agent --card examples.echo:card
"""

from a2a_core import AgentContext
from a2a_core.card import AgentCard, AgentSkill

card = AgentCard(
    name="Echo",
    description="Replies with the text of each message it receives.",
    version="1.0.0",
    skills=(
        AgentSkill(
            id="echo",
            name="Echo",
            description="Repeats the message back.",
            tags=("example",),
            examples=("hello",),
        ),
    ),
)


async def agent(ctx: AgentContext) -> str:
    """Echo the user's text."""
    return f"Echo: {ctx.text}"
