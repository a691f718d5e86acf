"""Quick match: who a new player is paired with when several others wait for the game.

Nobody waits for lack of a close match: a player asking when anyone else waits is paired
at once, as always. Which of the waiting players they get is decided by rating: each
waiting player accepts opponents within a range of their own rating that starts at
RANGE_START points and widens by RANGE_WIDENS points every second they have waited (so
after 10 s, 600 points either way). The newcomer goes to the waiting player whose range
they are furthest inside (closest in rating among those who accept them); when no range
covers them, to the closest in rating all the same; ties go to who has waited longest.
A player is never paired with themselves (two sockets of one player asking at once). A
player with no rating in the game counts as UNRATED (the scale's starting value).

`partner` is the rule; server/storage/lua/quick.lua applies the same rule atomically in
Redis, and the memory store calls `partner` (the store contract runs both).
"""

from __future__ import annotations

from dataclasses import dataclass

from records.ratings import START

__all__ = ["RANGE_START", "RANGE_WIDENS", "UNRATED", "Ticket", "partner"]

RANGE_START = 100.0  # rating points either way a player accepts as soon as they ask
RANGE_WIDENS = 50.0  # more points every second waited
UNRATED = START.display  # a player with no rating in the game: where everyone starts


@dataclass(frozen=True, slots=True)
class Ticket:
    """A waiting player, as the queue keeps them: `id|player|bot|rating|at|name`."""

    id: str  # "PROCESS-RANDOM": the server process whose socket waits (server/edge/app.py)
    name: str
    at: float  # server time it was queued
    player: str | None = None
    bot: bool = False
    rating: int | None = None

    def encode(self) -> str:
        rating = "" if self.rating is None else str(self.rating)
        return f"{self.id}|{self.player or ''}|{int(self.bot)}|{rating}|{self.at!r}|{self.name}"

    @classmethod
    def decode(cls, text: str) -> Ticket:
        id_, player, bot, rating, at, name = text.split("|", 5)
        return cls(
            id=id_,
            name=name,
            at=float(at),
            player=player or None,
            bot=bot == "1",
            rating=int(rating) if rating else None,
        )

    @property
    def strength(self) -> int:
        return UNRATED if self.rating is None else self.rating


def partner(me: Ticket, waiting: list[Ticket], now: float) -> int | None:
    """The index in `waiting` (oldest first) of who `me` races, or None: `me` waits."""
    best: tuple[float, float, int] | None = None
    for index, other in enumerate(waiting):
        if other.id == me.id or (me.player is not None and other.player == me.player):
            continue
        gap = abs(other.strength - me.strength)
        reach = RANGE_START + RANGE_WIDENS * max(0.0, now - other.at)
        key = (max(0.0, gap - reach), gap, index)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]
