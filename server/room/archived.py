"""A finished race as the archive keeps it (records/archive.py's `FinishedRace`): pure, from
the race as it ended, its seats' moves and its one replay text."""

from __future__ import annotations

import json
from typing import Any, cast

from core.replay import line_hash
from records.archive import FinishedRace, SeatResult, race_id
from server.room.race import Race

__all__ = ["archived_race"]


def _ms(seconds: Any) -> int | None:
    return None if seconds is None else round(float(seconds) * 1000)


def archived_race(
    race: Race, moves: dict[int, list[tuple[float, str]]], replay: str
) -> FinishedRace:
    """`race` must have finished (its results are kept as ranked then)."""
    if race.results is None or race.start_at is None:
        raise ValueError(f"room {race.room} round {race.round} has not finished")
    header = json.loads(replay.split("\n", 1)[0])
    lines = [line for line in replay.split("\n") if line]
    results = []
    for ranked in race.results:
        row = cast(dict[str, Any], ranked)
        seat = int(row["seat"])
        splits = row.get("splits")
        results.append(
            SeatResult(
                seat=seat,
                name=str(row["name"]),
                place=int(row["rank"]),
                won=bool(row["won"]),
                time_ms=_ms(row.get("time")),
                progress=int(row["progress"]),
                moves=int(row["moves"]),
                player_id=row.get("player"),
                is_bot=bool(row.get("bot", False)),
                used_undo=any(move == "undo" for _, move in moves.get(seat, [])),
                # The server does not record who asked for a hint: a seat in a room that
                # allowed hints counts as having used them.
                used_hints=race.config.hints,
                splits=None if splits is None else [_ms(s) for s in splits],
            )
        )
    tournament = race.config.tournament
    return FinishedRace(
        id=race_id(race.room, race.round),
        room=race.room,
        round=race.round,
        game=race.config.game,
        seed=race.seed,
        kind=race.config.kind,
        rated=race.config.rated,
        started_at=race.start_at,
        ended_at=race.finished_at or race.start_at,
        finish_reason=race.finish_reason or "",
        replay=replay,
        replay_hash=line_hash(lines[-1]),
        results=results,
        tournament=tournament,
        t_round=header.get("round") if tournament is not None else None,
        heat=header.get("heat") if tournament is not None else None,
    )
