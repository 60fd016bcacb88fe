"""The command line: ``a2a-sansio serve MODULE:AGENT`` (or ``python -m a2a_adapters serve``).

Its options are made from :class:`~a2a_adapters.settings.Settings`, one for each setting that
has a flag, and so are the environment variables that may stand for them. Every mistake in what
was asked is refused before anything is served, in one line that names the option as the user
gave it (the spelling typed, or the environment variable the value came from) and the value,
never a field of :class:`Settings`: each value is read by its setting's own rule as it is
parsed, and what is decided by several settings or by loading what they name (the agent, the
cards, the key files) is checked, with the same names, before the port is bound.
"""

import argparse
import errno
import functools
import importlib
import logging
import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import Any, NoReturn, cast

import attrs

from ._agents import AgentRegistry
from ._asgi import root_path_of
from ._extras import MissingExtra
from ._lifecycle import EngineFailed
from ._logs import configure_logging
from ._resolve import load_named
from ._serve import Agents, _listen, preflight, serve_with
from ._setting import ENV_PREFIX, Choice, Many, Option, options
from ._workers import run_workers
from .settings import GROUPS, SERVING, Settings, settings_from_environment
from .stores import StoreMisconfigured, StoreUnavailable

__all__ = ["main"]

log = logging.getLogger("a2a_adapters")

#: Exit statuses: a mistake in what was asked, and a refusal by the machine (the address).
USAGE = 2
FAILURE = 1

#: What ``a2a-sansio --help`` says the program is (plain text: argparse prints it as it is).
DESCRIPTION = (
    "An Agent2Agent (A2A) protocol server. Run 'a2a-sansio serve MODULE:OBJECT' to serve an "
    "agent, and 'a2a-sansio serve --help' for its options."
)

#: What the agent is called where the command line names it.
AGENT_HELP = "MODULE:OBJECT naming an async agent function, or a dict of skill id to agent"


@functools.cache
def _version() -> str:
    try:
        return f"a2a-sansio {metadata.version('a2a-sansio')}"
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "a2a-sansio (not installed: version unknown)"


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (its usage text is what ``--help`` is for)."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see {self.prog} --help)")


def _fail(message: str, status: int = USAGE) -> NoReturn:
    print(f"a2a-sansio: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def help_text(field: "attrs.Attribute[Any]", option: Option) -> str:
    """A setting's help, with its default unless it says it or has none worth saying."""
    default = option.shown if option.shown is not None else field.default
    if option.switch is not None or "default:" in option.help or default in (None, "", ()):
        return option.help
    return f"{option.help} (default: {default})"


def _reader(read: Callable[[str], object]) -> Callable[[str], object]:
    """A setting's reader as an argparse type: its refusal is argparse's, on one line."""

    def parse(text: str) -> object:
        try:
            return read(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _add_option(
    group: argparse._ArgumentGroup, field: "attrs.Attribute[Any]", option: Option
) -> None:
    names = (str(option.flag), *option.aliases)
    # No defaults: what the command line leaves out comes from the environment, or Settings.
    common: dict[str, Any] = {
        "dest": field.name,
        "help": help_text(field, option),
        "default": argparse.SUPPRESS,
    }
    kind = option.kind
    if option.switch is not None:
        group.add_argument(*names, action="store_const", const=option.switch, **common)
    elif isinstance(kind, Many):
        read = kind.split if kind.commas else kind.read
        action = "store" if kind.commas else "append"
        group.add_argument(
            *names, action=action, type=_reader(read), metavar=option.metavar, **common
        )
    elif isinstance(kind, Choice):
        group.add_argument(*names, choices=kind.choices, **common)
    else:
        group.add_argument(*names, type=_reader(kind.read), metavar=option.metavar, **common)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="a2a-sansio", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "serve",
        help="serve an agent over A2A",
        description="Serve an agent over A2A (JSON-RPC, HTTP+JSON, and gRPC if asked) until "
        "SIGTERM or Ctrl-C.",
        epilog=f"Every option may be set in the environment instead, as {ENV_PREFIX} and its "
        "name in capitals (--max-runs: A2A_MAX_RUNS; the agent: A2A_AGENT; true/false for "
        "switches, commas between the values of repeatable options); the command line wins.",
    )
    run.add_argument("--version", action="version", version=_version())
    groups = {name: run.add_argument_group(name) for name in GROUPS}
    groups[SERVING].add_argument("agent", nargs="?", default=argparse.SUPPRESS, help=AGENT_HELP)
    for field, option in options(Settings):
        if option.flag is not None:
            _add_option(groups[option.group], field, option)
        if field.name == "workers":
            # How a worker of --workers gets the socket its parent bound (not for people).
            groups[SERVING].add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    return parser


def _serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    serve_parser: argparse.ArgumentParser = commands.choices["serve"]
    return serve_parser


def serve_options() -> list[argparse.Action]:
    """The options of ``serve``, in the order of ``--help``."""
    return list(_serve_parser(_parser())._actions)


def env_variable(action: argparse.Action) -> str | None:
    """The environment variable of an option of ``serve`` (``--max-runs``: ``A2A_MAX_RUNS``;
    the agent: ``A2A_AGENT``), or ``None`` for one not meant for people."""
    if action.help == argparse.SUPPRESS or isinstance(
        action, argparse._HelpAction | argparse._VersionAction
    ):
        return None
    longs = [name for name in action.option_strings if name.startswith("--")]
    name = longs[0] if longs else action.dest
    return ENV_PREFIX + name.lstrip("-").upper().replace("-", "_")


def _spelling(option: Option, argv: Sequence[str]) -> str:
    """How ``argv`` spelt the option (``--certfile`` or ``--ssl-certfile``; the last one, as
    the last one's value is the one used)."""
    spelt = str(option.flag)
    for arg in argv:
        if arg == "--":
            break
        for name in (spelt, *option.aliases):
            if arg == name or arg.startswith(name + "="):
                spelt = name
    return spelt


@attrs.frozen
class _Asked:
    """What the command line and the environment asked: the settings, the agent's spec, the
    inherited socket of a worker, and what each setting is called (as given)."""

    settings: Settings
    agent: str | None
    listen_fd: int | None
    names: Mapping[str, str]

    def name(self, field: str) -> str:
        return self.names[field]


def _asked(argv: Sequence[str], env: Mapping[str, str]) -> _Asked:
    """Parse ``argv`` over ``env``: the command line wins; each value is read by its setting's
    rule, and a wrong one is refused naming the option or variable it came from."""
    given = vars(_parser().parse_args(argv))
    given.pop("command")
    agent = given.pop("agent", None)
    listen_fd = given.pop("listen_fd", None)
    try:
        from_env = settings_from_environment(env)
    except ValueError as error:
        _fail(str(error))
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    for field, option in options(Settings):
        if field.name in given:
            names[field.name] = _spelling(option, argv)
            values[field.name] = given[field.name]
        elif field.name in from_env:
            names[field.name], values[field.name] = from_env[field.name]
        else:
            names[field.name] = option.flag or field.name
    names["agent"] = "agent"
    if agent is None and f"{ENV_PREFIX}AGENT" in env:
        agent, names["agent"] = env[f"{ENV_PREFIX}AGENT"], f"{ENV_PREFIX}AGENT"
    try:
        settings = Settings(**values)
    except (TypeError, ValueError) as error:  # read by the same rules: not expected
        _fail(str(error))
    return _Asked(settings, agent, listen_fd, names)


def _agent(spec: str, name: str) -> Agents:
    """The agent ``spec`` names, checked now, so that a mistake is said with what was typed."""
    try:
        agent = load_named(spec, name)
        AgentRegistry(agent)  # type: ignore[arg-type]  # it checks what it got, and says so
    except (TypeError, ValueError) as error:
        message = str(error)
        _fail(message if message.startswith(f"{name} {spec}:") else f"{name} {spec}: {message}")
    return cast(Agents, agent)


def _cannot_listen(error: OSError, settings: Settings, names: Mapping[str, str], port: str) -> str:
    """What went wrong listening on the port of option ``port`` (its dest), and what to do."""
    message = error.strerror or str(error)
    number = getattr(settings, port)
    if error.errno == errno.EADDRINUSE:
        return (
            f"{names[port]} {number}: {message}; stop what listens there, or pick another "
            f"{names[port]} (0: any free port)"
        )
    if error.errno == errno.EACCES and 0 < number < 1024:
        return (
            f"{names[port]} {number}: {message}; ports below 1024 need privileges: pick another "
            f"{names[port]}"
        )
    return (
        f"{names['host']} {settings.host}: {message}; {names['host']} must name an address of this "
        "machine (127.0.0.1, ::1, 0.0.0.0…)"
    )


def _supervise(settings: Settings, argv: list[str], names: Mapping[str, str]) -> int:
    """Bind once, then run the workers on that socket (see ``a2a_adapters._workers``)."""
    try:
        sock = _listen(settings.host, settings.port)
    except OSError as error:
        _fail(_cannot_listen(error, settings, names, "port"), FAILURE)
    host, port = sock.getsockname()[:2]
    configure_logging(settings.log_level, settings.log_format)
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if settings.certfile else "http"
    log.info(
        "A2A server on %s://%s:%d%s/ with %d workers",
        scheme,
        shown,
        port,
        root_path_of(settings.root_path),
        settings.workers,
    )
    try:
        return run_workers(
            settings.workers, sock, _without_workers(argv), settings.shutdown_grace + 5
        )
    finally:
        sock.close()


def _without_workers(argv: list[str]) -> list[str]:
    """``argv`` less its ``--workers N`` (or ``--workers=N``), for the workers themselves."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            kept.append(arg)
    return kept


def _check_trio() -> None:
    """The trio adapter's packages are an extra: say which, before anything is loaded."""
    try:
        importlib.import_module("a2a_adapters.trio")
    except MissingExtra as missing:
        _fail(str(missing))


def _said_of_store(message: str, names: Mapping[str, str]) -> str:
    """A store's error (open_store words its errors for the command line, as ``--store URL:
    ...``) naming the option as the user gave it: ``A2A_STORE``, if it came from there."""
    return (
        names["store"] + message.removeprefix("--store")
        if message.startswith("--store ")
        else message
    )


#: The stores several processes can share (the others keep tasks in one process).
SHARED_STORES = ("redis", "rediss", "unix")


def _missing(missing: MissingExtra, settings: Settings, names: Mapping[str, str]) -> str:
    """A missing extra, said with the option that asked for it."""
    said = str(missing)
    if said.startswith("the gRPC binding"):  # the one extra the core's settings ask for
        said = f"{names['grpc_port']} {settings.grpc_port}: {said}"
    return _said_of_store(said, names)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line. A mistake in the arguments, the agent or the card, and an address
    that cannot be listened on, end the process with one line on stderr (exit status 2 for
    what was asked, 1 for what the machine refused), never a traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    asked = _asked(argv, os.environ)
    settings, names = asked.settings, asked.names
    if asked.agent is None:
        _fail(f"name the agent: MODULE:OBJECT, or {ENV_PREFIX}AGENT in the environment")
    if settings.loop == "trio":
        _check_trio()
    agent = _agent(asked.agent, names["agent"])
    try:
        preflight(agent, settings, asked.name)
    except MissingExtra as missing:
        _fail(_missing(missing, settings, names))
    except (TypeError, ValueError) as error:
        _fail(str(error))
    # A worker (given its socket) serves, whatever A2A_WORKERS says: it must not supervise.
    if settings.workers > 1 and asked.listen_fd is None:
        if settings.grpc_port is not None:
            _fail("--grpc-port serves from one process: it does not go with --workers")
        store = str(settings.store)
        if store.partition(":")[0] not in SHARED_STORES:
            _fail(
                f"{names['workers']} {settings.workers} needs a store the processes can share "
                f"(--store redis://HOST:PORT/DB); {store} keeps tasks in one process"
            )
        sys.exit(_supervise(settings, argv, names))
    # Bound here and handed to serve, so that a port in use here is --port's, and one that
    # serve cannot listen on can only be --grpc-port's.
    if asked.listen_fd is not None:
        sock = socket.socket(fileno=asked.listen_fd)
    else:
        try:
            sock = _listen(settings.host, settings.port)
        except OSError as error:
            _fail(_cannot_listen(error, settings, names, "port"), FAILURE)
    try:
        serve_with(agent, attrs.evolve(settings, workers=1), asked.name, sock=sock)
    except MissingExtra as missing:
        _fail(_missing(missing, settings, names))
    except EngineFailed as failed:
        # The cause is logged already; exit non-zero so that a supervisor restarts us.
        _fail(str(failed), FAILURE)
    except (StoreUnavailable, StoreMisconfigured) as unavailable:
        _fail(str(unavailable), FAILURE)
    # serve checks every setting, then listens, before it serves anything; once serving, the
    # servers (uvicorn, hypercorn) handle and log every error, so these come from start-up.
    # Every setting was checked above, with its option's name: what is left is the store's
    # URL, which only opening the store checks.
    except (TypeError, ValueError) as error:
        _fail(_said_of_store(str(error), names))
    except OSError as error:
        if settings.grpc_port is None:
            _fail(error.strerror or str(error), FAILURE)
        # This process listens on --port already: the port serve could not have is gRPC's.
        _fail(_cannot_listen(error, settings, names, "grpc_port"), FAILURE)
    finally:
        sock.close()  # serve closes it too, unless it stopped before it got that far


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
