"""A move from a socket: the checklist's pre-filter, the engine, then Redis's verdict.

The seat's board is the seat session's (server/live/seats.py), shared by every socket of the
seat in this process; moves of a seat take turns. A move is applied to that board, sent
to move.lua (the checklist's final word, server/room/checklist.py), and taken back if it was
not accepted. When Redis does not answer, or refuses the call (still loading its data, out
of memory), the move is refused `unavailable` with the board as it was, and the same seq
may be sent again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass
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


@dataclass(slots=True)
class Judging:
    """A move being judged: who sent it, to which seat of which room, since when."""

    conn: Connection
    msg: p.Move | p.Undo
    local: LocalRoom
    race: Race
    session: SeatSession
    started: float


class Moves:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._finishing: set[asyncio.Task[None]] = set()

    async def on_move(self, conn: Connection, msg: p.Move | p.Undo) -> None:
        started = time.perf_counter()
        try:
            await self._move(conn, msg, started)
        except Exception as exc:
            if not redis_error(exc):
                raise
            self._unavailable(conn, msg, exc)
        finally:
            self.ctx.metrics.move_latency.observe(time.perf_counter() - started)

    def now(self, conn: Connection, msg: p.Move | p.Undo) -> bool:
        """Judge `msg` as its frame is read, in no task, when nothing has to be waited for
        first: the seat's turn is free, its board and last seq are the truth, and the
        pre-filter lets the move through (server/edge/move_lane.py). Its verdict is then
        handled as the script's reply is read (`_landed`). False, with nothing done: the
        move goes the usual way (`on_move`, in the socket's task), which waits where it
        must and gives every refusal."""
        local = self.ctx.hub.rooms.get(conn.room) if conn.room is not None else None
        if local is None or conn.seat is None:
            return False
        session = local.sessions.get(conn.seat)
        race = local.race
        if (
            session is None
            or race is None
            or session.turn.locked()
            or session.seq_behind
            or local.board_behind(session)
            or self._objection(conn, msg, race, session) is not None
        ):
            return False
        job = Judging(conn, msg, local, race, session, time.perf_counter())
        session.turn.take_now()
        self.ctx.metrics.moves_on_read.inc()
        try:
            write = self._apply(job)
            if write is not None:
                conn.moving = True
                self.ctx.store.post_move(write, partial(self._landed, job, write))
                return True
        except Exception as exc:
            session.unsure()  # nothing reached Redis
            self._failed(job, exc)
        self._done(job)  # refused (illegal), or failed
        return True

    def _landed(self, job: Judging, write: MoveWrite, outcome: MoveResult | Exception) -> None:
        """The verdict on a move judged as its frame was read (`now`), as the script's
        reply is read; the seat's turn is held until it has been dealt with."""
        if isinstance(outcome, Exception):
            job.session.unsure()
            self._failed(job, outcome)
        elif outcome.kind is Verdict.OK:
            self._accepted(job, write, outcome)
        else:
            # Refused or out of date: what follows needs Redis again, in a task of its
            # own, still in the seat's turn.
            task = asyncio.ensure_future(self._finish(job, outcome))
            self._finishing.add(task)
            task.add_done_callback(self._finishing.discard)
            return
        self._done(job)

    async def _finish(self, job: Judging, result: MoveResult) -> None:
        try:
            if await self._after(job, result):
                await self._attempts(job, 1)
        except Exception as exc:
            self._failed(job, exc)
        finally:
            self._done(job)

    def _done(self, job: Judging) -> None:
        """A move judged as it was read is answered: the seat's turn is free, and the
        socket's next message may be handled (after that answer: called last)."""
        job.session.turn.release()
        job.conn.moved()
        self.ctx.metrics.move_latency.observe(time.perf_counter() - job.started)

    def _failed(self, job: Judging, exc: Exception) -> None:
        """A move judged as it was read failed: `unavailable` for an outage, else a bug
        (what the socket's task does for any message: server/handlers/service.py)."""
        if redis_error(exc):
            self._unavailable(job.conn, job.msg, exc)
            return
        log.error("handling %s failed", job.msg.TYPE, exc_info=exc)
        self.ctx.error(job.conn, ErrorCode.INTERNAL, "the server failed on that message", job.msg)

    def _unavailable(self, conn: Connection, msg: p.Move | p.Undo, exc: Exception) -> None:
        """Redis out of reach, or refusing the call (still loading its data, out of
        memory): the move is answered by its seq all the same, `unavailable`, and nothing
        changed. An outage, not a bug: one line, no traceback."""
        self.ctx.metrics.failed(exc)
        log.warning("handling %s: Redis unavailable: %s", msg.TYPE, exc)
        self._refuse(conn, msg.seq, Verdict.UNAVAILABLE)

    def _refuse(self, conn: Connection, seq: int, verdict: Verdict) -> None:
        code, reason = REFUSALS.get(verdict, (ErrorCode.INTERNAL, verdict.value))
        self.ctx.refuse(conn, seq, code, reason)

    async def _move(self, conn: Connection, msg: p.Move | p.Undo, started: float) -> None:
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
            await self._judge(Judging(conn, msg, local, race, session, started))

    def _objection(
        self, conn: Connection, msg: p.Move | p.Undo, race: Race, session: SeatSession
    ) -> Verdict | tuple[ErrorCode, str] | None:
        """Why the move is refused before the engine sees it (the pre-filter's verdict, or
        the room's settings), if it is."""
        verdict = prefilter(
            race, session.index, conn.token_hash, msg.seq, session.last_seq, time.time()
        )
        if verdict is not Verdict.OK:
            return verdict
        if isinstance(msg, p.Undo):
            if not race.config.undo:
                return ErrorCode.UNDO_NOT_ALLOWED, "this room does not allow undo"
        elif len(msg.move) > MAX_MOVE_TEXT:
            return ErrorCode.ILLEGAL_MOVE, "that is not a move"
        return None

    async def _judge(self, job: Judging) -> None:
        conn, local, race, session = job.conn, job.local, job.race, job.session
        seq, seat = job.msg.seq, session.index
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
        objection = self._objection(conn, job.msg, race, session)
        if objection is Verdict.DUP:
            # A re-send gets its first answer whatever happened since (the race may have
            # ended on that very move): look it up before refusing.
            stored = await store.stored_answer(local.id, seat, seq)
            if stored is not None:
                conn.send(self._with_board(session, race, stored))
                return
            objection = Verdict.STALE
        if isinstance(objection, Verdict):
            self._refuse(conn, seq, objection)
            return
        if objection is not None:
            self.ctx.refuse(conn, seq, *objection)
            return
        await self._attempts(job, 0)

    async def _attempts(self, job: Judging, first: int) -> None:
        """The move applied to the seat's board and sent to Redis, from attempt `first`;
        judged again while another socket of the seat, on another process, moved first."""
        store = self.ctx.store
        for attempt in range(first, JUDGE_ATTEMPTS):
            if attempt:
                # Another socket of the seat, on another process, moved first: the move is
                # judged again, after a pause, on the board as Redis then has it.
                await step_aside(attempt, JUDGE_BACKOFF)
                await reload_seat(store, job.local, job.session)
            write = self._apply(job)
            if write is None:
                return
            try:
                result = await store.submit_move(write, partial(self._accepted, job, write))
            except BaseException:
                # Whatever failed (Redis out of reach or still loading its data, the socket
                # closed). A board that kept the move refused the same move sent again as
                # illegal, for good.
                job.session.unsure()
                raise
            if not await self._after(job, result):
                return
        await reload_seat(store, job.local, job.session)
        self.ctx.refuse(
            job.conn,
            job.msg.seq,
            ErrorCode.UNAVAILABLE,
            "the board kept changing: send the same move again",
        )

    def _apply(self, job: Judging) -> MoveWrite | None:
        """The move applied to the seat's board, and what the move script is sent; None
        (refused, the board as it was) when the engine does not take it."""
        msg, race, session = job.msg, job.race, job.session
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
            self.ctx.refuse(job.conn, msg.seq, ErrorCode.ILLEGAL_MOVE, str(err))
            return None
        now = time.time()
        splits = session.splits
        if race.start_at is not None:
            t = race_time(now, race.start_at)
            splits = splits_rule.advance(
                splits, splits_rule.marks(race.config.game), game.progress, t
            )
        reached = list(splits) if splits != session.splits else None
        event = progress_event(game, session.index, text, now, reached)
        return MoveWrite(
            job.local.id,
            race.round,
            session.index,
            msg.seq,
            expected,
            text,
            now,
            event,
            now if event.won or event.stuck else None,
            job.conn.token_hash or "",
            list(splits),
        )

    async def _after(self, job: Judging, result: MoveResult) -> bool:
        """What Redis said of a move applied to the seat's board (an accepted one is
        answered already, by `_accepted`). True: judge it again (another socket of the
        seat moved first)."""
        if result.kind is Verdict.OK:
            return False  # a seat done: the room's timer finishes the race when it is due
        # Not accepted: the board is ahead of the truth; rebuild it from Redis.
        session = job.session
        session.restore()
        if result.kind is Verdict.COUNT:
            return True
        await reload_seat(self.ctx.store, job.local, session)
        if result.kind is Verdict.DUP and result.answer is not None:
            job.conn.send(self._with_board(session, job.race, result.answer))
            return False
        self._refuse(job.conn, job.msg.seq, result.kind)
        return False

    def _accepted(self, job: Judging, write: MoveWrite, result: MoveResult) -> None:
        """The move is accepted: the seat keeps it and the mover is answered. Called as the
        script's reply is read (before the move's task, if it has one, runs again): the
        answer then leaves with the move's `progress`, in one write."""
        assert result.answer is not None
        session = job.session
        session.accepted(write.move, write.seq, tuple(write.splits))
        job.conn.answer(self._with_board(session, job.race, result.answer))
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
