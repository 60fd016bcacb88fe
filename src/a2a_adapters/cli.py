"""The command line: ``python -m a2a_adapters serve MODULE:AGENT``."""

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from a2a_core import A2AError, AgentCard, V1Codec

from ._agents import load_object
from ._auth import ApiKeys, Authenticator, BearerTokens
from ._engine import EngineFailed
from ._limits import ConnectionLimits
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
    run.add_argument(
        "--loop",
        choices=["asyncio", "trio"],
        default="asyncio",
        help="the event loop: asyncio (Quart on uvicorn) or trio (QuartTrio on hypercorn)",
    )
    run.add_argument(
        "--auth-token",
        action="append",
        default=[],
        metavar="NAME=TOKEN",
        help="accept 'Authorization: Bearer TOKEN' as principal NAME (repeatable); "
        "without any --auth-token or --api-key the server runs open",
    )
    run.add_argument(
        "--api-key",
        action="append",
        default=[],
        metavar="NAME=KEY",
        help="accept 'X-API-Key: KEY' as principal NAME (repeatable)",
    )
    run.add_argument(
        "--no-streaming",
        action="store_true",
        help="do not offer SendStreamingMessage and SubscribeToTask",
    )
    run.add_argument(
        "--no-push", action="store_true", help="do not offer push notifications (webhooks)"
    )
    run.add_argument(
        "--push-allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="let webhooks reach HOST although the SSRF guard refuses it (e.g. 127.0.0.1 for "
        "a local receiver; repeatable)",
    )
    run.add_argument(
        "--max-body-bytes",
        type=int,
        default=8 * 1024 * 1024,
        metavar="N",
        help="refuse request bodies larger than N bytes, unread (default: 8 MiB)",
    )
    _add_limit_options(run)
    run.add_argument(
        "--error-mapping",
        choices=["1.0.1", "1.0.0"],
        default="1.0.1",
        help="the spec's error-to-HTTP-status table for the REST binding (1.0.0: as the v1.0 "
        "conformance kit expects)",
    )
    run.add_argument(
        "--strict-v1-card",
        action="store_true",
        help="serve the card with v1.0 fields only (the v1.0 conformance kit checks the v1.0 "
        "schema, which allows no v0.3 fields)",
    )
    run.add_argument(
        "--no-idempotency",
        action="store_true",
        help="do not deduplicate sends by message id: every send is a new message (the "
        "conformance kit re-sends identical messages and expects new tasks)",
    )
    run.add_argument(
        "--shutdown-grace",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="on SIGTERM/Ctrl-C, how long running agents and queued push notifications get to "
        "finish before the server stops them (default: 5)",
    )
    run.add_argument(
        "--task-ttl",
        type=float,
        metavar="SECONDS",
        help="remove terminal tasks this long after they finished (default: keep them)",
    )
    return parser


#: The connection-limit options: option, ConnectionLimits field, type, metavar, help.
_LIMIT_OPTIONS: tuple[tuple[str, str, type, str, str], ...] = (
    (
        "--max-connections",
        "max_connections",
        int,
        "N",
        "open connections at most; more are answered 503 and closed (default: from the "
        "file-descriptor limit, which serve raises to its hard limit)",
    ),
    (
        "--max-header-bytes",
        "max_header_bytes",
        int,
        "N",
        "refuse request heads larger than N bytes with 431 (default: 32 KiB)",
    ),
    (
        "--max-headers",
        "max_header_count",
        int,
        "N",
        "refuse requests with more than N header fields with 431 (default: 100)",
    ),
    (
        "--header-timeout",
        "header_timeout",
        float,
        "SECONDS",
        "close a connection whose request head is not complete this long after its first "
        "byte (default: 10)",
    ),
    (
        "--body-timeout",
        "body_timeout",
        float,
        "SECONDS",
        "answer 408 and close when a request body is not complete this long after its head "
        "(default: 60)",
    ),
    (
        "--keep-alive-timeout",
        "keep_alive_timeout",
        float,
        "SECONDS",
        "close a connection with no request under way after this long (default: 5)",
    ),
)


def _add_limit_options(run: argparse.ArgumentParser) -> None:
    for option, field, kind, metavar, text in _LIMIT_OPTIONS:
        run.add_argument(option, dest=field, type=kind, metavar=metavar, help=text)


def _limits(args: argparse.Namespace) -> ConnectionLimits:
    given = {}
    for option, field, *_ in _LIMIT_OPTIONS:
        value = getattr(args, field)
        if value is not None:
            if not value > 0:
                raise SystemExit(f"{option} must be positive")
            given[field] = value
    return ConnectionLimits(**given)


def _pairs(option: str, values: Sequence[str]) -> dict[str, str]:
    """``NAME=SECRET`` options as a secret -> name mapping."""
    secrets: dict[str, str] = {}
    for value in values:
        name, sep, secret = value.partition("=")
        if not sep or not name or not secret:
            raise SystemExit(f"{option} {value!r}: expected NAME=SECRET")
        secrets[secret] = name
    return secrets


def _authenticators(args: argparse.Namespace) -> list[Authenticator]:
    found: list[Authenticator] = []
    if args.auth_token:
        found.append(BearerTokens(_pairs("--auth-token", args.auth_token)))
    if args.api_key:
        found.append(ApiKeys(_pairs("--api-key", args.api_key)))
    return found


def _load_card(spec: str) -> AgentCard:
    path = Path(spec)
    if path.suffix == ".json":
        try:
            return V1Codec().decode(AgentCard, json.loads(path.read_text()), "card")
        except OSError as error:
            raise SystemExit(f"--card {spec}: {error.strerror}") from None
        except ValueError as error:
            raise SystemExit(f"--card {spec}: not JSON ({error})") from None
        except A2AError as error:
            raise SystemExit(f"--card {spec}: not a v1.0 agent card ({error.message})") from None
    card = _load(spec, "--card")
    if not isinstance(card, AgentCard):
        raise SystemExit(f"--card {spec}: expected an AgentCard, got {type(card).__name__}")
    return card


def _load(spec: str, what: str) -> object:
    try:
        return load_object(spec)
    except ModuleNotFoundError as error:
        raise SystemExit(f"{what} {spec}: no module named {error.name!r}") from None
    except AttributeError as error:
        raise SystemExit(f"{what} {spec}: {error}") from None
    except (ValueError, ImportError) as error:
        raise SystemExit(f"{what} {spec}: {error}") from None


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line. Bad arguments exit with a one-line message, not a traceback."""
    args = _parser().parse_args(argv)
    agent = _load(args.agent, "agent")
    if not callable(agent) and not isinstance(agent, Mapping):
        raise SystemExit(f"{args.agent}: expected an async function or a mapping of them")
    card = _load_card(args.card) if args.card else None
    if args.task_ttl is not None and args.task_ttl <= 0:
        raise SystemExit("--task-ttl must be positive")
    if args.max_body_bytes < 1:
        raise SystemExit("--max-body-bytes must be positive")
    try:
        serve(
            agent,
            card=card,
            host=args.host,
            port=args.port,
            public_url=args.public_url,
            auth=_authenticators(args),
            task_ttl=args.task_ttl,
            streaming=not args.no_streaming,
            push=not args.no_push,
            push_allow_hosts=args.push_allow_host,
            max_body_bytes=args.max_body_bytes,
            loop=args.loop,
            error_mapping=args.error_mapping,
            idempotent_sends=not args.no_idempotency,
            card_v03_fields=not args.strict_v1_card,
            shutdown_grace=args.shutdown_grace,
            limits=_limits(args),
        )
    except EngineFailed as failed:
        # The cause is logged already; exit non-zero so that a supervisor restarts us.
        raise SystemExit(f"a2a-sansio: {failed}") from None


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
