"""A multi-turn agent: it asks for a name, then greets its owner.

The first message gets a question (the task goes to input-required); the answer, sent to the
same task, re-runs the agent over the whole conversation, and it completes.

    python -m a2a_adapters serve examples.multi_turn:agent --card examples.multi_turn:card
"""

from a2a_core import AgentContext, MissingInput, Role
from a2a_core.card import AgentCard, AgentSkill

card = AgentCard(
    name="Greeter",
    description="Asks for your name, then greets you.",
    version="1.0.0",
    skills=(
        AgentSkill(
            id="greet",
            name="Greet",
            description="A two-turn conversation.",
            tags=("example", "multi-turn"),
        ),
    ),
)


async def agent(ctx: AgentContext) -> str:
    """Ask once, then answer."""
    user_turns = [m for m in ctx.history if m.role is Role.USER]
    if len(user_turns) < 2:
        raise MissingInput("What is your name?")
    return f"Hello, {ctx.text.strip()}! You first said: {user_turns[0].text!r}."
