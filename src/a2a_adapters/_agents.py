"""Which agent serves which skill, and loading agents by ``module:object`` name.

Shared by every adapter: choosing an agent is not a protocol decision (the core already decided
the skill) and involves no event loop.
"""

import functools
import importlib
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path

from a2a_core import Agent

__all__ = ["AgentRegistry", "check_agent", "is_async_agent", "load_object"]


class AgentRegistry:
    """One default agent, or one agent per skill id.

    Every agent is checked here, when the server is set up: an agent that is not async would
    otherwise be accepted and then fail every task it is given.
    """

    def __init__(self, agents: Agent | Mapping[str, Agent]) -> None:
        if isinstance(agents, Mapping):
            if not agents:
                raise ValueError(
                    "the mapping of skill id to agent is empty: give at least one skill's agent"
                )
            for skill_id, agent in agents.items():
                if not isinstance(skill_id, str):
                    raise TypeError(f"skill ids must be strings, got {skill_id!r}")
                if not skill_id:
                    raise ValueError("a skill id must not be empty")
                check_agent(agent, f"the agent of skill {skill_id!r}")
            self.by_skill: dict[str, Agent] = dict(agents)
            self.default: Agent | None = None
        else:
            check_agent(agents, "the agent")
            self.by_skill = {}
            self.default = agents

    def agent_for(self, skill_id: str) -> Agent:
        """The agent for ``skill_id`` ("" asks for the default one)."""
        agent = self.by_skill.get(skill_id) if skill_id else None
        if agent is None:
            agent = self.default or next(iter(self.by_skill.values()))
        return agent


def is_async_agent(agent: object) -> bool:
    """Whether calling ``agent`` gives a coroutine or an async iterator, as an agent's must.

    Async functions and async generator functions, ``functools.partial`` of them, and objects
    whose ``__call__`` is one qualify. A class does not (calling it makes an instance), nor does
    a plain function, even one that happens to return a coroutine: nothing can tell it from one
    that returns text until it is called, and then every task would fail.
    """
    while isinstance(agent, functools.partial):
        agent = agent.func
    if inspect.isclass(agent):
        return False
    if inspect.iscoroutinefunction(agent) or inspect.isasyncgenfunction(agent):
        return True
    if inspect.isroutine(agent):
        return False
    call = getattr(agent, "__call__", None)  # noqa: B004 (the method itself is inspected)
    return call is not None and (
        inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call)
    )


def check_agent(agent: object, what: str = "the agent") -> None:
    """Raise :class:`TypeError`, saying what was given, unless ``agent`` is an async agent."""
    if is_async_agent(agent):
        return
    raise TypeError(
        f"{what} must be an async function (async def) or an object with an async __call__; "
        f"got {_describe(agent)}"
    )


def _describe(value: object) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if inspect.isclass(value):
        return f"the class {name} (pass an instance whose __call__ is async)"
    if isinstance(value, functools.partial):
        return f"a functools.partial of {_describe(value.func)}"
    if inspect.isgeneratorfunction(value):
        return f"the generator function {name} (make it async def to yield updates)"
    if name == "<lambda>":
        return "a lambda (lambdas cannot be async: use async def)"
    if inspect.isroutine(value):
        return f"the function {name}, which is not async"
    if callable(value):
        return f"an object of type {type(value).__name__}, whose __call__ is not async"
    return f"an object of type {type(value).__name__}, which is not callable"


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
