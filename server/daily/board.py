"""A day's board of one game, and a player's streaks: pure.

Ranked attempts only (an attempt that used undo is kept but unranked). Winners first, by
time (to the millisecond), then fewer moves; then the others by more cards up, then fewer
moves. Equal keys share a place (1, 2, 2, 4). An attempt still running is listed apart.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Attempt", "ranking", "streaks"]


@dataclass(slots=True)
class Attempt:
    """A player's ranked attempt at a day's deal: its room, and its result once over."""

    player: str
    name: str
    room: str
    started_at: float
    finished: bool = False
    won: bool = False
    time: float | None = None  # seconds from the start to the win
    progress: int = 0
    moves: int = 0
    used_undo: bool = False
    bot: bool = False  # a bot player's: shown as one (kept attempts from before say False)

    @property
    def ranked(self) -> bool:
        return not self.used_undo

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Attempt:
        return cls(**data)


def _key(a: Attempt) -> tuple[int, int, int, int]:
    if a.won:
        return (0, round((a.time or 0.0) * 1000), 0, a.moves)
    return (1, 0, -a.progress, a.moves)


def ranking(attempts: list[Attempt]) -> list[dict[str, Any]]:
    """The board's rows: finished ranked attempts in order, each with its `place`."""
    done = sorted((a for a in attempts if a.finished and a.ranked), key=lambda a: (_key(a), a.name))
    rows: list[dict[str, Any]] = []
    previous: tuple[int, int, int, int] | None = None
    for position, attempt in enumerate(done, start=1):
        key = _key(attempt)
        place = rows[-1]["place"] if key == previous else position
        previous = key
        rows.append({"place": place, **_public(attempt)})
    return rows


def _public(a: Attempt) -> dict[str, Any]:
    return {
        "player": a.player,
        "name": a.name,
        "room": a.room,
        "won": a.won,
        "time": a.time,
        "progress": a.progress,
        "moves": a.moves,
        "bot": a.bot,
    }


def streaks(days: dict[dt.date, bool], today: dt.date) -> dict[str, int]:
    """Days in a row with an attempt (`played`) and with a won one (`won`), ending today,
    or yesterday while today's is still to come. `days`: each day played, and if won."""

    def run(ok: Any) -> int:
        day = today if ok(days.get(today)) else today - dt.timedelta(days=1)
        count = 0
        while ok(days.get(day)):
            count += 1
            day -= dt.timedelta(days=1)
        return count

    return {"played": run(lambda v: v is not None), "won": run(lambda v: v is True)}
