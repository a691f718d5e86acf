"""Leaderboards per game, from the archive (read only).

- By rating: players whose rating is settled (not provisional, records/ratings.py) and who
  played a rated race in the period: `day` (since 00:00 UTC today), `week` (since Monday
  00:00 UTC) or `all` (the last `ACTIVE_DAYS` days: "recently active"). Ratings are shown as
  of now (sigma grown with inactivity), ranked by that number.
- By time on a deal: each player's best winning time on one deal (game and seed) in the
  period (`all`: ever), with the race it was set in. Races in rooms that allowed hints do not
  count. Bots are listed, marked.

Equal numbers share a rank (1, 2, 2, 4). `around` centres a page on a player.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from records.engine import snapshot
from records.ratings import DAY, Rating
from records.schema import players, race_results, races, ratings

__all__ = ["ACTIVE_DAYS", "PERIODS", "Board", "Leaderboards", "period_start"]

PERIODS = ("day", "week", "all")
ACTIVE_DAYS = 30


def period_start(period: str, now: float, *, rating: bool) -> float | None:
    """When `period` began as of `now` (UTC); None: no bound."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}")
    if period == "all":
        return now - ACTIVE_DAYS * DAY if rating else None
    today = dt.datetime.fromtimestamp(now, dt.UTC).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    if period == "week":
        today -= dt.timedelta(days=today.weekday())
    return today.timestamp()


@dataclass(frozen=True, slots=True)
class Board:
    """One page of a leaderboard: `rows` from `offset`, of `total` ranked."""

    total: int
    offset: int
    rows: list[dict[str, Any]]


def _ranked(rows: list[dict[str, Any]], key: str, descending: bool) -> list[dict[str, Any]]:
    rows.sort(key=lambda r: (-r[key] if descending else r[key], r["player"]["name"].casefold()))
    for position, row in enumerate(rows, start=1):
        same = position > 1 and rows[position - 2][key] == row[key]
        row["rank"] = rows[position - 2]["rank"] if same else position
    return rows


def _page(rows: list[dict[str, Any]], offset: int, limit: int, around: str | None) -> Board:
    if around is not None:
        around = around.lower()  # ids are lower case; read in any case, as a race's id is
        mine = next((i for i, r in enumerate(rows) if r["player"]["id"] == around), None)
        if mine is not None:
            offset = max(0, min(mine - limit // 2, len(rows) - limit))
    return Board(len(rows), offset, rows[offset : offset + limit])


def _player(row: Any) -> dict[str, Any]:
    return {"id": row.player_id, "name": row.name, "bot": row.is_bot}


class Leaderboards:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def by_rating(
        self,
        game: str,
        period: str,
        now: float,
        *,
        offset: int = 0,
        limit: int = 50,
        around: str | None = None,
    ) -> Board:
        since = period_start(period, now, rating=True)
        query = (
            sa.select(
                ratings.c.player_id,
                ratings.c.mu,
                ratings.c.sigma,
                ratings.c.races,
                ratings.c.last_rated_at,
                players.c.name,
                players.c.is_bot,
            )
            .join(players, players.c.id == ratings.c.player_id)
            .where(ratings.c.game == game, ratings.c.last_rated_at >= since)
        )
        async with snapshot(self.engine) as conn:
            found = (await conn.execute(query)).all()
        rows = []
        for row in found:
            shown = Rating(row.mu, row.sigma).aged(now - row.last_rated_at)
            if shown.provisional:
                continue
            rows.append(
                {
                    "player": _player(row),
                    "rating": shown.display,
                    "races": row.races,
                    "last_rated_at": row.last_rated_at,
                }
            )
        return _page(_ranked(rows, "rating", descending=True), offset, limit, around)

    async def by_time(
        self,
        game: str,
        seed: int,
        period: str,
        now: float,
        *,
        offset: int = 0,
        limit: int = 50,
        around: str | None = None,
    ) -> Board:
        since = period_start(period, now, rating=False)
        best = sa.func.row_number().over(
            partition_by=race_results.c.player_id,
            order_by=(race_results.c.time_ms, races.c.ended_at),
        )
        conditions: list[Any] = [
            races.c.game == game,
            races.c.seed == str(seed),
            race_results.c.won.is_(True),
            race_results.c.time_ms.is_not(None),
            race_results.c.player_id.is_not(None),
            race_results.c.used_hints.is_(False),
        ]
        if since is not None:
            conditions.append(races.c.ended_at >= since)
        inner = (
            sa.select(
                race_results.c.player_id,
                race_results.c.time_ms,
                race_results.c.race_id,
                races.c.ended_at,
                best.label("best"),
            )
            .join(races, races.c.id == race_results.c.race_id)
            .where(*conditions)
            .subquery()
        )
        query = (
            sa.select(inner, players.c.name, players.c.is_bot)
            .join(players, players.c.id == inner.c.player_id)
            .where(inner.c.best == 1)
        )
        async with snapshot(self.engine) as conn:
            found = (await conn.execute(query)).all()
        rows = [
            {
                "player": _player(row),
                "time_ms": row.time_ms,
                "race": row.race_id,
                "replay": f"/races/{row.race_id}/replay",
                "at": row.ended_at,
            }
            for row in found
        ]
        return _page(_ranked(rows, "time_ms", descending=False), offset, limit, around)
