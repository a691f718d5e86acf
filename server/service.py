"""What the server does with each client message: a thin layer over Race, core and the store.

`RaceService.handle` takes one decoded message from a socket and answers on that socket
(replies go through `Connection.send`, which never waits). Room-wide effects go through the
store, whose events come back to every process by pub/sub (server/hub.py).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import hmac
import logging
import re
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any

import msgpack

import core
import protocol as p
from protocol import ErrorCode
from server.connection import Connection
from server.hub import Hub, LocalRoom, replay
from server.metrics import REDIS_DOWN, Metrics, redis_error
from server.race import Outcome, Race, RaceError, RoomConfig, Status, check_move
from server.settings import Settings
from server.store import MoveWrite, RedisRoomStore, hash_token

__all__ = ["RaceService", "clean_name", "new_room_id", "new_token", "random_seed", "room_key"]

log = logging.getLogger(__name__)

MAX_MOVE_TEXT = 32
HINT_CACHE = 1024
_ROOM_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # positions whose hint is remembered


def new_room_id() -> str:
    return secrets.token_hex(4)


def room_key(code: str) -> str:
    """The room a code names, in whatever case it was typed: ids are lower-case hex."""
    return code.lower()


def new_token() -> str:
    return secrets.token_urlsafe(18)


def clean_name(name: str) -> str:
    """A player name fit to show: no control or format characters (an escape sequence in a
    name would reach every other player's terminal), at most 32 characters."""
    return "".join(ch for ch in name if ch.isprintable()).strip()[:32]


def random_seed() -> int:
    return 1 + secrets.randbelow(core.MAX_SEED)


async def draw_seed(game: str, mode: str) -> tuple[int, str]:
    """A seed for `mode` ("random" or "winnable") and the mode actually used."""
    if mode == "winnable":
        try:
            seed = await asyncio.to_thread(core.winnable_seed, game, secrets.SystemRandom())
            return seed, "winnable"
        except RuntimeError:
            log.warning("no winnable %s deal found: dealing a random one", game)
    return random_seed(), "random"


class RaceService:
    def __init__(
        self, settings: Settings, store: RedisRoomStore, hub: Hub, metrics: Metrics
    ) -> None:
        self.settings = settings
        self.store = store
        self.hub = hub
        self.metrics = metrics
        # The solver is CPU-bound (a Moojub hint can take 0.6 s): one at a time per process,
        # so that sockets asking for hints cannot starve every race; a position asked about
        # again (spam, the same deal in another seat) is answered from memory.
        self._hint_turn = asyncio.Semaphore(1)
        self._hints: collections.OrderedDict[Any, str | None] = collections.OrderedDict()
        self._handlers: dict[type[p.Message], Callable[[Connection, Any], Any]] = {
            p.Join: self.on_join,
            p.Watch: self.on_watch,
            p.Move: self.on_move,
            p.Undo: self.on_move,
            p.Hint: self.on_hint,
            p.Legal: self.on_legal,
            p.Ready: self.on_ready,
            p.Start: self.on_start,
            p.Resign: self.on_resign,
            p.Rematch: self.on_rematch,
            p.Leave: self.on_leave,
            p.QuickMatch: self.on_quick,
            p.QuickCancel: self.on_quick_cancel,
            p.Ping: self.on_ping,
            p.Resync: self.on_resync,
        }

    # ------------------------------------------------------------ entry points

    async def handle(self, conn: Connection, message: p.Message) -> None:
        try:
            await self._handlers[type(message)](conn, message)
        except RaceError as err:
            self.error(conn, err.code, err.message, message)
        except Exception as exc:
            self.metrics.failed(exc)
            if redis_error(exc):  # an outage, not a bug: one line, no traceback
                log.warning("handling %s: Redis unavailable: %s", message.TYPE, exc)
                self.error(conn, ErrorCode.UNAVAILABLE, REDIS_DOWN, message)
                return
            log.exception("handling %s failed", message.TYPE)
            self.error(conn, ErrorCode.INTERNAL, "the server failed on that message", message)

    def error(
        self,
        conn: Connection,
        code: ErrorCode,
        message: str,
        request: p.Message | p.Unexpected | None = None,
    ) -> None:
        """Send an `error` naming `request` (its type, and its seq or id) when given."""
        self.metrics.errors.inc(code.value)
        conn.send(p.error_for(request, code.value, message))

    async def closed(self, conn: Connection) -> None:
        """The socket is gone: quick-match ticket, presence, local room."""
        if conn.quick is not None:
            await self._drop_ticket(conn)
        if conn.room is None:
            return
        local = self.hub.rooms.get(conn.room)
        if local is not None:
            await self.hub.release(local, conn)
        if conn.seat is not None:
            seat, conn_id, now = conn.seat, conn.id, time.time()
            with contextlib.suppress(RaceError):
                await self.store.transact(
                    conn.room, lambda r: r.disconnected(seat, conn_id, now), now
                )

    # ------------------------------------------------------------ joining

    async def _room(self, conn: Connection, room: str) -> LocalRoom:
        if conn.room is not None or conn.quick is not None:
            raise RaceError(ErrorCode.ALREADY_JOINED, "this socket is already in a room")
        # Room ids are short hex (new_room_id): anything else is no room, without asking
        # Redis (a lone surrogate from a JSON frame cannot even be encoded for it).
        local = await self.hub.room(room) if _ROOM_ID.fullmatch(room) else None
        if local is None:
            raise RaceError(ErrorCode.UNKNOWN_ROOM, f"no room {room[:40]!r}")
        return local

    async def on_join(self, conn: Connection, msg: p.Join) -> None:
        await self.join(conn, room_key(msg.room), clean_name(msg.name), msg.token, msg.since)

    async def join(
        self, conn: Connection, room: str, name: str, token: str | None, since: int | None
    ) -> None:
        local = await self._room(conn, room)
        now = time.time()
        try:
            fresh = token is None
            if token is None:
                token = new_token()
                taken: list[int] = []
                token_hash = hash_token(token)

                def take(race: Race) -> Outcome:
                    seat, outcome = race.join(name, token_hash, now, conn.id)
                    taken[:] = [seat]
                    return outcome

                await self.store.transact(room, take, now)
                seat: int | None = taken[0]
            else:
                seat = self._seat_of(local, token)
                if seat is None:
                    loaded = await self.store.load(room)  # the mirror may lag a fresh join
                    if loaded is not None:
                        seat = _find_seat(loaded.race, token)
                if seat is None:
                    raise RaceError(ErrorCode.BAD_TOKEN, "that token holds no seat here")
                conn_id = conn.id
                await self.store.transact(room, lambda r: r.connected(seat, conn_id, now), now)
            assert seat is not None
            last_seq = await self.store.last_seq(room, seat)  # where its seqs carry on
        except BaseException:
            await self.hub.release(local, conn)
            raise
        conn.room, conn.seat, conn.role = room, seat, "player"
        conn.send(
            p.Welcome(
                room=room,
                role="player",
                server_time=time.time(),
                seat=seat,
                token=token if fresh else None,
                last_seq=last_seq,
            )
        )
        await local.attach(conn, since)

    def _seat_of(self, local: LocalRoom, token: str) -> int | None:
        return _find_seat(local.race, token) if local.race is not None else None

    async def on_watch(self, conn: Connection, msg: p.Watch) -> None:
        room = room_key(msg.room)
        local = await self._room(conn, room)
        conn.room, conn.seat, conn.role = room, None, "spectator"
        conn.send(p.Welcome(room=room, role="spectator", server_time=time.time()))
        await local.attach(conn, msg.since)

    async def on_resync(self, conn: Connection, msg: p.Resync) -> None:
        local = self._local(conn)
        local.detach(conn)
        await local.attach(conn, msg.since)

    def _local(self, conn: Connection) -> LocalRoom:
        local = self.hub.rooms.get(conn.room) if conn.room is not None else None
        if local is None:
            raise RaceError(ErrorCode.NOT_JOINED, "join or watch a room first")
        return local

    def _player(self, conn: Connection) -> tuple[LocalRoom, int]:
        local = self._local(conn)
        if conn.seat is None:
            raise RaceError(ErrorCode.NOT_PLAYER, "spectators cannot do that")
        return local, conn.seat

    # ------------------------------------------------------------ lobby and race actions

    async def _act(self, conn: Connection, action: Callable[[Race, int, float], Outcome]) -> None:
        local, seat = self._player(conn)
        now = time.time()
        await self.store.transact(local.id, lambda race: action(race, seat, now), now)

    async def on_ready(self, conn: Connection, msg: p.Ready) -> None:
        await self._act(conn, lambda race, seat, now: race.set_ready(seat, msg.ready, now))

    async def on_start(self, conn: Connection, msg: p.Start) -> None:
        await self._act(conn, lambda race, seat, now: race.start(seat, now))

    async def on_resign(self, conn: Connection, msg: p.Resign) -> None:
        await self._act(conn, lambda race, seat, now: race.resign(seat, now))

    async def on_leave(self, conn: Connection, msg: p.Leave) -> None:
        local, _ = self._player(conn)
        await self._act(conn, lambda race, seat, now: race.leave(seat, now))
        conn.seat = None
        conn.role = None
        room, conn.room = conn.room, None
        assert room is not None
        await self.hub.release(local, conn)

    async def on_rematch(self, conn: Connection, msg: p.Rematch) -> None:
        local, index = self._player(conn)
        race = local.race
        assert race is not None
        # Refused or repeated votes must not cost a solver run (a "winnable" deal): the
        # mirror is at least as new as the `finished` this socket was sent.
        if race.status is not Status.FINISHED:
            raise RaceError(ErrorCode.NOT_FINISHED, "a rematch comes after the end")
        seat = race.seats.get(index)
        if seat is not None and seat.rematch:
            return
        mode = "winnable" if race.config.seed_mode == "winnable" else "random"
        seed, _ = await draw_seed(race.config.game, mode)
        await self._act(conn, lambda race, seat, now: race.rematch(seat, seed, now))

    # ------------------------------------------------------------ moves

    async def on_move(self, conn: Connection, msg: p.Move | p.Undo) -> None:
        started = time.perf_counter()
        try:
            await self._move(conn, msg)
        finally:
            self.metrics.move_latency.observe(time.perf_counter() - started)

    def refuse(self, conn: Connection, seq: int, code: ErrorCode, reason: str) -> None:
        self.metrics.moves_refused.inc(code.value)
        conn.send(p.Refused(seq=seq, code=code.value, reason=reason))

    async def _move(self, conn: Connection, msg: p.Move | p.Undo) -> None:
        seq = msg.seq
        try:
            local = self._local(conn)
        except RaceError as err:  # a move is always answered by its seq
            self.refuse(conn, seq, err.code, err.message)
            return
        race = local.race
        assert race is not None
        try:
            check_move(race, conn.seat, seq, conn.last_seq, time.time())
        except RaceError as err:
            # A re-send gets its first answer whatever happened since (the race may have
            # ended on that very move): look it up before refusing.
            if conn.seat is not None and seq <= conn.last_seq:
                stored = await self.store.stored_answer(local.id, conn.seat, seq)
                if stored is not None:
                    conn.send(self._with_board(conn, race, stored))
                    return
            self.refuse(conn, seq, err.code, err.message)
            return
        assert conn.seat is not None
        is_undo = isinstance(msg, p.Undo)
        if is_undo and not race.config.undo:
            self.refuse(conn, seq, ErrorCode.UNDO_NOT_ALLOWED, "this room does not allow undo")
            return
        if isinstance(msg, p.Move) and len(msg.move) > MAX_MOVE_TEXT:
            self.refuse(conn, seq, ErrorCode.ILLEGAL_MOVE, "that is not a move")
            return
        for _attempt in range(3):
            game = conn.game
            assert game is not None
            expected = game.moves
            try:
                if isinstance(msg, p.Undo):
                    game.undo()
                    text = "undo"
                else:
                    game.apply(msg.move)
                    text = game.history[-1]
            except ValueError as err:  # IllegalMove and unreadable text alike
                self.refuse(conn, seq, ErrorCode.ILLEGAL_MOVE, str(err))
                return
            now = time.time()
            # Each read once: progress, won and stuck are computed, not stored.
            progress, moves = game.progress, game.moves
            won = progress == game.progress_total
            stuck = not won and game.stuck
            event = p.Progress(
                version=0,
                at=now,
                seat=conn.seat,
                progress=progress,
                moves=moves,
                won=won,
                stuck=stuck,
                move=text,
            )
            write = MoveWrite(
                local.id,
                race.round,
                conn.seat,
                seq,
                expected,
                text,
                now,
                event,
                now if won or stuck else None,
            )
            result = await self.store.submit_move(write)
            if result.kind == "ok":
                assert result.answer is not None
                conn.last_seq = seq
                conn.moves.append(text)
                conn.send(self._with_board(conn, race, result.answer))
                self.metrics.moves_accepted.inc()
                if won or stuck:
                    self.hub.spawn(self.hub.tick(local.id))
                return
            # Not accepted: the local board is ahead of the truth; rebuild it from Redis.
            await self._reload_board(conn, local)
            if result.kind == "dup" and result.answer is not None:
                conn.send(self._with_board(conn, race, result.answer))
                return
            if result.kind != "count":
                code, reason = _REFUSALS.get(result.kind, (ErrorCode.INTERNAL, result.kind))
                self.refuse(conn, seq, code, reason)
                return
        self.refuse(conn, seq, ErrorCode.INTERNAL, "the board kept changing: try again")

    @staticmethod
    def _with_board(conn: Connection, race: Race, answer: p.Accepted) -> p.Accepted:
        """In hidden-information games the answer carries the player's board (the client
        cannot replay a move that turns up an unknown card): the board now, when the
        answer is to the latest move (a re-send too), else none (the client resyncs)."""
        game = conn.game
        if not race.config.hidden or game is None or game.moves != answer.moves:
            return answer
        return dataclasses.replace(answer, board=game.state(view="player"))

    async def _reload_board(self, conn: Connection, local: LocalRoom) -> None:
        assert conn.seat is not None
        loaded = await self.store.load(local.id)
        if loaded is None:
            return
        race = loaded.race
        moves = [m for _, m in await self.store.moves(local.id, conn.seat)]
        conn.moves = moves
        conn.game = replay(race.config.game, race.seed, moves)
        conn.last_seq = await self.store.last_seq(local.id, conn.seat)

    async def on_hint(self, conn: Connection, msg: p.Hint) -> None:
        local, _ = self._player(conn)
        race = local.race
        assert race is not None
        if not race.config.hints:
            raise RaceError(ErrorCode.HINTS_NOT_ALLOWED, "this room does not allow hints")
        game = conn.game
        if game is None or race.status.value != "running":
            raise RaceError(ErrorCode.NOT_RUNNING, "hints are for a running race")
        key = (race.config.game, game.key())
        position = game.copy()
        async with self._hint_turn:  # the one asking before may have solved this very one
            if key not in self._hints:
                self._hints[key] = await asyncio.to_thread(core.hint, position)
                if len(self._hints) > HINT_CACHE:
                    self._hints.popitem(last=False)
            self._hints.move_to_end(key)
            move = self._hints[key]
        conn.send(p.HintReply(move=move))

    async def on_legal(self, conn: Connection, msg: p.Legal) -> None:
        """The legal and safe moves on the player's board: the engine's lists, so that a
        client needs no copy of the rules (docs/protocol.md, `legal`)."""
        local, _ = self._player(conn)
        race = local.race
        assert race is not None
        game = conn.game
        if game is None or race.status.value != "running":
            raise RaceError(ErrorCode.NOT_RUNNING, "legal moves are for a running race")
        conn.send(p.LegalReply(moves=game.legal_moves(), safe=game.copy().autoplay()))

    # ------------------------------------------------------------ other

    async def on_ping(self, conn: Connection, msg: p.Ping) -> None:
        conn.send(p.Pong(id=msg.id, server_time=time.time()))

    # ------------------------------------------------------------ quick match

    async def on_quick(self, conn: Connection, msg: p.QuickMatch) -> None:
        if conn.room is not None or conn.quick is not None:
            raise RaceError(ErrorCode.ALREADY_JOINED, "this socket is already in a room")
        if msg.game not in core.GAMES:
            raise RaceError(ErrorCode.BAD_GAME, f"no game {msg.game[:40]!r}")
        name = clean_name(msg.name)
        ticket = f"{uuid.uuid4().hex}|{name}"
        conn.quick = (msg.game, ticket)
        await self.hub.feed.subscribe(
            _ticket_channel(ticket), lambda data: self.hub.spawn(self._matched(conn, data))
        )
        other = await self.store.quick_pair(msg.game, ticket)
        # Every quick is answered queued, then matched, even when a partner was waiting:
        # a client then has one sequence to follow, not two (docs/protocol.md section 4).
        conn.send(p.Queued(game=msg.game))
        if other is None:
            return
        await self._drop_ticket(conn, requeue=False)
        other_name = other.partition("|")[2]
        room, tokens = await self.create_quick_room(msg.game, [other_name, name])
        await self.store.redis.publish(
            _ticket_channel(other),
            msgpack.packb({"room": room, "seat": 0, "token": tokens[0]}),
        )
        conn.send(p.Matched(room=room, seat=1, token=tokens[1]))
        await self.join(conn, room, name, tokens[1], None)

    async def _matched(self, conn: Connection, data: bytes) -> None:
        if conn.quick is None or conn.closing:
            return
        info = msgpack.unpackb(data)
        await self._drop_ticket(conn, requeue=False)
        conn.send(p.Matched(room=info["room"], seat=info["seat"], token=info["token"]))
        try:
            await self.join(conn, info["room"], "", info["token"], None)
        except RaceError as err:
            self.error(conn, err.code, err.message)

    async def _drop_ticket(self, conn: Connection, requeue: bool = True) -> None:
        if conn.quick is None:
            return
        game, ticket = conn.quick
        conn.quick = None
        await self.hub.feed.unsubscribe(_ticket_channel(ticket))
        if requeue:
            await self.store.quick_cancel(game, ticket)

    async def on_quick_cancel(self, conn: Connection, msg: p.QuickCancel) -> None:
        await self._drop_ticket(conn)

    async def create_quick_room(self, game: str, names: list[str]) -> tuple[str, list[str]]:
        """A head-to-head room with both seats taken and ready: it counts down at once."""
        now = time.time()
        config = RoomConfig(
            game=game,
            seats=len(names),
            grace=self.settings.grace,
            countdown=self.settings.countdown,
            hidden=core.game_class(game).has_talon,
        )
        race = Race(room=new_room_id(), config=config, seed=random_seed(), created_at=now)
        await self.store.create(race)
        self.metrics.rooms_created.inc()
        tokens = [new_token() for _ in names]

        def seat_everyone(race: Race) -> Outcome:
            out = Outcome()
            for name, token in zip(names, tokens, strict=True):
                seat, joined = race.join(name, hash_token(token), now)
                out.events += joined.events
            for seat in list(race.seats):
                out.events += race.set_ready(seat, True, now).events
            return out

        await self.store.transact(race.room, seat_everyone, now)
        return race.room, tokens


_REFUSALS = {
    "closed": (ErrorCode.NOT_RUNNING, "the race is not running"),
    "out": (ErrorCode.PLAYER_OUT, "you are no longer racing"),
    "stale": (ErrorCode.STALE_SEQ, "that seq was already used"),
}


def _ticket_channel(ticket: str) -> str:
    return f"solrace:quick:ticket:{ticket.partition('|')[0]}"


def _find_seat(race: Race, token: str) -> int | None:
    wanted = hash_token(token)
    for index, seat in race.seats.items():
        if hmac.compare_digest(seat.token_hash, wanted):
            return index
    return None
