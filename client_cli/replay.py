"""A replay as the terminal steps through it: every racer's board after any move line.

The text is checked first (core.replay.verify: the hash chain, every move with the engine,
the results line); the boards are the engine's, played here. `go(n)` stands after the
replay's first `n` moves (0: the deal); `at_time(t)` is the position at `t` seconds.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp

import core
from client_cli.identity import load_identity
from client_cli.net import foreign_status, http_url, no_server, not_solrace
from core import splits as core_splits
from core.replay import ReplayError, Verified, line_hash, verify

__all__ = ["SPEEDS", "ReplayModel", "ReplayUnavailable", "load_replay", "replay_source"]

SPEEDS = (1, 4, 16)
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=20)
# A room's code (server/room/ids.py), and an archived race's id: its room's code and round.
ROOM_CODE = re.compile(r"[0-9a-z_-]{1,64}")
RACE_ID = re.compile(r"[0-9a-z_-]{1,64}\.[0-9]+")


class ReplayUnavailable(Exception):
    """The replay could not be had or read; the message says why."""


def replay_source(race: str) -> tuple[str, str] | None:
    """Where the server keeps the replay `race` names, and what it names, in words: a race's
    id (ROOM.ROUND, any case: GET /races/ID/replay, the archive's), else a room's code (GET
    /rooms/ROOM/replay: its latest race, from the archive once the room has expired); None
    when it is neither."""
    code = race.strip().lower()
    if RACE_ID.fullmatch(code):
        return f"/races/{quote(code, safe='')}/replay", f"race {code}"
    if ROOM_CODE.fullmatch(code):
        return f"/rooms/{quote(code, safe='')}/replay", f"room {code}"
    return None


async def load_replay(server: str, race: str) -> str:
    """A replay's text: the file `race` when there is one, else the server's replay of the
    race or room `race` names (`replay_source`)."""
    path = Path(race)
    if path.is_file():
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ReplayUnavailable(f"cannot read {race}: {error}") from error
    source = replay_source(race)
    if source is None:
        raise ReplayUnavailable(
            f"no replay file {race} (nor is it a room's code or a race's id, ROOM.ROUND)"
        )
    where, named = source
    url = http_url(server, where)
    # Asked as this machine's player, when there is one: a daily deal's replay is theirs
    # to see once their own attempt is over (the key in a header, never in the URL).
    me = load_identity(server)
    headers = {"Authorization": f"Bearer {me.key}"} if me is not None else None
    try:
        async with (
            aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as http,
            http.get(url, headers=headers) as response,
        ):
            text = await response.text()
            if response.status == 200:
                return text
            if response.content_type == "application/json":
                try:
                    said = (await response.json())["error"]["message"]
                except (ValueError, KeyError, TypeError):
                    said = text[:200]
                raise ReplayUnavailable(f"no replay of {named}: {said}")
            if foreign_status(response.status):
                raise ReplayUnavailable(not_solrace(server, f"HTTP {response.status}"))
            raise ReplayUnavailable(f"cannot reach {url}: HTTP {response.status}")
    except aiohttp.ClientConnectorError as error:
        raise ReplayUnavailable(no_server(server)) from error
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ReplayUnavailable(f"cannot reach {url}: {error or type(error).__name__}") from error


@dataclass
class ReplayModel:
    replay: Verified
    last_hash: str
    pos: int = 0
    games: dict[int, core.Game] = field(default_factory=dict)
    splits: dict[int, core_splits.Splits] = field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str) -> ReplayModel:
        """A checked replay (ReplayUnavailable, saying where, when it does not check)."""
        try:
            replay = verify(text)
        except ReplayError as error:
            raise ReplayUnavailable(f"this replay does not verify: {error}") from error
        last = [line for line in text.split("\n") if line.strip()][-1]
        model = cls(replay, line_hash(last))
        model.splits = core_splits.of_replay(replay)
        model.go(0)
        return model

    @property
    def game(self) -> str:
        return str(self.replay.header["game"])

    @property
    def seed(self) -> int:
        return int(self.replay.header["seed"])

    @property
    def players(self) -> list[dict[str, Any]]:
        return list(self.replay.header["players"])

    @property
    def total(self) -> int:
        return len(self.replay.moves)

    def name(self, seat: int) -> str:
        """The seat's racer as the replay names it, "(bot)" after a bot's name."""
        for player in self.players:
            if player["seat"] == seat:
                return f"{player['name']} (bot)" if player.get("bot") else str(player["name"])
        return f"seat {seat}"

    def go(self, n: int) -> None:
        """Stand after the first `n` move lines (clamped)."""
        n = max(0, min(self.total, n))
        if n < self.pos or not self.games:
            self.games = {int(p["seat"]): core.new_game(self.game, self.seed) for p in self.players}
            self.pos = 0
        for seat, move, _t in self.replay.moves[self.pos : n]:
            game = self.games[seat]
            if move == "undo":
                game.undo()
            else:
                game.apply(move)
        self.pos = n

    def time(self) -> float:
        """Seconds since the start at the position (the last move's time)."""
        return self.replay.moves[self.pos - 1][2] if self.pos else 0.0

    def at_time(self, t: float) -> int:
        """The position at `t` seconds: every move made by then."""
        return bisect.bisect_right([m[2] for m in self.replay.moves], t)

    def last_move(self) -> tuple[int, str, float] | None:
        return self.replay.moves[self.pos - 1] if self.pos else None

    def splits_by(self, seat: int, t: float) -> tuple[float | None, ...]:
        """The seat's splits reached by `t` seconds."""
        return tuple(
            s if s is not None and s <= t else None
            for s in self.splits.get(seat, core_splits.empty())
        )
