"""How `apc serve` logs: text lines for a terminal, or one JSON object per line for a collector.

A JSON line carries `time` (UTC, RFC 3339), `level`, `logger` and `message`, plus the fields a record
was given (an HTTP request's `method`, `path`, `status`, `identity`, `calls`, `duration_ms`) and
`exception` with its traceback when there is one.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Literal, TextIO

LogFormat = Literal["text", "json"]
LEVELS = ("debug", "info", "warning", "error")
QUIET_LOGGERS = ("mcp", "httpx", "httpx2", "uvicorn", "uvicorn.error")
"""Libraries that say too much at INFO; they speak at WARNING unless DEBUG is asked for."""
TEXT_FORMAT = "%(asctime)s %(levelname)s %(message)s"
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(log_format: LogFormat = "text", level: str = "info", stream: TextIO | None = None) -> None:
    """Send every log record at `level` or above to `stream` (stderr) in `log_format`."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    numeric = logging.getLevelName(level.upper())
    root.setLevel(numeric)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(
            max(numeric, logging.WARNING) if numeric > logging.DEBUG else numeric
        )
