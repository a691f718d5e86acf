"""A finished race as the archive keeps it (records/archive.py's `FinishedRace`): pure, from
the race as it ended, its seats' moves and its one replay text; and back, an archived race's
results as a live room gives them (GET /rooms/{id}/results of a room that expired)."""

from __future__ import annotations

import json
from typing import Any, cast

from core import splits
from core.replay import line_hash, verify
from records.archive import FinishedRace, SeatResult, race_id
from server.room.race import FinishedRound, Race, ranked, result_line

__all__ = ["archived_race", "archived_round", "replay_stuck"]


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
    for line in race.results:
        row = cast(dict[str, Any], line)
        seat = int(row["seat"])
        quarters = row.get("splits")
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
                splits=None if quarters is None else [_ms(s) for s in quarters],
                stuck=bool(row["stuck"]),
                out=row["out"],
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


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000  # the very float the live race showed


def archived_round(race: FinishedRace, seed_shown: bool) -> FinishedRound:
    """The archived race's results as GET /rooms/{id}/results gives a live room's: ranked
    by the live race's own rule from the same fields (a row's `place` is that ranking). A
    row archived before `stuck` and `out` were kept (both null) reads `stuck` from the
    replay (`replay_stuck`: exact) and answers `out` null (the replay does not say it)."""
    derived = replay_stuck(race) if any(r.stuck is None for r in race.results) else {}
    lines = [
        result_line(
            seat=row.seat,
            name=row.name,
            won=row.won,
            stuck=derived.get(row.seat, False) if row.stuck is None else row.stuck,
            out=row.out,
            progress=row.progress,
            moves=row.moves,
            time=_seconds(row.time_ms),
            splits=list(splits.empty())
            if row.splits is None
            else [_seconds(split) for split in row.splits],
            player=row.player_id,
            bot=row.is_bot,
        )
        for row in race.results
    ]
    return {
        "round": race.round,
        "seed": race.seed if seed_shown else None,
        "finish_reason": race.finish_reason,
        "results": ranked(lines),
    }


def replay_stuck(race: FinishedRace) -> dict[int, bool]:
    """Each seat's `stuck` as the race ended, from its replay. A racer's `stuck` is read
    on each of their moves (server/handlers/moves.py `progress_event`), so it is their
    board's after their last move; a seat that made none is not stuck, nor is a ghost
    (the last seat of a ghost race), whose recorded run is never judged."""
    checked = verify(race.replay)
    boards = dict(checked.played())  # a seat that made no move has no board here
    seats = [int(player["seat"]) for player in checked.header["players"]]
    ghost = max(seats) if race.kind == "ghost" and seats else None
    return {seat: seat != ghost and seat in boards and boards[seat].stuck for seat in seats}
