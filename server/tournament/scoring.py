"""How races turn into places, points and standings, for every tournament format.

Pure functions of race results: the live tournament (server/tournament/machine.py) and a
reader who recomputes the standings from the replays alone (tests/server/
test_tournament_replays.py) call the same code. docs/tournaments.md states these rules for
players; a change here is a change there.

- Place in a race (or in a Rounds round, all heats together): finishers by time, then
  non-finishers by progress, then by when they reached it (earlier is better). Equal keys
  share a place (1, 2, 2, 4); times count to the millisecond.
- Rounds: in a round of N racers, place p is worth N - p + 1 points; players sharing
  places p .. p+k-1 share those points equally (each gets their mean). Standings: points,
  then round wins (place 1), then total time of finished rounds (less is better), then
  total progress.
- Arena: a heat win (place 1, and finished) scores 2, another finish 1, else 0; after two
  heat wins in a row every heat scores double until a heat is not won (that heat still
  doubled); a heat left with fewer than FEW_MOVES moves and not finished scores 0 and
  ends the streak. Standings: score, then heat wins, then total progress.
- Knockout: a finisher beats a non-finisher; two finishers: the earlier; neither: more
  progress, then earlier reaching it; still equal: no winner (a new deal is raced).
  Standings: the round reached (still in beats out; out later beats out earlier), then
  races won (a bye or a walkover is no race won).
- Every format: players in `last` (removed by the organiser) come after everyone else;
  ranks are competition ranks (1, 2, 2, 4) over that order, shared only by equal rows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FEW_MOVES",
    "ArenaRow",
    "KnockoutRow",
    "RaceResult",
    "RoundsRow",
    "arena_standings",
    "knockout_standings",
    "knockout_winner",
    "places",
    "round_points",
    "rounds_standings",
]

FEW_MOVES = 3  # an Arena heat left with fewer moves than this (and not won) is abandoned


@dataclass(frozen=True, slots=True)
class RaceResult:
    """One racer's race, as its replay proves it (times in seconds since the start)."""

    player: int  # the tournament's player id
    won: bool
    time: float | None  # when the deal was won, if it was
    progress: int  # cards on foundations at the end
    reached: float  # when that progress was reached (0.0: never moved a card up)
    moves: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "won": self.won,
            "time": self.time,
            "progress": self.progress,
            "reached": self.reached,
            "moves": self.moves,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RaceResult:
        return cls(
            player=int(data["player"]),
            won=bool(data["won"]),
            time=None if data.get("time") is None else float(data["time"]),
            progress=int(data["progress"]),
            reached=float(data["reached"]),
            moves=int(data["moves"]),
        )


def _key(result: RaceResult) -> tuple[int, int, int]:
    """Smaller is better; milliseconds, so that equal times are equal."""
    if result.won:
        return (0, round((result.time or 0.0) * 1000), 0)
    return (1, -result.progress, round(result.reached * 1000))


def places(results: Iterable[RaceResult]) -> list[tuple[int, RaceResult]]:
    """(place, result), best first; equal keys share the better place (1, 2, 2, 4)."""
    return _ranked(list(results), _key, ())


def round_points(results: Sequence[RaceResult]) -> dict[int, tuple[int, float]]:
    """player -> (place, points) in one Rounds round (every heat of it together)."""
    placed = places(results)
    field = len(placed)
    shared: dict[int, int] = {}
    for place, _ in placed:
        shared[place] = shared.get(place, 0) + 1
    out: dict[int, tuple[int, float]] = {}
    for place, result in placed:
        k = shared[place]
        out[result.player] = (place, field - place + 1 - (k - 1) / 2)
    return out


@dataclass(slots=True)
class RoundsRow:
    player: int
    points: float = 0.0
    wins: int = 0
    time: float = 0.0  # total time of the rounds this player finished
    progress: int = 0
    rounds: int = 0  # rounds raced
    per_round: dict[int, float] | None = None  # round -> points

    def key(self) -> tuple[float, int, float, int]:
        return (-self.points, -self.wins, round(self.time, 3), -self.progress)


def rounds_standings(
    players: Sequence[int],
    rounds: Mapping[int, Sequence[RaceResult]],
    last: Collection[int] = (),
) -> list[tuple[int, RoundsRow]]:
    """(rank, row) for every player, best first; `rounds`: round number -> results of all
    its heats. Equal rows share a rank; `last` (removed players) come after the rest."""
    rows = {pid: RoundsRow(pid, per_round={}) for pid in players}
    for number, results in sorted(rounds.items()):
        scored = round_points(results)
        for result in results:
            row = rows.setdefault(result.player, RoundsRow(result.player, per_round={}))
            place, points = scored[result.player]
            row.points += points
            row.rounds += 1
            row.progress += result.progress
            if place == 1:
                row.wins += 1
            if result.won and result.time is not None:
                row.time += result.time
            assert row.per_round is not None
            row.per_round[number] = points
    return _ranked(list(rows.values()), lambda row: row.key(), last)


@dataclass(slots=True)
class ArenaRow:
    player: int
    score: int = 0
    wins: int = 0
    heats: int = 0
    progress: int = 0
    streak: int = 0  # heat wins in a row, now
    fire: bool = False  # the next heat scores double
    scores: list[int] | None = None  # per heat, in order

    def key(self) -> tuple[int, int, int]:
        return (-self.score, -self.wins, -self.progress)


def arena_standings(
    players: Sequence[int],
    heats: Sequence[Sequence[RaceResult]],
    last: Collection[int] = (),
) -> list[tuple[int, ArenaRow]]:
    """(rank, row) for every player; `heats` in the order they were played; `last`
    (removed players) after the rest."""
    rows = {pid: ArenaRow(pid, scores=[]) for pid in players}
    for results in heats:
        placed = places(results)
        for place, result in placed:
            row = rows.setdefault(result.player, ArenaRow(result.player, scores=[]))
            won_heat = place == 1 and result.won
            abandoned = not result.won and result.moves < FEW_MOVES
            base = 0 if abandoned else 2 if won_heat else 1 if result.won else 0
            score = base * 2 if row.streak >= 2 else base
            row.streak = row.streak + 1 if won_heat else 0
            row.fire = row.streak >= 2
            row.score += score
            row.heats += 1
            row.progress += result.progress
            row.wins += won_heat
            assert row.scores is not None
            row.scores.append(score)
    return _ranked(list(rows.values()), lambda row: row.key(), last)


def knockout_winner(a: RaceResult, b: RaceResult) -> int | None:
    """The player who goes through, or None when the race could not part them."""
    placed = places([a, b])
    if placed[0][0] == placed[1][0]:
        return None
    return placed[0][1].player


@dataclass(slots=True)
class KnockoutRow:
    player: int
    wins: int = 0  # races won (a bye or a walkover is none)
    out_round: int | None = None  # the round they went out in (0: before the draw)

    def key(self) -> tuple[int, int]:
        reached = STILL_IN if self.out_round is None else self.out_round
        return (-reached, -self.wins)


STILL_IN = 1 << 30  # a player still in is ahead of anyone out in any round


def knockout_standings(
    players: Sequence[int],
    races: Iterable[Sequence[RaceResult]],
    out_round: Mapping[int, int | None],
    last: Collection[int] = (),
) -> list[tuple[int, KnockoutRow]]:
    """(rank, row) for every player: by the round reached, then races won (`races`: every
    finished race of the bracket, two results each); `last` (removed players) after."""
    rows = {pid: KnockoutRow(pid, out_round=out_round.get(pid)) for pid in players}
    for results in races:
        a, b = results
        winner = knockout_winner(a, b)
        if winner is not None:
            rows[winner].wins += 1
    return _ranked(list(rows.values()), lambda row: row.key(), last)


def _ranked(rows: list[Any], key: Any, last: Collection[int]) -> list[tuple[int, Any]]:
    """Competition ranks: removed players (`last`) after the rest, then by `key`; the
    player's id orders equal rows (registered first, listed first)."""

    def full(row: Any) -> tuple[bool, Any]:
        return (row.player in last, key(row))

    ordered = sorted(rows, key=lambda row: (full(row), row.player))
    out: list[tuple[int, Any]] = []
    for position, row in enumerate(ordered, start=1):
        if out and full(out[-1][1]) == full(row):
            out.append((out[-1][0], row))
        else:
            out.append((position, row))
    return out
