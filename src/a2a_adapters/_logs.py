"""How ``serve`` and the command line set up logging: our loggers at the level asked for, as
text or one JSON object a line, and other libraries' loggers at WARNING at least.

The libraries under us say at INFO what an operator does not need (uvicorn's "Waiting for
application startup", coredis loading a script, hypercorn's start-up lines): the server's own
line that it is up, and the access log, say what matters. Only ``serve`` and the CLI call this:
they own their process. An application embedding the engine keeps its own logging.
"""

import json
import logging
import sys
from datetime import UTC, datetime

__all__ = ["LOG_FORMATS", "LOG_LEVELS", "JsonFormatter", "check_logging", "configure_logging"]

#: The levels ``--log-level`` takes, lowest last.
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
#: The formats ``--log-format`` takes.
LOG_FORMATS = ("text", "json")
#: Loggers of the libraries we serve on, held at WARNING (or the chosen level, if higher).
LIBRARIES = ("uvicorn", "hypercorn", "quart", "coredis", "httpx", "httpcore", "asyncio")

TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC), level, logger and message, with an access-log
    line's fields (method, path, status, duration_ms, client, principal, task_id) as keys of
    their own, and the traceback, if any, under ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            entry.update(access)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def check_logging(level: object, fmt: object) -> None:
    """Raise :class:`ValueError` unless ``level`` and ``fmt`` are ones we take."""
    if level not in LOG_LEVELS:
        raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
    if fmt not in LOG_FORMATS:
        raise ValueError(f"log_format must be one of {', '.join(LOG_FORMATS)}, got {fmt!r}")


def configure_logging(level: str = "info", fmt: str = "text") -> None:
    """Log at ``level`` in ``fmt`` on stderr (unless the root logger has a handler already:
    then only the levels are set)."""
    check_logging(level, fmt)
    number = logging.getLevelNamesMapping()[level.upper()]
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
        root.addHandler(handler)
    root.setLevel(number)
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(max(number, logging.WARNING))
