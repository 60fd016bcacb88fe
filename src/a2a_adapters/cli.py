"""The command line: ``python -m a2a_adapters serve MODULE:AGENT``."""

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from a2a_core import AgentCard, V1Codec

from ._agents import load_object
from ._serve import serve

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="a2a-sansio", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="serve an agent over A2A")
    run.add_argument(
        "agent",
        help="MODULE:OBJECT naming an async agent function, or a dict of skill id to agent",
    )
    run.add_argument("--host", default="127.0.0.1", help="address to listen on")
    run.add_argument("--port", type=int, default=9999, help="port to listen on (0: any free)")
    run.add_argument(
        "--card",
        help="the agent card: MODULE:OBJECT (an AgentCard) or a JSON file in v1.0 card format",
    )
    run.add_argument(
        "--public-url",
        help="the base URL clients reach the server at (default: from each request's Host)",
    )
    run.add_argument("--store", choices=["memory"], default="memory", help="task store")
    return parser


def _load_card(spec: str) -> AgentCard:
    path = Path(spec)
    if path.suffix == ".json" and path.is_file():
        return V1Codec().decode(AgentCard, json.loads(path.read_text()), "card")
    card = load_object(spec)
    if not isinstance(card, AgentCard):
        raise SystemExit(f"--card {spec}: expected an AgentCard, got {type(card).__name__}")
    return card


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line."""
    args = _parser().parse_args(argv)
    agent = load_object(args.agent)
    if not callable(agent) and not isinstance(agent, Mapping):
        raise SystemExit(f"{args.agent}: expected an async function or a mapping of them")
    card = _load_card(args.card) if args.card else None
    serve(agent, card=card, host=args.host, port=args.port, public_url=args.public_url)  # type: ignore[arg-type]


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
