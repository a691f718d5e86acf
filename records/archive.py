"""The archive of finished races: `RaceArchive.archive(race)` writes a race, its results and
its rating updates in one transaction, exactly once: `INSERT ... ON CONFLICT DO NOTHING` on
the race's id decides, so when two processes archive the same race one writes everything
and the other nothing (it waits for the first's commit, then finds the id taken). A race
is archived and rated once or not at all.

Ratings (records/ratings.py) are updated in the order races are archived. The rows of the
players rated in a race are locked (PostgreSQL: `SELECT ... FOR UPDATE` in player order;
SQLite: its one writer) so that two races archived at once never both start from the same
rating.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from records.engine import snapshot
from records.ratings import START, Rating, rate
from records.schema import players, race_results, races, rating_history, ratings
from records.sql import insert_ignore, storable

__all__ = ["FinishedRace", "RaceArchive", "SeatResult", "race_id"]

KINDS = ("room", "quick", "tournament", "daily", "ghost")


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    name: str  # as shown in the race
    place: int  # 1 = best; ties share
    won: bool
    time_ms: int | None
    progress: int
    moves: int
    player_id: str | None = None  # None: the seat had no player identity
    is_bot: bool = False
    used_undo: bool = False
    used_hints: bool = False
    splits: Sequence[int | None] | None = None  # ms at each quarter of the cards
    stuck: bool | None = None  # None: archived before it was kept (migration 0004)
    out: str | None = None  # "resigned", "forfeit", a ghost's "ended"; None: not out, or unknown


@dataclass(frozen=True, slots=True)
class FinishedRace:
    id: str  # "{room}.{round}"
    room: str
    round: int
    game: str
    seed: int
    kind: str
    rated: bool
    started_at: float
    ended_at: float
    finish_reason: str
    replay: str  # the NDJSON of core/replay.py: the one replay of this race
    replay_hash: str  # SHA-256 of its last line
    results: Sequence[SeatResult] = field(default_factory=tuple)
    tournament: str | None = None
    t_round: int | None = None
    heat: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}")


def race_id(room: str, round_: int) -> str:
    return f"{room}.{round_}"


class RaceArchive:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def archive(self, race: FinishedRace) -> bool:
        """Write the race, its results and its ratings; False if it was archived already."""
        async with self.engine.begin() as conn:
            row = await conn.execute(
                insert_ignore(conn, races).returning(races.c.id),
                {
                    "id": race.id,
                    "room": race.room,
                    "round": race.round,
                    "game": race.game,
                    "seed": str(race.seed),
                    "kind": race.kind,
                    "rated": race.rated,
                    "tournament": race.tournament,
                    "t_round": race.t_round,
                    "heat": race.heat,
                    "started_at": race.started_at,
                    "ended_at": race.ended_at,
                    "finish_reason": race.finish_reason,
                    "replay": race.replay,
                    "replay_hash": race.replay_hash,
                },
            )
            if row.first() is None:
                return False
            known = await _known_players(conn, race.results)
            changes = await _rate(conn, race, known) if race.rated else {}
            rows = []
            for result in race.results:
                player = result.player_id if result.player_id in known else None
                before, after = changes.get(result.seat, (None, None))
                rows.append(
                    {
                        "race_id": race.id,
                        "seat": result.seat,
                        "player_id": player,
                        "name": result.name,
                        "is_bot": result.is_bot,
                        "place": result.place,
                        "won": result.won,
                        "time_ms": result.time_ms,
                        "progress": result.progress,
                        "moves": result.moves,
                        "used_undo": result.used_undo,
                        "used_hints": result.used_hints,
                        "splits": None if result.splits is None else json.dumps(result.splits),
                        "stuck": result.stuck,
                        "out": result.out,
                        "rating_before": before,
                        "rating_after": after,
                    }
                )
            if rows:
                await conn.execute(sa.insert(race_results), rows)
            return True

    async def replay(self, race_id: str) -> str | None:
        if not storable(race_id):
            return None  # no race's id
        async with snapshot(self.engine) as conn:
            found = await conn.execute(sa.select(races.c.replay).where(races.c.id == race_id))
            return found.scalar_one_or_none()

    async def room_replay(self, room: str) -> str | None:
        """The replay of the room's latest archived race."""
        if not storable(room):
            return None
        async with snapshot(self.engine) as conn:
            found = await conn.execute(_latest_of(room, races.c.replay))
            replay: str | None = found.scalar_one_or_none()
            return replay

    async def room_latest(self, room: str) -> FinishedRace | None:
        """The room's latest archived race with its results (seat order), as archived."""
        if not storable(room):
            return None
        async with snapshot(self.engine) as conn:
            race = (await conn.execute(_latest_of(room, races))).first()
            if race is None:
                return None
            rows = await conn.execute(
                sa.select(race_results)
                .where(race_results.c.race_id == race.id)
                .order_by(race_results.c.seat)
            )
            results = [
                SeatResult(
                    seat=row.seat,
                    name=row.name,
                    place=row.place,
                    won=row.won,
                    time_ms=row.time_ms,
                    progress=row.progress,
                    moves=row.moves,
                    player_id=row.player_id,
                    is_bot=row.is_bot,
                    used_undo=row.used_undo,
                    used_hints=row.used_hints,
                    splits=None if row.splits is None else json.loads(row.splits),
                    stuck=row.stuck,
                    out=row.out,
                )
                for row in rows
            ]
        return FinishedRace(
            id=race.id,
            room=race.room,
            round=race.round,
            game=race.game,
            seed=int(race.seed),
            kind=race.kind,
            rated=race.rated,
            started_at=race.started_at,
            ended_at=race.ended_at,
            finish_reason=race.finish_reason,
            replay=race.replay,
            replay_hash=race.replay_hash,
            results=results,
            tournament=race.tournament,
            t_round=race.t_round,
            heat=race.heat,
        )

    async def exists(self, race_id: str) -> bool:
        if not storable(race_id):
            return False
        async with snapshot(self.engine) as conn:
            found = await conn.execute(sa.select(races.c.id).where(races.c.id == race_id))
            return found.first() is not None


def _latest_of(room: str, *columns: Any) -> sa.Select[Any]:
    """`columns` of the room's latest archived race (its highest round)."""
    return sa.select(*columns).where(races.c.room == room).order_by(races.c.round.desc()).limit(1)


async def _known_players(conn: AsyncConnection, results: Sequence[SeatResult]) -> set[str]:
    """The results' player ids that name a player (a seat's claim is kept only then)."""
    ids = {r.player_id for r in results if r.player_id is not None}
    if not ids:
        return set()
    found = await conn.execute(sa.select(players.c.id).where(players.c.id.in_(ids)))
    return set(found.scalars())


async def _rate(
    conn: AsyncConnection, race: FinishedRace, known: set[str]
) -> dict[int, tuple[int, int]]:
    """Update the ratings of the race's rated seats: a seat with a known player who is no
    bot, each player once. Seat -> (shown rating before, after); nothing if fewer than two,
    or if none of them made a move (a race abandoned before it began says nothing of
    anyone's skill, as an aborted game is not rated)."""
    seats: dict[str, SeatResult] = {}
    for result in sorted(race.results, key=lambda r: r.seat):
        if result.player_id in known and not result.is_bot and result.player_id not in seats:
            seats[result.player_id] = result
    if len(seats) < 2 or not any(result.moves for result in seats.values()):
        return {}
    order = sorted(seats)  # one order for every transaction: no lock cycles
    await conn.execute(
        insert_ignore(conn, ratings),
        [
            {
                "player_id": player,
                "game": race.game,
                "mu": START.mu,
                "sigma": START.sigma,
                "races": 0,
                "last_rated_at": race.ended_at,
            }
            for player in order
        ],
    )
    found = await conn.execute(
        sa.select(ratings)
        .where(ratings.c.game == race.game, ratings.c.player_id.in_(order))
        .order_by(ratings.c.player_id)
        .with_for_update()
    )
    current = {row.player_id: row for row in found}
    before = [
        Rating(current[p].mu, current[p].sigma).aged(race.ended_at - current[p].last_rated_at)
        for p in order
    ]
    after = rate(before, [seats[p].place for p in order])
    changes: dict[int, tuple[int, int]] = {}
    for player, old, new in zip(order, before, after, strict=True):
        await conn.execute(
            sa.update(ratings)
            .where(ratings.c.player_id == player, ratings.c.game == race.game)
            .values(
                mu=new.mu,
                sigma=new.sigma,
                races=ratings.c.races + 1,
                last_rated_at=sa.func.max(ratings.c.last_rated_at, race.ended_at)
                if conn.dialect.name == "sqlite"
                else sa.func.greatest(ratings.c.last_rated_at, race.ended_at),
            )
        )
        changes[seats[player].seat] = (old.display, new.display)
    await conn.execute(
        sa.insert(rating_history),
        [
            {
                "player_id": player,
                "game": race.game,
                "race_id": race.id,
                "at": race.ended_at,
                "change": current[player].races + 1,
                "mu": new.mu,
                "sigma": new.sigma,
                "display": new.display,
            }
            for player, new in zip(order, after, strict=True)
        ],
    )
    return changes
