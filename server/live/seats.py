"""A seat as this process holds it: one `SeatSession` per seat of a room, not per socket.

Who holds a seat is the race's business (server/room/race.py: the token, the set of sockets
in every process); whether a move is accepted is the checklist's (server/room/checklist.py and
move.lua). A seat session is what this process keeps between the two, shared by every
socket of the seat here: the seat's true board (to judge a move with the engine before
Redis does), its accepted moves, the last accepted seq, and the sockets attached. Moves
of one seat take turns (`turn`), whichever of its sockets sent them, so a second socket
never judges a move on a board the first one has already changed.

A move of this seat accepted by another process reaches the session as its `progress`
event (`follow`); a board that cannot follow it (a move in flight here, an event missed)
is marked stale and rebuilt from Redis before the next move. The event carries no seq:
after following one, the last seq is read from Redis before the next move is judged.
"""

from __future__ import annotations

import logging

import core
import protocol as p
from core import splits as splits_rule
from server.live.turn import Turn

__all__ = ["SeatSession", "play", "replay", "timed_splits"]

log = logging.getLogger(__name__)


def play(game: core.Game, move: str) -> None:
    """Play an accepted move (`undo` included) on `game` (ValueError if it does not fit)."""
    if move == "undo":
        game.undo()
    else:
        game.apply(move)


def replay(game_name: str, seed: int, moves: list[str]) -> core.Game:
    """A board from its seed and its accepted moves (`undo` included)."""
    game = core.new_game(game_name, seed)
    for move in moves:
        play(game, move)
    return game


def timed_splits(
    game_name: str, seed: int, timed: list[tuple[float, str]], start_at: float | None
) -> splits_rule.Splits:
    """The splits of a seat's accepted moves as the store keeps them (time, move)."""
    if start_at is None or not timed:
        return splits_rule.empty()
    return splits_rule.of_moves(game_name, seed, ((m, at - start_at) for at, m in timed))


class SeatSession:
    __slots__ = (
        "conns",
        "game",
        "game_name",
        "index",
        "last_seq",
        "moves",
        "seed",
        "seq_behind",
        "splits",
        "stale",
        "turn",
    )

    def __init__(
        self,
        index: int,
        game_name: str,
        seed: int,
        moves: list[str],
        last_seq: int,
        splits: splits_rule.Splits | None = None,
    ) -> None:
        self.index = index
        self.game_name = game_name
        self.seed = seed
        self.moves = moves  # accepted, `undo` included
        self.game = replay(game_name, seed, moves)
        self.last_seq = last_seq
        self.splits = splits or splits_rule.empty()  # of the accepted moves (core/splits.py)
        self.conns: set[object] = set()  # the sockets of this process attached to the seat
        self.turn = Turn()
        self.stale = False
        # A move accepted by another process was followed from its event, which carries
        # no seq: `last_seq` may be below its seq (a re-send of it must get its answer).
        self.seq_behind = False

    def accepted(self, move: str, seq: int, splits: splits_rule.Splits) -> None:
        """The move just applied to `game` was accepted as `seq`, leaving `splits`."""
        self.moves.append(move)
        self.last_seq = max(self.last_seq, seq)
        self.splits = splits

    def restore(self) -> None:
        """Back to the accepted moves (a move applied to `game` was not accepted)."""
        self.game = replay(self.game_name, self.seed, self.moves)

    def unsure(self) -> None:
        """A move applied to `game` failed on its way to Redis: nothing is known to have
        changed, so the board goes back, and is checked against Redis before the next move
        (the move may have been applied with its answer lost: the same seq then gets that
        answer)."""
        self.restore()
        self.stale = True

    def reset(
        self,
        moves: list[str],
        last_seq: int,
        seed: int | None = None,
        splits: splits_rule.Splits | None = None,
    ) -> None:
        """The truth from storage (or a new round's deal when `seed` is given)."""
        if seed is not None:
            self.seed = seed
        self.moves = moves
        self.splits = splits or splits_rule.empty()
        self.game = replay(self.game_name, self.seed, moves)
        self.last_seq = last_seq
        self.stale = False
        self.seq_behind = False

    def follow(self, event: p.Progress) -> None:
        """A move of this seat was accepted (here or in another process)."""
        known = len(self.moves)
        if event.moves <= known:
            return  # accepted here already (one move per count and round: the same one)
        if self.turn.locked() and event.moves == known + 1:
            return  # ours in flight, or another's: the answer to ours tells (count: reload)
        game = self.game
        if self.turn.locked() or event.moves != known + 1 or event.move is None:
            self.stale = True
            return
        try:
            play(game, event.move)
        except ValueError:
            log.warning("seat %s: its board could not follow %r", self.index, event.move)
            self.stale = True
            return
        self.moves.append(event.move)
        if event.splits is not None:
            self.splits = tuple(event.splits)
        self.seq_behind = True
