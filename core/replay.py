"""Replays: a race as NDJSON that anyone can check with the engine.

Line 1 is the header (game, seed, rules version, players), then one line per accepted
move in the order accepted (seat, move, seconds since the start), then one line of
results. Every line after the first carries `prev`, the SHA-256 of the previous line's
text: an edited, dropped or reordered line breaks the chain. The results line is the
engine's own reading of the moves, so it cannot be edited either: `verify` replays each
seat's moves, refuses an illegal one, and compares the results it computes.

    {"kind":"header","game":"shaula","seed":617,"rules":1,"players":[{"seat":0,"name":"ann"}]}
    {"kind":"move","seat":0,"move":"t1 c1","t":1.204,"prev":"9f2c..."}
    {"kind":"results","results":[{"seat":0,"name":"ann","won":false,...}],"prev":"51aa..."}

A seat's results: `won`, `time` (when it won, else null), `progress` (cards on
foundations at its end), `reached` (when that progress was reached: the time of the
last move that changed it, 0 if none did) and `moves` (the engine's move count).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import core
from core.game import Game

__all__ = [
    "RULES_VERSION",
    "ReplayError",
    "Verified",
    "line_hash",
    "results_of",
    "verify",
    "write_replay",
]

RULES_VERSION = 1  # bumped whenever a rule changes what a move sequence means


class ReplayError(ValueError):
    """The replay is damaged or does not follow the rules; the message says where."""


def line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def results_of(
    game_name: str,
    seed: int,
    players: Sequence[dict[str, Any]],
    moves: Iterable[tuple[int, str, float]],
) -> list[dict[str, Any]]:
    """Each seat's results from its moves (seat, move, seconds); ReplayError if a move is
    illegal or a seat unknown."""
    games: dict[int, Game] = {}
    info: dict[int, dict[str, Any]] = {}
    for player in players:
        seat = int(player["seat"])
        games[seat] = core.new_game(game_name, seed)
        info[seat] = {"won": False, "time": None, "reached": 0.0}
    for index, (seat, move, t) in enumerate(moves, start=1):
        game = games.get(seat)
        if game is None:
            raise ReplayError(f"move {index}: seat {seat} is not a player")
        before = game.progress
        try:
            if move == "undo":
                game.undo()
            else:
                game.apply(move)
        except ValueError as exc:
            raise ReplayError(f"move {index} ({move!r}, seat {seat}): {exc}") from None
        if info[seat]["won"]:
            raise ReplayError(f"move {index}: seat {seat} had already won")
        if game.progress != before:
            info[seat]["reached"] = t
        if game.won:
            info[seat]["won"], info[seat]["time"] = True, t
    return [
        {
            "seat": int(player["seat"]),
            "name": player["name"],
            "won": info[int(player["seat"])]["won"],
            "time": info[int(player["seat"])]["time"],
            "progress": games[int(player["seat"])].progress,
            "reached": info[int(player["seat"])]["reached"],
            "moves": games[int(player["seat"])].moves,
        }
        for player in players
    ]


def write_replay(header: dict[str, Any], moves: Sequence[tuple[int, str, float]]) -> str:
    """The replay's text. `header` holds game, seed, players ([{seat, name}]) and any
    context (a tournament, its round); rules is added. Times are rounded to milliseconds
    before the results are computed, so a reader computes the same."""
    head = {"kind": "header", **header, "rules": RULES_VERSION}
    timed = [(seat, move, round(t, 3)) for seat, move, t in moves]
    lines = [_dump(head)]
    for seat, move, t in timed:
        lines.append(
            _dump(
                {"kind": "move", "seat": seat, "move": move, "t": t, "prev": line_hash(lines[-1])}
            )
        )
    results = results_of(head["game"], head["seed"], head["players"], timed)
    lines.append(_dump({"kind": "results", "results": results, "prev": line_hash(lines[-1])}))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Verified:
    header: dict[str, Any]
    moves: list[tuple[int, str, float]]
    results: list[dict[str, Any]]

    def played(self) -> Iterator[tuple[int, Game]]:
        """Each move line played on its seat's board, in order: (seat, that board after
        it; one board a seat, dealt anew for each call)."""
        game, seed = str(self.header["game"]), int(self.header["seed"])
        boards = {int(p["seat"]): core.new_game(game, seed) for p in self.header["players"]}
        for seat, move, _t in self.moves:
            board = boards[seat]
            if move == "undo":
                board.undo()
            else:
                board.apply(move)
            yield seat, board


def verify(text: str) -> Verified:
    """Check a replay: the hash chain, each move with the engine, the results line."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        raise ReplayError("a replay has at least a header and a results line")
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except ValueError:
            raise ReplayError(f"line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise ReplayError(f"line {number} is not an object")
        if number > 1 and record.get("prev") != line_hash(lines[number - 2]):
            raise ReplayError(f"line {number}: the hash of line {number - 1} does not match")
        records.append(record)
    header, *middle, last = records
    if header.get("kind") != "header" or last.get("kind") != "results":
        raise ReplayError("the first line must be the header and the last the results")
    if header.get("rules") != RULES_VERSION:
        raise ReplayError(
            f"rules version {header.get('rules')!r}: this engine reads {RULES_VERSION}"
        )
    try:
        game, seed = header["game"], core.check_seed(header["seed"])
        core.game_class(game)
        players = [{"seat": int(p["seat"]), "name": str(p["name"])} for p in header["players"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"header: {exc}") from None
    moves: list[tuple[int, str, float]] = []
    for number, record in enumerate(middle, start=2):
        if record.get("kind") != "move":
            raise ReplayError(f"line {number} should be a move")
        seat, move, t = record.get("seat"), record.get("move"), record.get("t")
        if not isinstance(seat, int) or not isinstance(move, str) or not isinstance(t, int | float):
            raise ReplayError(f"line {number}: a move needs seat, move and t")
        moves.append((seat, move, float(t)))
    results = results_of(game, seed, players, moves)
    if last.get("results") != results:
        raise ReplayError("the results line is not what the moves give")
    return Verified(header, moves, results)
