"""One INFO line per WebSocket opened and closed, for operators.

With the process's port and id on every line (server/logs.py) and the connection's id
(which starts with the process id), an operator can follow one client through a restart.
"""

from __future__ import annotations

import logging

__all__ = ["log_closed", "log_opened"]

log = logging.getLogger("solrace.connections")


def log_opened(conn_id: str, address: str | None) -> None:
    log.info("connection %s opened from %s", conn_id, address or "this machine")


def log_closed(conn_id: str, code: int | None, seconds: float, frames: int) -> None:
    log.info(
        "connection %s closed: code %s after %.1f s, %d frames received",
        conn_id,
        code if code is not None else "none",
        seconds,
        frames,
    )
