"""Records databases ready for a test: `migrated(url)` (an engine at head), players added
straight into the table (`add_player`), and finished races to archive (`finished_race`)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Sequence

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from records.archive import FinishedRace, SeatResult
from records.engine import open_engine
from records.migrate import upgrade_to_head
from records.schema import players

__all__ = ["add_player", "finished_race", "migrated"]


@contextlib.asynccontextmanager
async def migrated(url: str) -> AsyncIterator[AsyncEngine]:
    engine = open_engine(url)
    try:
        await upgrade_to_head(engine)
        yield engine
    finally:
        await engine.dispose()


async def add_player(engine: AsyncEngine, player_id: str, name: str, bot: bool = False) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            sa.insert(players),
            {
                "id": player_id,
                "name": name,
                "name_key": name.casefold(),
                "is_bot": bot,
                "created_at": 0.0,
                "last_seen_at": 0.0,
            },
        )


def finished_race(
    room: str,
    places: Sequence[int],
    *,
    players: Sequence[str | None] = (),
    bots: Sequence[int] = (),
    round_: int = 1,
    game: str = "shaula",
    seed: int = 617,
    ended_at: float = 1_000_000.0,
    rated: bool = True,
    kind: str = "room",
) -> FinishedRace:
    """A race whose seat i came `places[i]` (1 wins, in 60 s + i), played by `players[i]`."""
    replay = f'{{"kind":"header","room":"{room}","round":{round_}}}\n'
    results = [
        SeatResult(
            seat=seat,
            name=f"seat {seat}",
            place=place,
            won=place == 1,
            time_ms=60_000 + seat if place == 1 else None,
            progress=52 if place == 1 else 30,
            moves=100,
            player_id=players[seat] if seat < len(players) else None,
            is_bot=seat in bots,
        )
        for seat, place in enumerate(places)
    ]
    return FinishedRace(
        id=f"{room}.{round_}",
        room=room,
        round=round_,
        game=game,
        seed=seed,
        kind=kind,
        rated=rated,
        started_at=ended_at - 120.0,
        ended_at=ended_at,
        finish_reason="all_done",
        replay=replay,
        replay_hash=hashlib.sha256(replay.strip().encode()).hexdigest(),
        results=results,
    )
