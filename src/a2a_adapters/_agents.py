"""Which agent serves which skill, and loading agents by ``module:object`` name.

Shared by every adapter: choosing an agent is not a protocol decision (the core already decided
the skill) and involves no event loop.
"""

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path

from a2a_core import Agent

__all__ = ["AgentRegistry", "load_object"]


class AgentRegistry:
    """One default agent, or one agent per skill id."""

    def __init__(self, agents: Agent | Mapping[str, Agent]) -> None:
        if isinstance(agents, Mapping):
            if not agents:
                raise ValueError("at least one agent is needed")
            self.by_skill: dict[str, Agent] = dict(agents)
            self.default: Agent | None = None
        else:
            self.by_skill = {}
            self.default = agents

    def agent_for(self, skill_id: str) -> Agent:
        """The agent for ``skill_id`` ("" asks for the default one)."""
        agent = self.by_skill.get(skill_id) if skill_id else None
        if agent is None:
            agent = self.default or next(iter(self.by_skill.values()))
        return agent


def load_object(spec: str) -> object:
    """Import ``module:attribute`` (the current directory is importable, as with uvicorn)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"expected MODULE:OBJECT, got {spec!r}")
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    module = importlib.import_module(module_name)
    value: object = module
    for name in attribute.split("."):
        value = getattr(value, name)
    return value
