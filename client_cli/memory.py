"""Seat tokens kept on disk, so `solrace play ROOM` gets its seat back after a restart.

The token is what the server asks to give a seat back (RULES: a reconnect with the
token resumes the race). Kept in $XDG_STATE_HOME/solrace/seats.json (else
~/.local/state/...), one entry per server, room and player name, readable by the user
only: a friend joining from a second terminal of the same account, under another name,
takes a seat of their own instead of the first player's.
"""

from __future__ import annotations

import json
import os
import pathlib

__all__ = ["forget_token", "recall_token", "remember_token", "state_file"]

KEEP = 50  # the newest seats kept; older rooms have long expired on the server


def state_file() -> pathlib.Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return pathlib.Path(base) / "solrace" / "seats.json"


def _load() -> dict[str, str]:
    try:
        data = json.loads(state_file().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def _save(seats: dict[str, str]) -> None:
    path = state_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(list(seats.items())[-KEEP:]), indent=1))
        tmp.chmod(0o600)
        tmp.replace(path)
    except OSError:
        pass  # a read-only home only costs the seat after a restart


def _key(server: str, room: str, name: str) -> str:
    return f"{server.rstrip('/')} {room} {name}"


def recall_token(server: str, room: str, name: str) -> str | None:
    return _load().get(_key(server, room, name))


def remember_token(server: str, room: str, name: str, token: str) -> None:
    seats = _load()
    seats.pop(_key(server, room, name), None)
    seats[_key(server, room, name)] = token
    _save(seats)


def forget_token(server: str, room: str, name: str) -> None:
    seats = _load()
    if seats.pop(_key(server, room, name), None) is not None:
        _save(seats)
