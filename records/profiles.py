"""What a player's profile shows, read from the records: ratings per game with their
history, races played and won, best winning times, and the latest races a page at a time.

Read-only queries over the archive's tables (records/schema.py); ratings are shown as
records/ratings.py says (the displayed number, provisional, sigma grown with inactivity).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from core import splits as core_splits
from records.engine import snapshot
from records.players import PastName, Player, UnknownPlayer, names_in, player_in
from records.ratings import Rating
from records.schema import race_results, races, rating_history, ratings

__all__ = ["HISTORY_POINTS", "PER_PAGE_MAX", "Profile", "Profiles", "RacePage"]

HISTORY_POINTS = 100  # the latest rating changes drawn per game
PER_PAGE_MAX = 100


@dataclass(frozen=True, slots=True)
class RacePage:
    items: list[dict[str, Any]]
    page: int
    per_page: int
    more: bool


@dataclass(frozen=True, slots=True)
class Profile:
    """What `GET /players/{name}` shows of a player's records, read at one moment."""

    player: Player
    names: list[PastName]  # the player's earlier names, the latest first
    ratings: list[dict[str, Any]]
    stats: dict[str, int]
    best: list[dict[str, Any]]
    splits: list[dict[str, Any]]  # per game: `splits_of`'s summary
    splits_by_race: dict[str, list[int | None]]
    races: RacePage


def _results_of(player_id: str, *columns: sa.ColumnElement[Any]) -> sa.Select[Any]:
    """A query of `columns` over the player's results, each joined with its race."""
    return (
        sa.select(*columns)
        .join(races, races.c.id == race_results.c.race_id)
        .where(race_results.c.player_id == player_id)
    )


def _shown(mu: float, sigma: float, last_rated_at: float, now: float) -> Rating:
    return Rating(mu, sigma).aged(now - last_rated_at)


class Profiles:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def _rows(self, query: sa.Executable) -> Sequence[sa.Row[Any]]:
        async with snapshot(self.engine) as db:
            return await _rows(db, query)

    async def profile(self, player_id: str, page: int, per_page: int, now: float) -> Profile:
        """The player's name and earlier names, ratings, counts, bests, splits and a page
        of their races, all as they were at one moment (`snapshot`): a race archived or a
        rename meanwhile is in none of them. UnknownPlayer if no player has that id."""
        async with snapshot(self.engine) as db:
            player = await player_in(db, player_id)
            if player is None:
                raise UnknownPlayer(player_id)
            names = await names_in(db, player_id)
            races = await _races_of(db, player_id, page, per_page)
            stats = await _stats_of(db, player_id)
            best = await _best_times(db, player_id)
            splits, by_race = await _splits_of(db, player_id)
            ratings = await _ratings_of(db, player_id, now)
        return Profile(player, names, ratings, stats, best, splits, by_race, races)

    async def rating(self, player_id: str, game: str, now: float) -> Rating | None:
        """The player's rating in `game` now (its `display`, whether `provisional`), or
        None if never rated in it."""
        rows = await self._rows(
            sa.select(ratings.c.mu, ratings.c.sigma, ratings.c.last_rated_at).where(
                ratings.c.player_id == player_id, ratings.c.game == game
            )
        )
        if not rows:
            return None
        row = rows[0]
        return _shown(row.mu, row.sigma, row.last_rated_at, now)

    async def best_times(self, player_id: str) -> list[dict[str, Any]]:
        """The player's fastest win in each game: its time, race, deal and tournament."""
        async with snapshot(self.engine) as db:
            return await _best_times(db, player_id)

    async def seat_in(self, player_id: str, race_id: str) -> int | None:
        """The player's seat in an archived race, if they raced in it."""
        rows = await self._rows(
            _results_of(player_id, race_results.c.seat).where(races.c.id == race_id)
        )
        return int(rows[0].seat) if rows else None

    async def best_run(self, player_id: str, game: str) -> dict[str, Any] | None:
        """The player's personal best in `game` (the fastest win, as `_splits_of` finds
        it): its race, time and splits in ms; None without a win on record."""
        async with snapshot(self.engine) as db:
            games, _ = await _splits_of(db, player_id, game)
        if not games or games[0]["best"] is None:
            return None
        best = games[0]
        return {"race": best["race"], "time_ms": best["best_time"], "splits": best["best"]}


async def _rows(db: AsyncConnection, query: sa.Executable) -> Sequence[sa.Row[Any]]:
    return (await db.execute(query)).all()


async def _ratings_of(db: AsyncConnection, player_id: str, now: float) -> list[dict[str, Any]]:
    """Each game the player is rated in: the rating now, whether it is provisional,
    rated races, and the history (the latest HISTORY_POINTS changes, in the order they
    were made: a race archived late comes after those archived before it)."""
    rows = (
        await db.execute(
            sa.select(ratings).where(ratings.c.player_id == player_id).order_by(ratings.c.game)
        )
    ).all()
    shown = []
    for row in rows:
        history = (
            await db.execute(
                sa.select(
                    rating_history.c.at,
                    rating_history.c.display,
                    rating_history.c.race_id,
                )
                .where(
                    rating_history.c.player_id == player_id,
                    rating_history.c.game == row.game,
                )
                .order_by(rating_history.c.change.desc())
                .limit(HISTORY_POINTS)
            )
        ).all()
        rating = _shown(row.mu, row.sigma, row.last_rated_at, now)
        shown.append(
            {
                "game": row.game,
                "rating": rating.display,
                "provisional": rating.provisional,
                "races": row.races,
                "last_rated_at": row.last_rated_at,
                "history": [
                    {"at": h.at, "rating": h.display, "race": h.race_id} for h in reversed(history)
                ],
            }
        )
    return shown


async def _stats_of(db: AsyncConnection, player_id: str) -> dict[str, int]:
    (row,) = await _rows(
        db,
        sa.select(
            sa.func.count().label("races"),
            sa.func.coalesce(sa.func.sum(sa.case((race_results.c.won, 1), else_=0)), 0).label(
                "won"
            ),
        ).where(race_results.c.player_id == player_id),
    )
    return {"races": int(row.races), "won": int(row.won)}


async def _best_times(db: AsyncConnection, player_id: str) -> list[dict[str, Any]]:
    """The player's fastest win in each game: its time, race, deal and tournament."""
    rows = await _rows(
        db,
        _results_of(
            player_id,
            races.c.game,
            race_results.c.time_ms,
            races.c.id,
            races.c.seed,
            races.c.tournament,
            races.c.ended_at,
        )
        .where(race_results.c.won, race_results.c.time_ms.is_not(None))
        .order_by(races.c.game, race_results.c.time_ms, races.c.ended_at),
    )
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        best.setdefault(
            row.game,
            {
                "game": row.game,
                "time": row.time_ms / 1000,
                "race": row.id,
                "seed": row.seed,
                "tournament": row.tournament,
                "at": row.ended_at,
            },
        )
    return list(best.values())


async def _splits_of(
    db: AsyncConnection, player_id: str, game: str | None = None
) -> tuple[list[dict[str, Any]], dict[str, list[int | None]]]:
    """Per game (or `game` alone), the player's splits (core/splits.py's summary, in ms:
    the personal best's splits and its race, the best segments and their sum), and each
    race's splits by race id (for the delta to the best)."""
    query = (
        _results_of(
            player_id,
            races.c.game,
            races.c.id,
            race_results.c.splits,
            race_results.c.won,
            race_results.c.time_ms,
        )
        .where(race_results.c.splits.is_not(None))
        .order_by(races.c.game, races.c.ended_at)
    )
    if game is not None:
        query = query.where(races.c.game == game)
    rows = await _rows(db, query)
    by_race: dict[str, list[int | None]] = {}
    by_game: dict[str, list[tuple[list[int | None], bool, int | None, str]]] = {}
    for row in rows:
        splits = json.loads(row.splits)
        by_race[row.id] = splits
        by_game.setdefault(row.game, []).append((splits, bool(row.won), row.time_ms, row.id))
    games = []
    for game, runs in by_game.items():
        summary = core_splits.summary((s, won, t) for s, won, t, _ in runs)
        best_race = next((r for s, won, t, r in runs if won and t == summary["best_time"]), None)
        games.append({"game": game, **summary, "race": best_race})
    return games, by_race


async def _races_of(
    db: AsyncConnection, player_id: str, page: int = 1, per_page: int = 20
) -> RacePage:
    """The player's races, the latest first, `per_page` from page `page` (1-based)."""
    page = max(1, page)
    per_page = min(max(1, per_page), PER_PAGE_MAX)
    seats = (
        sa.select(sa.func.count())
        .where(race_results.c.race_id == races.c.id)
        .correlate(races)
        .scalar_subquery()
    )
    rows = await _rows(
        db,
        _results_of(
            player_id,
            races.c.id,
            races.c.game,
            races.c.seed,
            races.c.kind,
            races.c.rated,
            races.c.tournament,
            races.c.ended_at,
            race_results.c.seat,
            race_results.c.name,
            race_results.c.place,
            race_results.c.won,
            race_results.c.time_ms,
            race_results.c.progress,
            race_results.c.rating_before,
            race_results.c.rating_after,
            seats.label("seats"),
        )
        .order_by(races.c.ended_at.desc(), races.c.id)
        .offset((page - 1) * per_page)
        .limit(per_page + 1),
    )
    items = [
        {
            "race": row.id,
            "game": row.game,
            "seed": row.seed,
            "kind": row.kind,
            "rated": bool(row.rated),
            "tournament": row.tournament,
            "ended_at": row.ended_at,
            "seat": row.seat,
            "name": row.name,
            "place": row.place,
            "seats": int(row.seats),
            "won": bool(row.won),
            "time": None if row.time_ms is None else row.time_ms / 1000,
            "progress": row.progress,
            "rating_before": row.rating_before,
            "rating_after": row.rating_after,
            "replay": f"/races/{row.id}/replay",
        }
        for row in rows[:per_page]
    ]
    return RacePage(items, page, per_page, more=len(rows) > per_page)
