"""Seats this machine holds, kept on disk, so `solrace play ROOM` gets a seat back after a
restart, whatever name it is run with.

A seat's token is what the server asks to give the seat back (a reconnect with the token
resumes the race). Every seat taken here is kept, per server and room (two players on
one machine, even under one name, keep one entry each), in $XDG_STATE_HOME/solrace/
seats.json (else ~/.local/state/...), readable by the user only.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
from dataclasses import asdict, dataclass
from typing import Any

from client_cli.net import server_key
from client_cli.state_files import one_writer, write_whole

__all__ = ["StoredSeat", "forget_seat", "remember_seat", "state_file", "stored_seats"]

KEEP = 50  # the newest seats kept; older rooms have long expired on the server


@dataclass(frozen=True)
class StoredSeat:
    server: str
    room: str
    name: str  # the name asked for when the seat was taken
    token: str
    seat: int | None  # 0-based as on the wire; None: stored by an older solrace


def state_file() -> pathlib.Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return pathlib.Path(base) / "solrace" / "seats.json"


def _room(room: str) -> str:
    return room.strip().lower()


def _read(entry: Any) -> StoredSeat | None:
    if not isinstance(entry, dict):
        return None
    fields = (entry.get(k) for k in ("server", "room", "name", "token"))
    server, room, name, token = fields
    seat = entry.get("seat")
    if not all(isinstance(v, str) for v in (server, room, name, token)):
        return None
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)):
        return None
    return StoredSeat(server_key(server), room, name, token, seat)  # type: ignore[arg-type]


def _load() -> list[StoredSeat]:
    try:
        data = json.loads(state_file().read_text())
    except (OSError, ValueError):
        return []
    if isinstance(data, dict) and isinstance(data.get("seats"), list):
        return [s for s in map(_read, data["seats"]) if s is not None]
    if isinstance(data, dict):  # solrace before 2026-12: {"SERVER ROOM NAME": token}
        old = []
        for key, token in data.items():
            parts = key.split(" ", 2)
            if len(parts) == 3 and isinstance(token, str):
                seat = StoredSeat(server_key(parts[0]), _room(parts[1]), parts[2], token, None)
                old.append(seat)
        return old
    return []


def _save(seats: list[StoredSeat]) -> None:
    text = json.dumps({"seats": [asdict(s) for s in seats[-KEEP:]]}, indent=1)
    write_whole(state_file(), text)


def stored_seats(server: str, room: str) -> list[StoredSeat]:
    """The seats held here in `room` on `server`, oldest first."""
    server, room = server_key(server), _room(room)
    return [s for s in _load() if s.server == server and s.room == room]


def remember_seat(server: str, room: str, name: str, token: str, seat: int | None) -> None:
    """Keep (or refresh) the seat of `token`; the newest is kept last."""
    with contextlib.suppress(OSError), one_writer(state_file()):
        kept = [s for s in _load() if s.token != token]
        kept.append(StoredSeat(server_key(server), _room(room), name, token, seat))
        _save(kept)
    # (OSError: a read-only home only costs the seat after a restart)


def forget_seat(server: str, room: str, token: str) -> None:
    with contextlib.suppress(OSError), one_writer(state_file()):
        seats = _load()
        kept = [s for s in seats if not (s.token == token and s.room == _room(room))]
        if len(kept) != len(seats):
            _save(kept)
