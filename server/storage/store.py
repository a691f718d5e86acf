"""Where rooms live: the `RoomStore` interface and its Redis implementation.

Redis is the truth; server/storage/keys.py names every key. Writes are Lua scripts
(server/storage/lua/):
a race transition is a compare-and-set on `rev` and `ver` (a move accepted since the race
was read changed its seat: the transition is made again); a move is judged and accepted by
`move.lua` (the final word of server/room/checklist.py), keyed on the seat's token, seq and
expected move count, so a re-sent seq gets the stored answer and two processes can never
both accept. Move scripts go through the `ScriptBatcher`: concurrent moves share one
pipeline. The bytes of a move's script call and of the logged events are
server/storage/codec.py's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

import msgpack
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

import protocol as p
from protocol import ErrorCode
from server.redis_io.batcher import ScriptBatcher, load_script
from server.redis_io.connect import AnyRedis
from server.redis_io.health import redis_problem
from server.room.checklist import Verdict, lua_prelude
from server.room.matching import RANGE_START, RANGE_WIDENS, UNRATED
from server.room.race import Outcome, Race, RaceError, Status
from server.room.room_log import log_created, log_events
from server.storage.codec import (
    MoveWrite,
    answer_to,
    entry_body,
    millis,
    move_call,
    parse_entry,
    stored_answer_of,
)
from server.storage.keyed_locks import KeyedLocks
from server.storage.keys import (
    DEADLINES,
    LOBBY,
    OUTBOX,
    PROCESSES,
    ROOMS,
    RoomKeys,
    budget_key,
    outbox_claim_key,
    process_key,
    process_reaped_key,
    process_rooms_key,
    quick_queue,
    quick_seat_key,
    ticket_channel,
    ticket_told_key,
)

__all__ = [
    "TOLD_TTL",
    "UNAVAILABLE_ERRORS",
    "Applied",
    "EndedRace",
    "Loaded",
    "MoveResult",
    "RedisRoomStore",
    "RoomStore",
    "events_after",
    "hash_token",
    "lobby_body",
    "parse_lobby_entry",
    "parse_moves",
    "step_aside",
    "submitted",
]

MOVE = load_script("move", lua_prelude())
TRANSITION = load_script("transition")
LOAD = load_script("load")
QUICK = load_script("quick")
UNSCHEDULE = load_script("unschedule")
BUDGET = load_script("budget")


# A race transition read before a move that was accepted meanwhile is made again on the room
# as it now is, after `step_aside` (about 1.2 s in all before it gives up: a racer's burst is
# over long before).
TRANSITION_ATTEMPTS = 50
TRANSITION_BACKOFF = 0.001


async def step_aside(attempt: int, unit: float) -> None:
    """Before attempt `attempt` of a compare-and-set another writer won: a random pause of up
    to `unit` seconds times `attempt`, a little longer each time, so that the writers that
    collided spread out instead of colliding again."""
    await asyncio.sleep(random.uniform(0, unit * attempt))


OUTBOX_AGAIN = 0.001  # seconds after the first listing of an ended race its second one is

# Seconds a quick-match pairing is kept for its ticket (`told_ticket`): past any outage a
# waiting socket outlives (the cutoff hands its sockets on).
TOLD_TTL = 600
GRACE_SLACK = 60.0  # seconds an unfinished room outlives its grace, for the sweep to end it

# What a store raises when Redis does not answer (down, restarting, or past the reply
# deadline): the caller answers "unavailable", and nothing is known to have changed.
UNAVAILABLE_ERRORS: tuple[type[BaseException], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    TimeoutError,
)


def hash_token(token: str) -> str:
    """Seats store only a hash of their secret token (any string hashes: a lone surrogate
    from a JSON frame is just a token that holds no seat)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def lobby_body(race: Race) -> bytes:
    """A room's lobby entry as published on `LOBBY` after each write (the script puts
    "REV|" in front)."""
    return p.pack_map(dict(race.lobby_view()))


def parse_lobby_entry(entry: bytes) -> tuple[int, p.LobbyRoom] | None:
    """A published "REV|lobby entry" back into (rev, entry); None if damaged."""
    rev, _, body = entry.partition(b"|")
    try:
        room = msgpack.unpackb(body, raw=False)
        ok = isinstance(room, dict) and "id" in room and "status" in room and "created_at" in room
        return (int(rev), cast(p.LobbyRoom, room)) if ok else None
    except Exception:
        return None


def events_after(entries: list[bytes], since: int) -> list[p.Event] | None:
    """The logged events after version `since`, or None when the log (`entries`, oldest
    first) no longer reaches back that far."""
    events = [e for e in map(parse_entry, entries) if e is not None]
    if not events:
        return [] if since >= 0 else None
    if events[0].version > since + 1:
        return None
    return [e for e in events if e.version > since]


def parse_moves(entries: list[bytes]) -> list[tuple[float, str]]:
    """Move-list entries "MS MOVE" as (seconds, move)."""
    out = []
    for entry in entries:
        ms, _, move = entry.decode().partition(" ")
        out.append((int(ms) / 1000, move))
    return out


@dataclass(slots=True)
class Loaded:
    race: Race
    rev: int
    version: int  # last event version


@dataclass(frozen=True, slots=True)
class EndedRace:
    """A finished race waiting in the outbox to be archived: the race as it ended and each
    seat's moves (seconds, move), kept by the transition that ended it."""

    race: Race
    moves: dict[int, list[tuple[float, str]]]


@dataclass(slots=True)
class Applied:
    race: Race
    events: list[p.Event]  # with their versions
    version: int


@dataclass(slots=True)  # not frozen, as MoveWrite
class MoveResult:
    """The checklist's verdict (server/room/checklist.py); `answer` for OK and DUP (a re-sent
    seq: the stored one), `detail` what the script said (the status, the last seq...)."""

    kind: Verdict
    detail: str = ""
    answer: p.Accepted | None = None  # ok and dup: no board (the caller adds it)


class RoomStore(Protocol):
    """Everything the service, the rooms and the sweeper need from storage: the only way
    they reach it. `RedisRoomStore` is the real one; tests/server/storage/memory_store.py keeps
    the same contract in memory (tests/server/storage/test_store_contract.py runs both)."""

    # rooms and their race
    async def create(self, race: Race) -> None: ...
    async def load(self, room: str) -> Loaded | None: ...
    async def transact(
        self, room: str, action: Callable[[Race], Outcome], now: float
    ) -> Applied: ...
    # moves
    # `on_accepted(result)` runs when the move is accepted, before submit_move returns
    async def submit_move(
        self, write: MoveWrite, on_accepted: Callable[[MoveResult], None] | None = None
    ) -> MoveResult: ...
    # the same without waiting: `done` gets the result, or the error, when it is known
    def post_move(
        self, write: MoveWrite, done: Callable[[MoveResult | Exception], None]
    ) -> None: ...
    async def moves(self, room: str, seat: int) -> list[tuple[float, str]]: ...
    async def last_seq(self, room: str, seat: int) -> int: ...
    async def stored_answer(self, room: str, seat: int, seq: int) -> p.Accepted | None: ...
    # the event log
    async def events_since(self, room: str, since: int) -> list[p.Event] | None: ...
    # indexes and deadlines
    async def room_ids(self, limit: int = 200) -> list[str]: ...
    async def statuses(self, rooms: list[str]) -> dict[str, str | None]: ...
    async def due(self, now: float, limit: int = 100) -> list[tuple[str, float]]: ...
    async def unschedule(self, room: str, score: float) -> None: ...
    async def reschedule(self, room: str, at: float) -> None: ...
    # processes
    async def heartbeat(self, process: str, ttl: float) -> bool: ...
    async def declare_dead(self, process: str) -> None: ...
    async def problem(self) -> str | None: ...
    async def process_alive(self, process: str) -> bool: ...
    async def forget_process(self, process: str) -> None: ...
    async def processes(self) -> list[str]: ...
    async def hold(self, process: str, room: str) -> None: ...
    async def rooms_held(self, process: str) -> list[str]: ...
    async def drop_process(self, process: str) -> None: ...
    # quick match
    async def quick_pair(self, game: str, ticket: str, now: float) -> str | None: ...
    async def quick_cancel(self, game: str, ticket: str) -> bool: ...  # False: taken
    async def quick_requeue(self, game: str, ticket: str) -> None: ...
    async def tell_ticket(self, ticket: str, pairing: dict[str, Any]) -> None: ...
    async def told_ticket(self, ticket: str) -> dict[str, Any] | None: ...
    async def keep_quick_seat(self, player: str, pairing: dict[str, Any]) -> None: ...
    async def quick_seat(self, player: str) -> dict[str, Any] | None: ...
    # budgets of attempts, shared by every process: rooms created per client address
    # (server/edge/admission/room_limit.py), sign-ins (server/identity/signin_limit.py)
    async def take_budget(self, budget: str, who: str, interval: float, burst: float) -> float: ...
    async def refill_budget(self, budget: str, who: str) -> None: ...
    # the outbox of finished races, for the archive (server/edge/archiving.py)
    async def outbox(self, now: float, limit: int = 100) -> list[tuple[str, float]]: ...
    async def ended(self, room: str) -> list[EndedRace]: ...
    async def forget_ended(self, room: str, ended: EndedRace) -> None: ...
    async def outbox_done(self, room: str, score: float) -> None: ...
    async def outbox_later(self, room: str, at: float) -> None: ...
    async def claim_ended(self, room: str, owner: str, seconds: float) -> bool: ...
    async def release_ended(self, room: str, owner: str) -> None: ...


async def submitted(
    post: Callable[[MoveWrite, Callable[[MoveResult | Exception], None]], None],
    write: MoveWrite,
    on_accepted: Callable[[MoveResult], None] | None,
) -> MoveResult:
    """A store's `submit_move` from its `post_move`: the verdict awaited, `on_accepted`
    called as it is known (what it raises is raised here)."""
    future: asyncio.Future[MoveResult] = asyncio.get_running_loop().create_future()

    def done(outcome: MoveResult | Exception) -> None:
        if future.done():
            return
        if isinstance(outcome, Exception):
            future.set_exception(outcome)
            return
        if on_accepted is not None and outcome.kind is Verdict.OK:
            try:
                on_accepted(outcome)
            except Exception as exc:
                future.set_exception(exc)
                return
        future.set_result(outcome)

    post(write, done)
    return await future


def _move_result(write: MoveWrite, reply: Any) -> MoveResult:
    """move.lua's reply to `write`: {verdict, detail}."""
    kind, detail = reply
    if kind == b"ok":
        return MoveResult(Verdict.OK, answer=answer_to(write.seq, write.event, int(detail)))
    if kind == b"dup":
        return MoveResult(Verdict.DUP, answer=stored_answer_of(detail, write.seq))
    return MoveResult(
        Verdict(kind.decode()), detail.decode() if isinstance(detail, bytes) else str(detail)
    )


class RedisRoomStore:
    def __init__(
        self,
        redis: AnyRedis,
        batcher: ScriptBatcher,
        *,
        event_log: int = 512,
        room_ttl: float = 3600.0,
        lobby_ttl: float = 86400.0,
        empty_ttl: float = 900.0,
    ) -> None:
        self.redis: Any = redis  # redis-py's return types are too loose to help mypy
        self.batcher = batcher
        self.event_log = event_log
        self.room_ttl = room_ttl
        self.lobby_ttl = lobby_ttl
        self.empty_ttl = min(empty_ttl, lobby_ttl)
        self._turns = KeyedLocks()  # transitions of one room from this process take turns

    # ------------------------------------------------------------ race transitions

    async def create(self, race: Race) -> None:
        await self._write(race, "0:0", [], reset=False)
        await self.redis.zadd(ROOMS, {race.room: race.created_at})
        log_created(race)  # operators' log (server/room/room_log.py)

    async def load(self, room: str) -> Loaded | None:
        keys = RoomKeys(room)
        raw = await self.batcher.call(LOAD, (keys.meta, keys.race), ())
        if not raw:
            return None
        race = Race.from_dict(json.loads(raw[0]))
        flat = raw[1]
        meta = dict(zip(flat[::2], flat[1::2], strict=True))
        for field, value in meta.items():
            if not field.startswith(b"p:"):
                continue
            seat = race.seats.get(int(field[2:]))
            if seat is None:
                continue
            progress, moves, won, stuck, done_at, *rest = msgpack.unpackb(value)
            seat.progress, seat.moves, seat.won, seat.stuck = progress, moves, won, stuck
            if rest:  # kept since splits were: a room written before has none
                seat.splits = rest[0]
            if seat.out is None:
                seat.done_at = done_at
        return Loaded(race, int(meta.get(b"rev", 0)), int(meta.get(b"ver", 0)))

    async def transact(self, room: str, action: Callable[[Race], Outcome], now: float) -> Applied:
        """Load, apply `action` (pure; may raise RaceError), write if nobody wrote first.

        Transitions of one room from this process take turns (a local lock), so only
        another process can make the compare-and-set fail: no retry storms when eight
        players join or leave at once."""
        async with self._turns.hold(room):
            return await self._transact(room, action, now)

    async def _transact(self, room: str, action: Callable[[Race], Outcome], now: float) -> Applied:
        for attempt in range(TRANSITION_ATTEMPTS):
            if attempt:
                # A move was accepted between the read and the write (a racer's burst lands
                # one in nearly every round trip): step aside a little longer each time, so
                # that the transition finds a gap between them.
                await step_aside(attempt, TRANSITION_BACKOFF)
            loaded = await self.load(room)
            if loaded is None:
                raise RaceError(ErrorCode.UNKNOWN_ROOM, f"no room {room!r}")
            race = loaded.race
            old_round, old_status = race.round, race.status
            outcome = action(race)
            if not outcome:
                return Applied(race, [], loaded.version)
            ends = race.status is Status.FINISHED and old_status is not Status.FINISHED
            if ends:
                # Listed before the write that keeps the race for the archive, and again
                # after it, a little later: a process dying in between leaves an entry the
                # drain finds empty and drops once it is old, and a drain that read the first
                # listing cannot drop the second (`outbox_done`): never a kept race that
                # nobody looks for.
                await self.redis.zadd(OUTBOX, {room: now})
            written = await self._write(
                race,
                f"{loaded.rev}:{loaded.version}",
                outcome.events,
                reset=race.round != old_round,
                ends=ends,
            )
            if written is not None:
                if ends:
                    await self.redis.zadd(OUTBOX, {room: now + OUTBOX_AGAIN})
                log_events(race, written[0])  # operators' log: started, finished
                return Applied(race, written[0], written[1])
        # Nothing was written: the client tries again, as after an outage.
        raise RaceError(ErrorCode.UNAVAILABLE, "the room is too busy, try again")

    def _ttl(self, race: Race) -> float:
        """How long the room's keys live after this write: a finished room `room_ttl`; one
        in its lobby with nobody seated (never joined, or left by everyone; a ghost race's
        ghost is nobody) `empty_ttl`, so that the lobby does not list it for a day; any other
        `lobby_ttl`, a tournament's race room too (it waits for its players as long as its
        round does), and never less than its grace: a seat away is forfeit or freed by the
        sweep, not lost with its room (a daily attempt's is kept until its day is over)."""
        if race.status is Status.FINISHED:
            return self.room_ttl
        seated = any(not seat.ghost for seat in race.seats.values())
        if race.status is Status.LOBBY and not seated and race.config.tournament is None:
            return self.empty_ttl
        return max(self.lobby_ttl, race.config.grace + GRACE_SLACK)

    async def _write(
        self, race: Race, seen: str, events: list[p.Event], *, reset: bool, ends: bool = False
    ) -> tuple[list[p.Event], int] | None:
        """Write `race` with its `events` unless the room changed since it was read (`seen`:
        "REV:VER", its race writes and events then); None if it did."""
        deadline = race.next_deadline()
        if deadline is not None:
            # Before the write: a crash in between leaves a harmless extra sweep, never a
            # race without its deadline.
            await self.redis.zadd(DEADLINES, {race.room: deadline})
        keys = RoomKeys(race.room)
        ttl = self._ttl(race)
        outs: list[str] = []
        for index in range(race.config.seats):
            seat = race.seats.get(index)
            outs += [f"out:{index}", (seat.out or "") if seat else ""]
            outs += [f"tok:{index}", seat.token_hash if seat else ""]
        result = await self.batcher.call(
            TRANSITION,
            (keys.meta, keys.race, keys.log, keys.ended, *keys.per_seat(race.config.seats)),
            (
                seen,
                json.dumps(race.to_dict(), separators=(",", ":")),
                race.status.value,
                race.round,
                millis(race.start_at),
                millis(race.ends_at),
                self.event_log,
                keys.channel,
                round(ttl * 1000),
                "1" if reset else "0",
                len(outs) // 2,
                LOBBY,
                lobby_body(race),
                "1" if ends else "0",
                *outs,
                *(entry_body(e) for e in events),
            ),
        )
        if result[0] != b"ok":
            return None
        first, last = int(result[2]), int(result[3])
        stamped = [dataclasses.replace(e, version=first + i) for i, e in enumerate(events)]
        return stamped, last

    # ------------------------------------------------------------ moves

    async def submit_move(
        self, write: MoveWrite, on_accepted: Callable[[MoveResult], None] | None = None
    ) -> MoveResult:
        """The checklist's verdict on `write`. `on_accepted` gets an accepted move's result
        as soon as the script's reply is read, before this returns (a round of the event
        loop later): the mover's answer then leaves with the move's `progress`."""
        return await submitted(self.post_move, write, on_accepted)

    def post_move(self, write: MoveWrite, done: Callable[[MoveResult | Exception], None]) -> None:
        """`write` sent to the move script now; `done` gets the verdict as the reply is
        read, or the error (Redis out of reach, a refused call)."""
        keys, args, fixed = move_call(write, self.event_log, self.lobby_ttl)

        def verdict(reply: Any) -> None:
            if not isinstance(reply, Exception):
                try:
                    reply = _move_result(write, reply)
                except Exception as exc:  # a reply this version cannot read
                    reply = exc
            done(reply)

        self.batcher.post(MOVE, keys, args, fixed, verdict)

    async def moves(self, room: str, seat: int) -> list[tuple[float, str]]:
        return parse_moves(await self.redis.lrange(RoomKeys(room).moves(seat), 0, -1))

    async def last_seq(self, room: str, seat: int) -> int:
        return int(await self.redis.hget(RoomKeys(room).seq(seat), "last") or 0)

    async def stored_answer(self, room: str, seat: int, seq: int) -> p.Accepted | None:
        raw = await self.redis.hget(RoomKeys(room).seq(seat), str(seq))
        return None if raw is None else stored_answer_of(raw, seq)

    # ------------------------------------------------------------ events

    async def events_since(self, room: str, since: int) -> list[p.Event] | None:
        """The events after `since`, or None when the log no longer reaches back that far."""
        return events_after(await self.redis.lrange(RoomKeys(room).log, 0, -1), since)

    # ------------------------------------------------------------ indexes

    async def room_ids(self, limit: int = 200) -> list[str]:
        return [r.decode() for r in await self.redis.zrevrange(ROOMS, 0, limit - 1)]

    async def statuses(self, rooms: list[str]) -> dict[str, str | None]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for room in rooms:
                pipe.hget(RoomKeys(room).meta, "status")
            raw = await pipe.execute()
        gone = [room for room, s in zip(rooms, raw, strict=True) if s is None]
        if gone:
            await self.redis.zrem(ROOMS, *gone)
        return {room: s.decode() if s else None for room, s in zip(rooms, raw, strict=True)}

    async def due(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        raw = await self.redis.zrangebyscore(DEADLINES, 0, now, start=0, num=limit, withscores=True)
        return [(room.decode(), score) for room, score in raw]

    async def unschedule(self, room: str, score: float) -> None:
        await self.batcher.call(UNSCHEDULE, (DEADLINES,), (room, repr(score)))

    async def reschedule(self, room: str, at: float) -> None:
        await self.redis.zadd(DEADLINES, {room: at})

    # ------------------------------------------------------------ processes

    async def heartbeat(self, process: str, ttl: float) -> bool:
        """Process `process` is alive for `ttl` more seconds (and known: `processes`).
        False when the others took it for dead since its last heartbeat (`declare_dead`):
        it only stalled, and its sockets no longer hold their seats."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(process_key(process), 1, px=round(ttl * 1000))
            pipe.sadd(PROCESSES, process)
            pipe.delete(process_reaped_key(process))
            *_, declared = await pipe.execute()
        return not declared

    async def declare_dead(self, process: str) -> None:
        """The reaper is letting go of `process`'s sockets: if it is in fact alive (it
        stalled), its next heartbeat says so."""
        await self.redis.set(process_reaped_key(process), 1, px=round(self.lobby_ttl * 1000))

    async def process_alive(self, process: str) -> bool:
        return bool(await self.redis.exists(process_key(process)))

    async def forget_process(self, process: str) -> None:
        """Its heartbeat only: the others then reap whatever it could not let go."""
        await self.redis.delete(process_key(process))

    async def processes(self) -> list[str]:
        """Every process that has beaten and was not dropped since (alive or not)."""
        return sorted(p.decode() for p in await self.redis.smembers(PROCESSES))

    async def hold(self, process: str, room: str) -> None:
        """A socket of `process` is taking a seat of `room`: if the process dies, the
        reaper looks there (before the seat is taken: a death in between costs a look).
        The process is made known too: Redis may have lost it since its last heartbeat."""
        key = process_rooms_key(process)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(key, room)
            pipe.pexpire(key, round(self.lobby_ttl * 1000))
            pipe.sadd(PROCESSES, process)
            await pipe.execute()

    async def rooms_held(self, process: str) -> list[str]:
        return sorted(r.decode() for r in await self.redis.smembers(process_rooms_key(process)))

    async def drop_process(self, process: str) -> None:
        """A dead process reaped: forget it and its rooms."""
        await self.redis.srem(PROCESSES, process)
        await self.redis.delete(process_rooms_key(process))

    async def problem(self) -> str | None:
        """What is wrong with Redis, or None when every node answers (the health check)."""
        return await redis_problem(self.redis)

    # ------------------------------------------------------------ the outbox

    async def outbox(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        """Rooms with a finished race to archive by `now`, and when, oldest first."""
        raw = await self.redis.zrangebyscore(OUTBOX, "-inf", now, 0, limit, withscores=True)
        return [(room.decode(), score) for room, score in raw]

    async def ended(self, room: str) -> list[EndedRace]:
        """The room's finished races not archived yet, oldest round first."""
        raw = await self.redis.hgetall(RoomKeys(room).ended)
        return ended_races({k.decode(): v.decode() for k, v in raw.items()})

    async def forget_ended(self, room: str, ended: EndedRace) -> None:
        await self.redis.hdel(RoomKeys(room).ended, *ended_fields(ended))

    async def outbox_done(self, room: str, score: float) -> None:
        """Drop the room from the outbox unless a race of it ended again since `score`."""
        await self.batcher.call(UNSCHEDULE, (OUTBOX,), (room, repr(score)))

    async def outbox_later(self, room: str, at: float) -> None:
        """Look at the room again at `at` (not sooner; a race that ended since is kept)."""
        await self.redis.zadd(OUTBOX, {room: at}, xx=True, gt=True)

    async def claim_ended(self, room: str, owner: str, seconds: float) -> bool:
        """A short lease: one process archives a room's races at a time (the archive is
        idempotent anyway; this only saves the others the work)."""
        key = outbox_claim_key(room)
        return bool(await self.redis.set(key, owner, px=round(seconds * 1000), nx=True))

    async def release_ended(self, room: str, owner: str) -> None:
        key = outbox_claim_key(room)
        if (await self.redis.get(key)) == owner.encode():
            await self.redis.delete(key)

    async def load_scripts(self) -> None:
        """Load every script's function library (Redis 7.0 or later: deploy/README.md)."""
        for script in (MOVE, TRANSITION, LOAD, QUICK, UNSCHEDULE, BUDGET):
            try:
                await self.redis.function_load(script.library, replace=True)
            except ResponseError as exc:
                if "unknown command" not in str(exc):
                    raise
                # Said once, plainly: the reply quotes the library's source at length.
                raise ResponseError(
                    "solrace needs Redis 7.0 or later: its scripts run as Redis Functions, "
                    "and this Redis does not know FUNCTION"
                ) from None

    # ------------------------------------------------------------ quick match

    async def quick_pair(self, game: str, ticket: str, now: float) -> str | None:
        """The waiting ticket (server/room/matching.py's `Ticket`) that `ticket` is paired
        with, taken off the queue; or None, and `ticket` waits."""
        args = (ticket, repr(now), repr(RANGE_START), repr(RANGE_WIDENS), str(UNRATED))
        other = await self.batcher.call(QUICK, (quick_queue(game),), args)
        return other.decode() if other else None

    async def quick_cancel(self, game: str, ticket: str) -> bool:
        """Take `ticket` out of the queue; False if it was not there (a pairing took it)."""
        return bool(await self.redis.lrem(quick_queue(game), 0, ticket))

    async def quick_requeue(self, game: str, ticket: str) -> None:
        """Put back `ticket`, taken by a pairing that made no room, first in the queue (it
        has waited longest)."""
        await self.redis.lpush(quick_queue(game), ticket)

    async def tell_ticket(self, ticket: str, pairing: dict[str, Any]) -> None:
        """Tell the socket waiting with `ticket` (in any process) where it was seated. Kept
        (`told_ticket`) before it is published: a process that was not listening then (its
        link to Redis down for a moment) reads it once its feed is back."""
        packed = msgpack.packb(pairing)
        await self.redis.set(ticket_told_key(ticket), packed, ex=TOLD_TTL)
        await self.redis.publish(ticket_channel(ticket), packed)

    async def told_ticket(self, ticket: str) -> dict[str, Any] | None:
        """The pairing told to `ticket` (`tell_ticket`), if one was."""
        packed = await self.redis.get(ticket_told_key(ticket))
        return None if packed is None else cast(dict[str, Any], msgpack.unpackb(packed))

    async def keep_quick_seat(self, player: str, pairing: dict[str, Any]) -> None:
        """Keep where a quick match seated `player` (room, seat, token, game) for as long
        as a told pairing is kept: a player whose socket never heard of it (their process
        died) is sent there when they ask again (server/handlers/quick.py)."""
        await self.redis.set(quick_seat_key(player), msgpack.packb(pairing), ex=TOLD_TTL)

    async def quick_seat(self, player: str) -> dict[str, Any] | None:
        """The latest quick-match seat of `player` (`keep_quick_seat`), if one is kept."""
        packed = await self.redis.get(quick_seat_key(player))
        return None if packed is None else cast(dict[str, Any], msgpack.unpackb(packed))

    # ------------------------------------------------------------ budgets of attempts

    async def take_budget(self, budget: str, who: str, interval: float, burst: float) -> float:
        """One attempt of a kind (`budget`: a room created, a sign-in) by `who`: 0.0 if it
        may be made now (and it is counted), else the seconds until it may (a refusal is
        not counted). GCRA, in one script on Redis's clock, so every server process shares
        one budget: `burst` at once, then one every `interval` seconds."""
        wait = await self.batcher.call(BUDGET, (budget_key(budget, who),), (interval, burst))
        return float(wait)

    async def refill_budget(self, budget: str, who: str) -> None:
        """`who`'s budget full again (a sign-in that succeeded)."""
        await self.redis.delete(budget_key(budget, who))


def ended_races(fields: dict[str, str]) -> list[EndedRace]:
    """The outbox hash of a room (server/storage/keys.py, `ended`) as races, oldest first;
    a race whose JSON cannot be read is left out (and stays in the hash)."""
    found: list[EndedRace] = []
    for field, text in fields.items():
        if not field.isdigit():
            continue
        try:
            race = Race.from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError):
            continue
        moves = {
            seat: parse_moves(
                [e.encode() for e in fields.get(f"{field}:{seat}", "").split("\n") if e]
            )
            for seat in race.seats
        }
        found.append(EndedRace(race, moves))
    return sorted(found, key=lambda e: e.race.round)


def ended_fields(ended: EndedRace) -> list[str]:
    """The outbox hash's fields of one ended race."""
    round_ = str(ended.race.round)
    return [round_, *(f"{round_}:{seat}" for seat in range(ended.race.config.seats))]
