"""Advice on a player's board: hints (the solver's next move, one solver run at a time)
and the legal moves (the engine's lists, so that a client needs no copy of the rules)."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import core
import protocol as p
from protocol import ErrorCode
from server.handlers.context import Context
from server.handlers.moves import caught_up
from server.live.connection import Connection
from server.room.checklist import REFUSALS, Verdict
from server.room.race import Race, RaceError, Status

__all__ = ["HINT_CACHE", "Hints"]

HINT_CACHE = 1024  # positions whose hint is remembered


class Hints:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # The solver is CPU-bound (a Moojub hint can take 0.6 s): one at a time per process,
        # so that sockets asking for hints cannot starve every race; a position asked about
        # again (spam, the same deal in another seat) is answered from memory.
        self._turn = asyncio.Semaphore(1)
        self._hints: collections.OrderedDict[Any, str | None] = collections.OrderedDict()

    async def on_hint(self, conn: Connection, msg: p.Hint) -> None:
        local, seat = self.ctx.player(conn)
        race = local.race
        assert race is not None
        if not race.config.hints:
            raise RaceError(ErrorCode.HINTS_NOT_ALLOWED, "this room does not allow hints")
        session = local.sessions.get(seat)
        if session is None or race.status is not Status.RUNNING:
            raise RaceError(ErrorCode.NOT_RUNNING, "hints are for a running race")
        still_racing(race, seat, conn)
        game = await caught_up(self.ctx.store, local, session)
        # The way here counts too: a hint does not lead back to where the player has been.
        key = (race.config.game, game.key(), tuple(game.history))
        position = game.copy()
        async with self._turn:  # the one asking before may have solved this very one
            if key not in self._hints:
                self._hints[key] = await asyncio.to_thread(core.hint, position)
                if len(self._hints) > HINT_CACHE:
                    self._hints.popitem(last=False)
            self._hints.move_to_end(key)
            move = self._hints[key]
        conn.send(p.HintReply(move=move))

    async def on_legal(self, conn: Connection, msg: p.Legal) -> None:
        """The legal and safe moves on the player's board (docs/protocol.md, `legal`)."""
        local, seat = self.ctx.player(conn)
        race = local.race
        assert race is not None
        session = local.sessions.get(seat)
        if session is None or race.status is not Status.RUNNING:
            raise RaceError(ErrorCode.NOT_RUNNING, "legal moves are for a running race")
        still_racing(race, seat, conn)
        game = await caught_up(self.ctx.store, local, session)
        conn.send(p.LegalReply(moves=game.legal_moves(), safe=game.copy().autoplay()))


def still_racing(race: Race, seat: int, conn: Connection) -> None:
    """Advice is for the seat's holder while it races: refused as a move would be after a
    win, a resign or a forfeit."""
    player = race.holder(seat, conn.token_hash)  # a running race: the mirror knows its seats
    if not player.racing:
        raise RaceError(*REFUSALS[Verdict.OUT])
