"""Who `solrace` plays as: the player key of this machine, one per server, kept on disk.

The first command that needs a player (play, a quick match, a tournament) makes an
anonymous one (`POST /players`) and keeps its secret key in $XDG_STATE_HOME/solrace/
players.json (else ~/.local/state/...), readable by the user only; every socket then
sends it first (`identify`) and every request that acts as the player carries it in
`Authorization: Bearer` (never in a URL). The bot keeps a key of its own, made as a bot,
and one per name it is given (`bot_kind`).
`solrace login`, `link CODE` and `logout` replace or drop the key (docs/protocol.md 11).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import pathlib
from collections.abc import Iterator
from typing import Any

from client_cli.net import server_key
from client_cli.state_files import one_writer, write_whole

__all__ = [
    "Identity",
    "bot_kind",
    "forget_identity",
    "load_identity",
    "players_file",
    "quick_match_free",
    "save_identity",
]

HUMAN, BOT = "player", "bot"


class Identity(dict[str, Any]):
    """{"key", "id", "name"} of one player on one server."""

    @property
    def key(self) -> str:
        return str(self["key"])


def players_file() -> pathlib.Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return pathlib.Path(base) / "solrace" / "players.json"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(players_file().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    # Kept under any spelling of the address by an older solrace: under its one spelling
    # now (where two spellings name one server, the one already so spelt wins).
    return {
        server_key(server): entry
        for server, entry in sorted(data.items(), key=lambda item: item[0] == server_key(item[0]))
    }


def _save(data: dict[str, Any]) -> None:
    # Created readable by the user only, before the key is written into it.
    write_whole(players_file(), json.dumps(data, indent=1))


def load_identity(server: str, kind: str = HUMAN) -> Identity | None:
    entry = _load().get(server_key(server), {}).get(kind)
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return None
    return Identity(entry)


def save_identity(server: str, key: str, player: dict[str, Any], kind: str = HUMAN) -> Identity:
    entry = Identity(key=key, id=player.get("id"), name=player.get("name"))
    with one_writer(players_file()):
        data = _load()
        data.setdefault(server_key(server), {})[kind] = dict(entry)
        _save(data)
    return entry


def bot_kind(server: str, name: str | None) -> str:
    """Which of this machine's bots `solrace bot` plays as: without a name, the machine's
    own (Bot-NNNN at first); with one, the bot of that name, one per name, so that bots of
    one machine take a seat each in a room and race each other (one player holds one seat
    of a room). The machine's own bot already so called is that bot."""
    if name is None:
        return BOT
    own = load_identity(server, BOT)
    if own is not None and str(own.get("name", "")).casefold() == name.casefold():
        return BOT
    return f"{BOT}:{name.casefold()}"


def forget_identity(server: str, kind: str = HUMAN) -> None:
    with one_writer(players_file()):
        data = _load()
        if data.get(server_key(server), {}).pop(kind, None) is not None:
            _save(data)


@contextlib.contextmanager
def quick_match_free(server: str) -> Iterator[bool]:
    """Whether this machine's player is free for a quick match on `server`: no other
    terminal here is in one as them (the server never pairs a player with themself, so two
    terminals of one player would wait for ever). True: it is now this terminal's until
    the block ends (a lock the system drops with the process, however it ends)."""
    digest = hashlib.sha256(server_key(server).encode()).hexdigest()[:16]
    path = players_file().with_name(f"quick-{digest}.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by another terminal
            free = False
        else:
            free = True
        yield free
