"""The `RoomStore` contract kept in memory, for one process: the race logic without Redis.

It keeps what Redis keeps (server/storage/keys.py) in dicts and judges a move with the same
checklist as move.lua, in the same order, returning the same verdicts; the contract tests
(tests/server/storage/test_store_contract.py) run every case through both stores. Events are
published to a `MemoryFeed`, which has the interface of the Redis pub/sub feeds.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgpack

import protocol as p
from protocol import ErrorCode
from server.room.checklist import Verdict
from server.room.matching import Ticket, partner
from server.room.race import Outcome, Race, RaceError, Status
from server.storage.codec import MoveWrite, answer_to, entry_body, parse_entry, stored_answer_of
from server.storage.keys import LOBBY, RoomKeys, ticket_channel
from server.storage.store import (
    OUTBOX_AGAIN,
    Applied,
    EndedRace,
    Loaded,
    MoveResult,
    RedisRoomStore,
    RoomStore,
    ended_fields,
    ended_races,
    events_after,
    lobby_body,
    submitted,
)

__all__ = ["MemoryFeed", "MemoryRoomStore"]

Handler = Callable[[bytes], None]


class MemoryFeed:
    """Pub/sub within one process: handlers are called in order, at once."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self._handlers[channel] = handler

    async def unsubscribe(self, channel: str, handler: Handler) -> None:
        if self._handlers.get(channel) == handler:  # not a newer subscriber's (feed.py)
            del self._handlers[channel]

    def problem(self) -> str | None:
        return None  # within one process: never down

    async def reconnect_now(self, within: float) -> None:
        return None  # never down, so never connecting again

    def publish(self, channel: str, data: bytes) -> int:
        handler = self._handlers.get(channel)
        if handler is not None:
            handler(data)
        return int(handler is not None)


def _ms(t: float | None) -> int | None:
    return None if t is None or math.isinf(t) else round(t * 1000)


@dataclass
class _Room:
    race: str  # the Race as JSON, as Redis keeps it
    rev: int = 0
    ver: int = 0
    log: list[bytes] = field(default_factory=list)
    # What the meta hash holds for move.lua: copied from the race on every write.
    status: str = "lobby"
    round: int = 1
    start_at: int | None = None
    ends_at: int | None = None
    out: dict[int, str] = field(default_factory=dict)
    tok: dict[int, str] = field(default_factory=dict)
    # Written by moves, per seat.
    moves: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    count: dict[int, int] = field(default_factory=dict)
    progress: dict[int, tuple[int, int, bool, bool, float | None, list[float | None]]] = field(
        default_factory=dict
    )
    seqs: dict[int, dict[int, bytes]] = field(default_factory=dict)
    last: dict[int, int] = field(default_factory=dict)


class MemoryRoomStore:
    def __init__(self, feed: MemoryFeed | None = None, *, event_log: int = 512) -> None:
        self.feed = feed or MemoryFeed()
        self.event_log = event_log
        self._rooms: dict[str, _Room] = {}
        self._created: dict[str, float] = {}
        self._deadlines: dict[str, float] = {}
        self._processes: dict[str, float] = {}  # process -> until (loop time)
        self._held: dict[str, set[str]] = {}  # process -> rooms where it took seats
        self._reaped: set[str] = set()  # processes taken for dead since their heartbeat
        self._queues: dict[str, list[str]] = {}
        self._told: dict[str, dict[str, Any]] = {}  # ticket id -> its pairing (tell_ticket)
        self._quick_seats: dict[str, dict[str, Any]] = {}  # player -> keep_quick_seat's
        self._budgets: dict[tuple[str, str], float] = {}  # (budget, who) -> next attempt due
        self._ended: dict[str, dict[str, str]] = {}  # room -> its outbox hash
        self._outbox: dict[str, float] = {}  # room -> when its last race ended
        self._claims: dict[str, tuple[str, float]] = {}  # room -> (owner, until, loop time)
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------ rooms and their race

    async def create(self, race: Race) -> None:
        self._rooms[race.room] = _Room(race="")
        self._write(race, [], reset=False)
        self._created[race.room] = race.created_at

    async def load(self, room: str) -> Loaded | None:
        stored = self._rooms.get(room)
        if stored is None:
            return None
        race = Race.from_dict(json.loads(stored.race))
        for index, (progress, moves, won, stuck, done_at, splits) in stored.progress.items():
            seat = race.seats.get(index)
            if seat is None:
                continue
            seat.progress, seat.moves, seat.won, seat.stuck = progress, moves, won, stuck
            seat.splits = list(splits)
            if seat.out is None:
                seat.done_at = done_at
        return Loaded(race, stored.rev, stored.ver)

    async def transact(self, room: str, action: Callable[[Race], Outcome], now: float) -> Applied:
        async with self._lock:
            loaded = await self.load(room)
            if loaded is None:
                raise RaceError(ErrorCode.UNKNOWN_ROOM, f"no room {room!r}")
            race = loaded.race
            old_round, old_status = race.round, race.status
            outcome = action(race)
            if not outcome:
                return Applied(race, [], loaded.version)
            events, version = self._write(race, outcome.events, reset=race.round != old_round)
            if race.status is Status.FINISHED and old_status is not Status.FINISHED:
                self._keep_ended(race, now)
            return Applied(race, events, version)

    def _keep_ended(self, race: Race, now: float) -> None:
        """transition.lua's outbox: the finished race and its seats' moves, kept whole."""
        stored = self._rooms[race.room]
        fields = self._ended.setdefault(race.room, {})
        fields[str(race.round)] = stored.race
        for seat in range(race.config.seats):
            lines = (f"{ms} {move}" for ms, move in stored.moves.get(seat, []))
            fields[f"{race.round}:{seat}"] = "\n".join(lines)
        self._outbox[race.room] = now + OUTBOX_AGAIN

    def _write(
        self, race: Race, events: list[p.Event], *, reset: bool
    ) -> tuple[list[p.Event], int]:
        stored = self._rooms[race.room]
        deadline = race.next_deadline()
        if deadline is not None:
            self._deadlines[race.room] = deadline
        stored.rev += 1
        stored.race = json.dumps(race.to_dict(), separators=(",", ":"))
        stored.status, stored.round = race.status.value, race.round
        stored.start_at, stored.ends_at = _ms(race.start_at), _ms(race.ends_at)
        stored.out = {i: s.out for i, s in race.seats.items() if s.out}
        stored.tok = {i: s.token_hash for i, s in race.seats.items()}
        if reset:  # a new round: boards restart; seq answers stay
            stored.moves.clear()
            stored.count.clear()
            stored.progress.clear()
        stamped = []
        for event in events:
            stored.ver += 1
            entry = b"%d|%b" % (stored.ver, entry_body(event))
            stored.log.append(entry)
            self.feed.publish(RoomKeys(race.room).channel, entry)
            stamped.append(parse_entry(entry))
        del stored.log[: -self.event_log]
        self.feed.publish(LOBBY, b"%d|%b" % (stored.rev, lobby_body(race)))
        return [e for e in stamped if e is not None], stored.ver

    # ------------------------------------------------------------ moves

    async def submit_move(
        self, write: MoveWrite, on_accepted: Callable[[MoveResult], None] | None = None
    ) -> MoveResult:
        return await submitted(self.post_move, write, on_accepted)

    def post_move(self, write: MoveWrite, done: Callable[[MoveResult | Exception], None]) -> None:
        done(self._judge_move(write))

    def _judge_move(self, write: MoveWrite) -> MoveResult:
        """move.lua's checklist, in its order, with its verdicts."""
        stored = self._rooms.get(write.room)
        seat = write.seat
        if stored is None or stored.tok.get(seat) != write.token_hash:
            return MoveResult(Verdict.SEAT)
        seqs = stored.seqs.setdefault(seat, {})
        if write.seq in seqs:
            return MoveResult(Verdict.DUP, answer=stored_answer_of(seqs[write.seq], write.seq))
        now = _ms(write.now) or 0
        if stored.status not in ("countdown", "running"):
            return MoveResult(Verdict.CLOSED, stored.status)
        if stored.round != write.round:
            return MoveResult(Verdict.CLOSED, "round")
        if stored.start_at is None or stored.start_at > now:
            return MoveResult(Verdict.CLOSED, "early")
        if stored.ends_at is not None and stored.ends_at <= now:
            return MoveResult(Verdict.CLOSED, "late")
        if seat in stored.out:
            return MoveResult(Verdict.OUT, stored.out[seat])
        last = stored.last.get(seat, 0)
        if write.seq <= last:
            return MoveResult(Verdict.STALE, str(last))
        count = stored.count.get(seat, 0)
        if count != write.expected:
            return MoveResult(Verdict.COUNT, str(count))
        event = write.event
        stored.moves.setdefault(seat, []).append((now, write.move))
        stored.ver += 1
        entry = b"%d|%b" % (stored.ver, entry_body(event))
        stored.log.append(entry)
        if len(stored.log) > self.event_log + self.event_log // 8:
            del stored.log[: -self.event_log]
        seqs[write.seq] = entry
        stored.last[seat] = write.seq
        stored.count[seat] = count + 1
        stored.progress[seat] = (
            event.progress,
            event.moves,
            event.won,
            event.stuck,
            write.done_at,
            list(write.splits),
        )
        self.feed.publish(RoomKeys(write.room).channel, entry)
        return MoveResult(Verdict.OK, answer=answer_to(write.seq, event, stored.ver))

    async def moves(self, room: str, seat: int) -> list[tuple[float, str]]:
        stored = self._rooms.get(room)
        entries = stored.moves.get(seat, []) if stored is not None else []
        return [(ms / 1000, move) for ms, move in entries]

    async def last_seq(self, room: str, seat: int) -> int:
        stored = self._rooms.get(room)
        return stored.last.get(seat, 0) if stored is not None else 0

    async def stored_answer(self, room: str, seat: int, seq: int) -> p.Accepted | None:
        stored = self._rooms.get(room)
        entry = stored.seqs.get(seat, {}).get(seq) if stored is not None else None
        return None if entry is None else stored_answer_of(entry, seq)

    # ------------------------------------------------------------ the event log

    async def events_since(self, room: str, since: int) -> list[p.Event] | None:
        stored = self._rooms.get(room)
        return events_after(stored.log if stored is not None else [], since)

    # ------------------------------------------------------------ indexes and deadlines

    async def room_ids(self, limit: int = 200) -> list[str]:
        newest = sorted(self._created, key=lambda r: self._created[r], reverse=True)
        return newest[:limit]

    async def statuses(self, rooms: list[str]) -> dict[str, str | None]:
        return {r: (self._rooms[r].status if r in self._rooms else None) for r in rooms}

    async def due(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        due = sorted((at, room) for room, at in self._deadlines.items() if at <= now)
        return [(room, at) for at, room in due[:limit]]

    async def unschedule(self, room: str, score: float) -> None:
        if self._deadlines.get(room) == score:
            del self._deadlines[room]

    async def reschedule(self, room: str, at: float) -> None:
        self._deadlines[room] = at

    # ------------------------------------------------------------ processes

    async def heartbeat(self, process: str, ttl: float) -> bool:
        self._processes[process] = asyncio.get_running_loop().time() + ttl
        if process in self._reaped:
            self._reaped.discard(process)
            return False
        return True

    async def declare_dead(self, process: str) -> None:
        self._reaped.add(process)

    async def process_alive(self, process: str) -> bool:
        return self._processes.get(process, 0.0) > asyncio.get_running_loop().time()

    async def forget_process(self, process: str) -> None:
        if process in self._processes:
            self._processes[process] = 0.0  # known, not alive: the reaper looks at it

    async def processes(self) -> list[str]:
        return sorted(self._processes)

    async def hold(self, process: str, room: str) -> None:
        self._held.setdefault(process, set()).add(room)
        self._processes.setdefault(process, 0.0)  # known (alive only once it beats)

    async def rooms_held(self, process: str) -> list[str]:
        return sorted(self._held.get(process, ()))

    async def drop_process(self, process: str) -> None:
        self._processes.pop(process, None)
        self._held.pop(process, None)

    async def problem(self) -> str | None:
        return None

    # ------------------------------------------------------------ quick match

    async def quick_pair(self, game: str, ticket: str, now: float) -> str | None:
        queue = self._queues.setdefault(game, [])
        index = partner(Ticket.decode(ticket), [Ticket.decode(t) for t in queue], now)
        if index is None:
            queue.append(ticket)
            return None
        return queue.pop(index)

    async def quick_cancel(self, game: str, ticket: str) -> bool:
        queue = self._queues.get(game, [])
        if ticket not in queue:
            return False
        queue.remove(ticket)
        return True

    async def quick_requeue(self, game: str, ticket: str) -> None:
        self._queues.setdefault(game, []).insert(0, ticket)

    async def tell_ticket(self, ticket: str, pairing: dict[str, Any]) -> None:
        self._told[ticket.partition("|")[0]] = pairing
        self.feed.publish(ticket_channel(ticket), msgpack.packb(pairing))

    async def told_ticket(self, ticket: str) -> dict[str, Any] | None:
        return self._told.get(ticket.partition("|")[0])

    async def keep_quick_seat(self, player: str, pairing: dict[str, Any]) -> None:
        self._quick_seats[player] = pairing

    async def quick_seat(self, player: str) -> dict[str, Any] | None:
        return self._quick_seats.get(player)

    # ------------------------------------------------------------ budgets of attempts

    async def take_budget(self, budget: str, who: str, interval: float, burst: float) -> float:
        """budget.lua's GCRA, on the wall clock as Redis's TIME."""
        now = time.time()
        key = (budget, who)
        due = max(self._budgets.get(key, now), now)
        allowed_at = due + interval - burst * interval
        if allowed_at > now:
            return allowed_at - now
        if len(self._budgets) > 1024:  # as Redis lets the keys expire: forget the past
            self._budgets = {k: t for k, t in self._budgets.items() if t > now}
        self._budgets[key] = due + interval
        return 0.0

    async def refill_budget(self, budget: str, who: str) -> None:
        self._budgets.pop((budget, who), None)

    # ------------------------------------------------------------ the outbox

    async def outbox(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        due = [(room, at) for room, at in self._outbox.items() if at <= now]
        return sorted(due, key=lambda item: (item[1], item[0]))[:limit]

    async def ended(self, room: str) -> list[EndedRace]:
        return ended_races(dict(self._ended.get(room, {})))

    async def forget_ended(self, room: str, ended: EndedRace) -> None:
        fields = self._ended.get(room, {})
        for name in ended_fields(ended):
            fields.pop(name, None)
        if not fields:
            self._ended.pop(room, None)

    async def outbox_done(self, room: str, score: float) -> None:
        if room in self._outbox and self._outbox[room] <= score:
            del self._outbox[room]

    async def outbox_later(self, room: str, at: float) -> None:
        if room in self._outbox:
            self._outbox[room] = max(self._outbox[room], at)

    async def claim_ended(self, room: str, owner: str, seconds: float) -> bool:
        now = asyncio.get_running_loop().time()
        held = self._claims.get(room)
        if held is not None and held[1] > now:
            return False
        self._claims[room] = (owner, now + seconds)
        return True

    async def release_ended(self, room: str, owner: str) -> None:
        held = self._claims.get(room)
        if held is not None and held[0] == owner:
            del self._claims[room]


if TYPE_CHECKING:  # mypy holds both stores to the one contract
    _MEMORY: RoomStore = MemoryRoomStore()
    _REDIS: type[RoomStore] = RedisRoomStore
