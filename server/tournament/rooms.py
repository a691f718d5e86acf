"""The one narrow way tournaments use races: open a room for a heat (a given deal, every
seat reserved for a given player's token, the tournament's settings), and read a race's
record once it has finished. Nothing else of the room core is touched by tournaments, so
a redesign of rooms changes this module only.

A heat's room id is derived from the tournament and the heat (`heat_room`), so opening is
idempotent: two processes that both open it create one room (the store's create is a
compare-and-set on a room that does not exist yet).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import core
from core.replay import write_replay
from protocol import ErrorCode
from server.room.race import Outcome, Race, RaceError, RoomConfig, Status
from server.storage.store import RoomStore

__all__ = ["HeatSpec", "RaceRecord", "RaceRooms", "StoreRooms", "heat_room", "record_of"]


def heat_room(tournament: str, heat: int) -> str:
    return f"{tournament}-{heat}"


@dataclass(frozen=True, slots=True)
class HeatSpec:
    room: str
    tournament: str
    game: str
    seed: int
    players: list[tuple[str, str]]  # (name, token hash), in seat order
    time_limit: float
    spectator_delay: float
    countdown: float
    grace: float
    rated: bool = True
    # Whose seats they are, in seat order: (player id or None, bot); empty: nobody's.
    owners: list[tuple[str | None, bool]] = field(default_factory=list)
    shared: bool = False  # other heats race the same deal (RoomConfig.shared_deal)


@dataclass(frozen=True, slots=True)
class RaceRecord:
    """A finished race as a replay needs it: moves are (seat, move, seconds since start)."""

    room: str
    game: str
    seed: int
    players: list[tuple[int, str]]  # (seat, name)
    moves: list[tuple[int, str, float]]
    started_at: float
    finished_at: float
    finish_reason: str
    tournament: str | None = None  # the tournament whose race it was
    daily: str | None = None  # a daily attempt's "DATE GAME": its replay opens late
    daily_deal: str | None = None  # another race's on a daily deal: the same
    bots: frozenset[int] = frozenset()  # the seats of bot players (marked in the header)

    def replay(self, context: dict[str, Any] | None = None) -> str:
        """The race as a replay (core/replay.py); `context` joins the header (e.g. the
        tournament, round and heat it was)."""
        header: dict[str, Any] = {
            "game": self.game,
            "seed": self.seed,
            "players": [
                {"seat": seat, "name": name, **({"bot": True} if seat in self.bots else {})}
                for seat, name in self.players
            ],
            "room": self.room,
            "started_at": self.started_at,
            "finish_reason": self.finish_reason,
            **({"daily": self.daily} if self.daily else {}),
            **({"daily_deal": self.daily_deal} if self.daily_deal else {}),
            **(context or {}),
        }
        return write_replay(header, self.moves)


class RaceRooms(Protocol):
    async def open(self, spec: HeatSpec, now: float) -> None: ...
    async def exists(self, room: str) -> bool: ...
    async def record(self, room: str) -> RaceRecord | None: ...


class StoreRooms:
    """RaceRooms over the room store (server/storage/store.py)."""

    def __init__(self, store: RoomStore) -> None:
        self.store = store

    async def open(self, spec: HeatSpec, now: float) -> None:
        config = RoomConfig(
            game=spec.game,
            seats=len(spec.players),
            seed_mode="fixed",
            undo=True,
            hints=False,
            time_limit=spec.time_limit,
            spectator_delay=spec.spectator_delay,
            grace=spec.grace,
            countdown=spec.countdown,
            hidden=core.game_class(spec.game).has_talon,
            tournament=spec.tournament,
            shared_deal=spec.shared,
            kind="tournament",
            rated=spec.rated,
        )
        race = Race(room=spec.room, config=config, seed=spec.seed, created_at=now)
        await self.store.create(race)  # a no-op if another process created it first

        def seat_everyone(race: Race) -> Outcome:
            out = Outcome()
            if race.seats:
                return out  # seated already (by whoever created it)
            owners = spec.owners or [(None, False)] * len(spec.players)
            for (name, token_hash), (player, bot) in zip(spec.players, owners, strict=True):
                out.events += race.join(name, token_hash, now, player=player, bot=bot)[1].events
            for seat in list(race.seats):
                out.events += race.set_ready(seat, True, now).events
            return out

        await self.store.transact(spec.room, seat_everyone, now)

    async def exists(self, room: str) -> bool:
        return await self.store.load(room) is not None

    async def record(self, room: str) -> RaceRecord | None:
        """The finished race, or None while it runs (RaceError if there is no room)."""
        loaded = await self.store.load(room)
        if loaded is None:
            raise RaceError(ErrorCode.UNKNOWN_ROOM, f"no room {room!r}")
        race = loaded.race
        if race.status is not Status.FINISHED or race.start_at is None:
            return None  # the rooms' own sweeper ends it on time
        moves = {seat: await self.store.moves(room, seat) for seat in sorted(race.seats)}
        return record_of(race, moves)


def record_of(race: Race, moves: dict[int, list[tuple[float, str]]]) -> RaceRecord | None:
    """The record of a finished race from its seats' moves (seconds, move); None if the race
    has not finished (or never started)."""
    if race.status is not Status.FINISHED or race.start_at is None:
        return None
    timed: list[tuple[int, str, float]] = []
    for seat in sorted(race.seats):
        for at, move in moves.get(seat, []):
            timed.append((seat, move, at - race.start_at))
        if race.seats[seat].ghost:  # a ghost's moves are its recorded steps, not stored
            timed += [(seat, move, t) for t, move in race.ghost_moves()]
    timed.sort(key=lambda m: m[2])  # stable: one seat's order is kept on equal times
    return RaceRecord(
        room=race.room,
        game=race.config.game,
        seed=race.seed,
        players=[(seat, s.name) for seat, s in sorted(race.seats.items())],
        moves=timed,
        started_at=race.start_at,
        finished_at=race.finished_at or race.start_at,
        finish_reason=race.finish_reason or "",
        tournament=race.config.tournament,
        daily=race.config.daily,
        daily_deal=race.config.daily_deal,
        bots=frozenset(seat for seat, s in race.seats.items() if s.bot),
    )
