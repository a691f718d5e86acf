"""A move from a socket: the checklist's pre-filter, the engine, then Redis's verdict.

The seat's board is the seat session's (server/live/seats.py), shared by every socket of the
seat in this process; moves of a seat take turns. A move is applied to that board, sent
to move.lua (the checklist's final word, server/room/checklist.py), and taken back if it was
not accepted. When Redis does not answer, or refuses the call (still loading its data, out
of memory), the move is refused `unavailable` with the board as it was, and the same seq
may be sent again.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from functools import partial

import protocol as p
from core import Game
from core import splits as splits_rule
from protocol import ErrorCode
from server.handlers.context import Context
from server.live.connection import Connection
from server.live.hub import LocalRoom
from server.live.seats import SeatSession, timed_splits
from server.metrics import redis_error
from server.room.checklist import REFUSALS, Verdict, prefilter
from server.room.race import Race, race_time
from server.storage.codec import MoveWrite
from server.storage.store import MoveResult, RoomStore, step_aside

__all__ = ["MAX_MOVE_TEXT", "Moves", "caught_up", "progress_event", "reload_seat"]

log = logging.getLogger(__name__)

MAX_MOVE_TEXT = 32
ATTEMPTS = 3  # the seat's board caught up with Redis before a move is judged
# A move judged on a board that another socket of the seat, on another process, moved first
# is judged again on the board as it now is, after `step_aside` with JUDGE_BACKOFF (about
# 1.2 s in all: the other socket's burst is over long before); if it never gets through, it
# is refused `unavailable` (nothing changed: the same seq is sent again).
JUDGE_ATTEMPTS = 50
JUDGE_BACKOFF = 0.001


async def reload_seat(store: RoomStore, local: LocalRoom, session: SeatSession) -> None:
    """The seat's board and last seq as Redis has them."""
    timed = await store.moves(local.id, session.index)
    last_seq = await store.last_seq(local.id, session.index)
    race = local.race
    start_at = race.start_at if race is not None else None
    splits = timed_splits(session.game_name, session.seed, timed, start_at)
    session.reset([m for _, m in timed], last_seq, splits=splits)


async def caught_up(store: RoomStore, local: LocalRoom, session: SeatSession) -> Game:
    """The seat's board, once it holds every move the room's events told of (reloaded
    from Redis, in the seat's turn, when it does not): what advice is given on."""
    if local.board_behind(session):
        async with session.turn:
            if local.board_behind(session):
                await reload_seat(store, local, session)
    return session.game


def progress_event(
    game: Game, seat: int, text: str, now: float, splits: list[float | None] | None = None
) -> p.Progress:
    """The event of move `text`, just applied to `game` by `seat` (its version is the
    script's to give); `splits` when the move reached a split. Progress, won and stuck
    are each read once: they are computed, not stored."""
    progress = game.progress
    won = progress == game.progress_total
    stuck = game.stuck_at(progress)
    return p.Progress(
        version=0,
        at=now,
        seat=seat,
        progress=progress,
        moves=game.moves,
        won=won,
        stuck=stuck,
        move=text,
        splits=splits,
    )


class Moves:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def on_move(self, conn: Connection, msg: p.Move | p.Undo) -> None:
        started = time.perf_counter()
        try:
            await self._move(conn, msg)
        except Exception as exc:
            # Redis out of reach, or refusing the call (still loading its data, out of
            # memory): the move is answered by its seq all the same, `unavailable`, and
            # nothing changed. An outage, not a bug: one line, no traceback.
            if not redis_error(exc):
                raise
            self.ctx.metrics.failed(exc)
            log.warning("handling %s: Redis unavailable: %s", msg.TYPE, exc)
            self._refuse(conn, msg.seq, Verdict.UNAVAILABLE)
        finally:
            self.ctx.metrics.move_latency.observe(time.perf_counter() - started)

    def _refuse(self, conn: Connection, seq: int, verdict: Verdict) -> None:
        code, reason = REFUSALS.get(verdict, (ErrorCode.INTERNAL, verdict.value))
        self.ctx.refuse(conn, seq, code, reason)

    async def _move(self, conn: Connection, msg: p.Move | p.Undo) -> None:
        seq = msg.seq
        local = self.ctx.hub.rooms.get(conn.room) if conn.room is not None else None
        if local is None:  # a move is always answered by its seq
            self.ctx.refuse(conn, seq, ErrorCode.NOT_JOINED, "join or watch a room first")
            return
        if conn.seat is None:
            self.ctx.refuse(conn, seq, ErrorCode.NOT_PLAYER, "spectators cannot move")
            return
        session = local.sessions.get(conn.seat)
        race = local.race
        if session is None or race is None:
            self._refuse(conn, seq, Verdict.SEAT)
            return
        async with session.turn:
            await self._judge(conn, msg, local, race, session)

    async def _judge(
        self,
        conn: Connection,
        msg: p.Move | p.Undo,
        local: LocalRoom,
        race: Race,
        session: SeatSession,
    ) -> None:
        seq, seat = msg.seq, session.index
        store = self.ctx.store
        for _attempt in range(ATTEMPTS):
            if local.board_behind(session):
                # The seq may be one Redis stored while its answer was lost (an outage); or
                # the seat's other socket, on another process, moved while this turn waited
                # on Redis.
                await reload_seat(store, local, session)
            elif session.seq_behind:
                # Another process's move was followed: this seq may be its re-send.
                last_seq = await store.last_seq(local.id, seat)
                session.last_seq = max(session.last_seq, last_seq)
                session.seq_behind = False
            else:
                break
        verdict = prefilter(race, seat, conn.token_hash, seq, session.last_seq, time.time())
        if verdict is Verdict.DUP:
            # A re-send gets its first answer whatever happened since (the race may have
            # ended on that very move): look it up before refusing.
            stored = await store.stored_answer(local.id, seat, seq)
            if stored is not None:
                conn.send(self._with_board(session, race, stored))
                return
            verdict = Verdict.STALE
        if verdict is not Verdict.OK:
            self._refuse(conn, seq, verdict)
            return
        is_undo = isinstance(msg, p.Undo)
        if is_undo and not race.config.undo:
            self.ctx.refuse(conn, seq, ErrorCode.UNDO_NOT_ALLOWED, "this room does not allow undo")
            return
        if isinstance(msg, p.Move) and len(msg.move) > MAX_MOVE_TEXT:
            self.ctx.refuse(conn, seq, ErrorCode.ILLEGAL_MOVE, "that is not a move")
            return
        for attempt in range(JUDGE_ATTEMPTS):
            if attempt:
                # Another socket of the seat, on another process, moved first: the move is
                # judged again, after a pause, on the board as Redis then has it.
                await step_aside(attempt, JUDGE_BACKOFF)
                await reload_seat(store, local, session)
            game = session.game
            expected = game.moves
            try:
                if isinstance(msg, p.Undo):
                    game.undo()
                    text = "undo"
                else:
                    game.apply(msg.move)
                    text = game.history[-1]
            except ValueError as err:  # IllegalMove and unreadable text alike
                self.ctx.refuse(conn, seq, ErrorCode.ILLEGAL_MOVE, str(err))
                return
            now = time.time()
            splits = session.splits
            if race.start_at is not None:
                t = race_time(now, race.start_at)
                splits = splits_rule.advance(
                    splits, splits_rule.marks(race.config.game), game.progress, t
                )
            reached = list(splits) if splits != session.splits else None
            event = progress_event(game, seat, text, now, reached)
            write = MoveWrite(
                local.id,
                race.round,
                seat,
                seq,
                expected,
                text,
                now,
                event,
                now if event.won or event.stuck else None,
                conn.token_hash or "",
                list(splits),
            )
            answer = partial(self._accepted, conn, session, race, text, seq, splits)
            try:
                result = await store.submit_move(write, answer)
            except BaseException:
                # Whatever failed (Redis out of reach or still loading its data, the socket
                # closed): nothing is known to have changed, so the board goes back, and is
                # checked against Redis before the next move (the move may have been applied
                # with its answer lost: the same seq then gets that answer). A board that
                # kept the move refused the same move sent again as illegal, for good.
                session.restore()
                session.stale = True
                raise
            if result.kind is Verdict.OK:  # answered already (`_accepted`)
                return  # a seat done: the room's timer finishes the race when it is due
            # Not accepted: the board is ahead of the truth; rebuild it from Redis.
            session.restore()
            if result.kind is Verdict.COUNT:
                continue
            await reload_seat(store, local, session)
            if result.kind is Verdict.DUP and result.answer is not None:
                conn.send(self._with_board(session, race, result.answer))
                return
            self._refuse(conn, seq, result.kind)
            return
        await reload_seat(store, local, session)
        self.ctx.refuse(
            conn, seq, ErrorCode.UNAVAILABLE, "the board kept changing: send the same move again"
        )

    def _accepted(
        self,
        conn: Connection,
        session: SeatSession,
        race: Race,
        text: str,
        seq: int,
        splits: splits_rule.Splits,
        result: MoveResult,
    ) -> None:
        """The move is accepted: the seat keeps it and the mover is answered. Called as the
        script's reply is read, a round of the event loop before the move's task runs
        again: the answer then leaves with the move's `progress`, in one write."""
        assert result.answer is not None
        session.accepted(text, seq, splits)
        conn.send(self._with_board(session, race, result.answer))
        self.ctx.metrics.moves_accepted.inc()

    @staticmethod
    def _with_board(session: SeatSession, race: Race, answer: p.Accepted) -> p.Accepted:
        """In hidden-information games the answer carries the player's board (the client
        cannot replay a move that turns up an unknown card): the board now, when the
        answer is to the latest move (a re-send too), else none (the client resyncs)."""
        game = session.game
        if not race.config.hidden or game.moves != answer.moves:
            return answer
        return dataclasses.replace(answer, board=game.state(view="player"))
