"""The server's log: one line per record on standard error, as text or as JSON.

Every line names the process it came from (its port, and its id: the prefix of its
connection ids and of its heartbeat key), so the lines of several processes behind one
balancer can be told apart once collected. `--log-format json` prints one JSON object per
line (`time`, `level`, `logger`, `port`, `process`, `message`, and `traceback` when there is
one) for log collectors; `text` (the default) is for people.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

__all__ = ["FORMATS", "JsonFormatter", "ProcessTag", "TextFormatter", "configure", "tag_process"]

FORMATS = ("text", "json")
# Libraries whose DEBUG lines carry what a statement was given (aiosqlite: every query's
# parameters, the hashes of player keys and link codes among them; SQLAlchemy's engine
# at INFO): held at WARNING whatever the level asked for, so that no secret nor its hash
# reaches the log.
QUIET = ("aiosqlite", "asyncpg", "sqlalchemy.engine")
TEXT = "%(asctime)s %(levelname)s [%(port)s] %(name)s: %(message)s"


class ProcessTag(logging.Filter):
    """Adds `port` and `process` (this server process's id) to every record."""

    def __init__(self) -> None:
        super().__init__()
        self.port = "-"
        self.process = "-"

    def filter(self, record: logging.LogRecord) -> bool:
        record.port = self.port
        record.process_id = self.process
        return True


class TextFormatter(logging.Formatter):
    """TEXT, a record's message on one line whatever it holds (a database migration's
    description runs over several): every line of the log but a traceback's begins with
    its time, level and process."""

    def __init__(self) -> None:
        super().__init__(TEXT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        if "\n" in record.message:
            record.message = " ".join(record.message.split())
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "port": getattr(record, "port", "-"),
            "process": getattr(record, "process_id", "-"),
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


_TAG = ProcessTag()


def configure(level: str, fmt: str, port: int) -> None:
    """Log `level` and up to standard error, as `fmt` ("text" or "json")."""
    handler = logging.StreamHandler()
    handler.addFilter(_TAG)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for name in QUIET:
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    _TAG.port = str(port)


def tag_process(process: str) -> None:
    """Name this process's id in every line from now on (known once its app exists)."""
    _TAG.process = process
