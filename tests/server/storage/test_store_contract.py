"""The RoomStore contract, run against both stores: Redis (a real redis-server) and the
in-memory one (server/storage/memory_store.py), so race logic can be tested without Redis and
the two never drift apart."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

import protocol as p
from server.redis_io.batcher import ScriptBatcher
from server.room.checklist import Verdict
from server.room.matching import Ticket
from server.room.race import Race, RaceError, RoomConfig, Status
from server.storage.codec import MoveWrite
from server.storage.keys import OUTBOX
from server.storage.memory_store import MemoryFeed, MemoryRoomStore
from server.storage.store import MoveResult, RedisRoomStore, RoomStore


@pytest.fixture(params=["redis", "memory"])
async def store(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[RoomStore]:
    if request.param == "memory":
        yield MemoryRoomStore(MemoryFeed(), event_log=8)
        return
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    yield RedisRoomStore(redis, batcher, event_log=8)
    # The races these tests end (with moves no engine would accept) are not for the
    # archive of the servers later tests start on this Redis.
    await redis.delete(OUTBOX)
    await batcher.close()
    await redis.aclose()


async def running_room(store: RoomStore, seats: int = 2) -> str:
    room = uuid.uuid4().hex[:8]
    config = RoomConfig(game="shaula", seats=seats, countdown=0.0, time_limit=100.0)
    await store.create(Race(room=room, config=config, seed=5, created_at=0.0))
    for seat in range(seats):
        await store.transact(room, lambda r, s=seat: r.join(f"p{s}", f"h{s}", 1.0)[1], 1.0)
    await store.transact(room, lambda r: r.start(0, 2.0), 2.0)
    await store.transact(room, lambda r: r.tick(2.0), 2.0)
    return room


def move(room: str, seat: int, seq: int, expected: int, text: str = "t1 c1") -> MoveWrite:
    event = p.Progress(
        version=0,
        at=3.0,
        seat=seat,
        progress=expected + 1,
        moves=expected + 1,
        won=False,
        stuck=False,
        move=text,
    )
    return MoveWrite(room, 1, seat, seq, expected, text, 3.0, event, None, f"h{seat}")


async def test_transitions_are_versioned_and_logged(store: RoomStore) -> None:
    room = await running_room(store)
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.status is Status.RUNNING and loaded.version == 4
    events = await store.events_since(room, 0)
    assert events is not None
    assert [(e.version, e.TYPE) for e in events] == [
        (1, "joined"),
        (2, "joined"),
        (3, "countdown"),
        (4, "started"),
    ]
    assert await store.events_since(room, 3) == events[3:]
    assert await store.load("nowhere") is None
    with pytest.raises(RaceError):
        await store.transact("nowhere", lambda r: r.tick(1.0), 1.0)


async def test_an_action_that_changes_nothing_writes_nothing(store: RoomStore) -> None:
    room = await running_room(store)
    applied = await store.transact(room, lambda r: r.tick(3.0), 3.0)
    assert applied.events == [] and applied.version == 4


async def test_moves_verdicts_answers_and_progress(store: RoomStore) -> None:
    room = await running_room(store)
    first = await store.submit_move(move(room, 0, 1, 0))
    assert first.kind is Verdict.OK and first.answer is not None and first.answer.version == 5
    again = await store.submit_move(move(room, 0, 1, 0))
    assert again.kind is Verdict.DUP and again.answer == first.answer
    assert await store.stored_answer(room, 0, 1) == first.answer
    assert await store.stored_answer(room, 0, 2) is None
    assert (await store.submit_move(move(room, 0, 2, 0))).kind is Verdict.COUNT
    assert (await store.submit_move(move(room, 0, 2**62, 1))).kind is Verdict.OK
    assert (await store.submit_move(move(room, 0, 2**62 - 1, 2))).kind is Verdict.STALE
    wrong = move(room, 1, 1, 0)
    wrong.token_hash = "h0"
    assert (await store.submit_move(wrong)).kind is Verdict.SEAT
    assert await store.last_seq(room, 0) == 2**62
    assert [m for _, m in await store.moves(room, 0)] == ["t1 c1", "t1 c1"]
    loaded = await store.load(room)
    assert loaded is not None and loaded.version == 6
    assert (loaded.race.seats[0].moves, loaded.race.seats[1].moves) == (2, 0)
    events = await store.events_since(room, 4)
    assert events is not None and [e.TYPE for e in events] == ["progress", "progress"]


async def test_an_accepted_move_is_told_to_on_accepted_once_before_the_verdict_returns(
    store: RoomStore,
) -> None:
    room = await running_room(store)
    told: list[MoveResult] = []
    first = await store.submit_move(move(room, 0, 1, 0), told.append)
    assert first.kind is Verdict.OK and told == [first]
    for refused in (move(room, 0, 1, 0), move(room, 0, 2, 0), move(room, 0, 1, 1)):
        result = await store.submit_move(refused, told.append)  # dup, count, stale
        assert result.kind is not Verdict.OK
    assert told == [first]


async def test_out_and_finished_and_a_new_round(store: RoomStore) -> None:
    room = await running_room(store)
    assert (await store.submit_move(move(room, 0, 1, 0))).kind is Verdict.OK
    await store.transact(room, lambda r: r.resign(1, 4.0), 4.0)
    assert (await store.submit_move(move(room, 1, 1, 0))).kind is Verdict.OUT
    await store.transact(room, lambda r: r.resign(0, 5.0), 5.0)
    assert (await store.submit_move(move(room, 0, 2, 1))).kind is Verdict.CLOSED
    for seat in (0, 1):
        await store.transact(room, lambda r, s=seat: r.rematch(s, 77, 6.0), 6.0)
    await store.transact(room, lambda r: r.tick(6.0), 6.0)
    loaded = await store.load(room)
    assert loaded is not None and (loaded.race.round, loaded.race.seed) == (2, 77)
    assert await store.moves(room, 0) == []  # boards restart
    assert await store.last_seq(room, 0) == 1  # seqs carry on
    second = move(room, 0, 2, 0)
    second.round, second.now = 2, 7.0
    assert (await store.submit_move(second)).kind is Verdict.OK


async def test_the_log_keeps_the_last_events_and_says_when_it_does_not_reach(
    store: RoomStore,
) -> None:
    room = await running_room(store)
    for seq in range(1, 21):
        assert (await store.submit_move(move(room, 0, seq, seq - 1))).kind is Verdict.OK
    assert await store.events_since(room, 0) is None  # trimmed: a snapshot is needed
    recent = await store.events_since(room, 20)
    assert recent is not None and [e.version for e in recent] == [21, 22, 23, 24]


async def test_indexes_deadlines_processes_and_quick_match(store: RoomStore) -> None:
    room = await running_room(store)
    assert room in await store.room_ids(limit=1_000_000)  # created at 0.0: the oldest of all
    assert (await store.statuses([room, "gone00"]))[room] == "running"
    await store.reschedule(room, 50.0)
    assert (room, 50.0) in await store.due(60.0)
    assert room not in [r for r, _ in await store.due(40.0)]
    await store.unschedule(room, 50.0)
    assert room not in [r for r, _ in await store.due(60.0)]
    process = uuid.uuid4().hex[:8]
    assert not await store.process_alive(process)
    assert await store.heartbeat(process, 5.0)
    assert await store.process_alive(process)
    # Taken for dead by a reaper while it only stalled: its next heartbeat says so, once.
    await store.declare_dead(process)
    assert not await store.heartbeat(process, 5.0)
    assert await store.heartbeat(process, 5.0)
    await store.hold(process, room)
    await store.hold(process, room)
    await store.forget_process(process)
    assert not await store.process_alive(process)
    # Known until reaped, with the rooms where it took seats.
    assert process in await store.processes()
    assert await store.rooms_held(process) == [room]
    await store.drop_process(process)
    assert process not in await store.processes()
    assert await store.rooms_held(process) == []
    assert await store.problem() is None
    # A process that holds a room before any heartbeat (Redis lost it) is known too.
    unbeaten = uuid.uuid4().hex[:8]
    await store.hold(unbeaten, room)
    assert unbeaten in await store.processes()
    assert not await store.process_alive(unbeaten)
    await store.drop_process(unbeaten)
    game = f"g{uuid.uuid4().hex[:6]}"
    a, b, c, d = (Ticket(id=x, name=x, at=1.0).encode() for x in "abcd")
    assert await store.quick_pair(game, a, 1.0) is None
    assert await store.quick_pair(game, b, 1.0) == a
    assert await store.quick_pair(game, c, 1.0) is None
    assert await store.quick_cancel(game, a) is False  # paired with b: no longer queued
    assert await store.quick_cancel(game, c) is True
    assert await store.quick_pair(game, d, 1.0) is None
    player, other = uuid.uuid4().hex[:16], uuid.uuid4().hex[:16]
    assert await store.quick_seat(player) is None
    seat = {"room": room, "seat": 1, "token": "t0k", "game": "shaula"}
    await store.keep_quick_seat(player, seat)
    assert await store.quick_seat(player) == seat
    assert await store.quick_seat(other) is None


async def test_a_budget_allows_a_burst_per_address_then_one_per_interval(
    store: RoomStore,
) -> None:
    address, other = f"192.0.2.{uuid.uuid4().hex[:6]}", f"198.51.100.{uuid.uuid4().hex[:6]}"
    assert [await store.take_budget("rooms", address, 60.0, 3) for _ in range(3)] == [0.0] * 3
    wait = await store.take_budget("rooms", address, 60.0, 3)
    assert 50.0 < wait <= 60.0  # about a minute, less the time since the third
    again = await store.take_budget("rooms", address, 60.0, 3)  # a refusal is not counted
    assert 50.0 < again <= wait
    assert await store.take_budget("rooms", other, 60.0, 3) == 0.0  # per address
    # One every 2 s: the second attempt must come before the first one's refill, which a
    # Redis round trip held up for a fraction of a second on a busy machine did not within
    # 0.2 s.
    quick = f"203.0.113.{uuid.uuid4().hex[:6]}"
    assert await store.take_budget("rooms", quick, 2.0, 1) == 0.0
    wait = await store.take_budget("rooms", quick, 2.0, 1)
    assert 0.0 < wait <= 2.0
    await asyncio.sleep(wait + 0.01)
    assert await store.take_budget("rooms", quick, 2.0, 1) == 0.0
    # Budgets of other kinds are apart; a refill gives one its burst back.
    assert await store.take_budget("sign-in", address, 60.0, 1) == 0.0
    assert await store.take_budget("sign-in", address, 60.0, 1) > 50.0
    await store.refill_budget("sign-in", address)
    assert await store.take_budget("sign-in", address, 60.0, 1) == 0.0
    assert await store.take_budget("rooms", address, 60.0, 3) > 50.0


async def test_quick_match_pairs_by_rating_with_a_range_that_widens(store: RoomStore) -> None:
    """server/room/matching.py's rule, the same in Lua and in memory: nobody waits while
    another player waits; among several waiting, the newcomer gets the closest one whose
    range covers them, and a player waiting longer accepts a wider gap; nobody is paired
    with themselves."""
    game = f"g{uuid.uuid4().hex[:6]}"

    def ticket(name: str, rating: int | None, at: float, player: str | None = None) -> str:
        return Ticket(id=name, name=name, at=at, player=player or name, rating=rating).encode()

    low, high = ticket("low", 1200, 0.0), ticket("high", 1900, 0.0)
    assert await store.quick_pair(game, low, 0.0) is None
    assert await store.quick_pair(game, high, 0.0) == low  # far apart, but nobody else
    # Several waiting: only tickets of one player can be (a player is never paired with
    # themselves), here with the ratings of three different players.
    old = ticket("old", 1200, 0.0, player="x")
    mid = ticket("mid", 1500, 20.0, player="x")
    top = ticket("top", 1880, 20.0, player="x")
    for waiting in (old, mid, top):
        assert await store.quick_pair(game, waiting, 20.0) is None
    # 1560: 1500 is 60 points away, within its range (100): the closest that covers it.
    assert await store.quick_pair(game, ticket("n1", 1560, 20.0), 20.0) == mid
    # 1700: 1880 is 180 away (its range: 100); 1200 has waited 20 s (range 1100) and
    # covers 500: the one whose range covers the newcomer goes first.
    assert await store.quick_pair(game, ticket("n2", 1700, 20.0), 20.0) == old
    # No rating (1000, the start): the last one left, uncovered, is theirs all the same.
    assert await store.quick_pair(game, ticket("n3", None, 20.0), 20.0) == top
    assert await store.quick_pair(game, ticket("n4", 1500, 20.0), 20.0) is None


async def _outbox_score(store: RoomStore, room: str) -> float | None:
    return dict(await store.outbox(1e12, limit=100_000)).get(room)


async def test_a_race_that_ends_is_kept_whole_in_the_outbox_until_archived(
    store: RoomStore,
) -> None:
    room = await running_room(store)
    assert (await store.submit_move(move(room, 0, 1, 0))).kind is Verdict.OK
    assert (await store.submit_move(move(room, 0, 2, 1, "t2 c2"))).kind is Verdict.OK
    await store.transact(room, lambda r: r.resign(1, 4.0), 4.0)
    assert await _outbox_score(store, room) is None  # still running: nothing to archive
    await store.transact(room, lambda r: r.resign(0, 5.0), 5.0)
    first_end = await _outbox_score(store, room)
    assert first_end is not None
    # A rematch restarts the boards; the first race is still kept whole.
    for seat in (0, 1):
        await store.transact(room, lambda r, s=seat: r.rematch(s, 77, 6.0), 6.0)
    await store.transact(room, lambda r: r.tick(6.0), 6.0)
    [ended] = await store.ended(room)
    assert ended.race.round == 1 and ended.race.status is Status.FINISHED
    assert ended.race.results is not None and ended.race.finish_reason == "all_done"
    assert ended.moves == {0: [(3.0, "t1 c1"), (3.0, "t2 c2")], 1: []}
    # The second race ends too: both wait, oldest first, and the room is listed again.
    await store.transact(room, lambda r: r.resign(0, 8.0), 8.0)
    await store.transact(room, lambda r: r.resign(1, 8.0), 8.0)
    assert [e.race.round for e in await store.ended(room)] == [1, 2]
    await store.forget_ended(room, ended)
    assert [e.race.round for e in await store.ended(room)] == [2]
    # Done as of the first end: the room stays listed, a race of it ended since.
    await store.outbox_done(room, first_end)
    second_end = await _outbox_score(store, room)
    assert second_end is not None
    await store.forget_ended(room, (await store.ended(room))[0])
    await store.outbox_done(room, second_end)
    assert await _outbox_score(store, room) is None
    assert await store.ended(room) == []


async def test_a_room_set_aside_is_listed_again_when_due_or_when_a_race_ends(
    store: RoomStore,
) -> None:
    room = await running_room(store)
    for seat in (0, 1):
        await store.transact(room, lambda r, s=seat: r.resign(s, 5.0), 5.0)
    ended_at = await _outbox_score(store, room)
    assert ended_at is not None
    assert room in dict(await store.outbox(ended_at))
    await store.outbox_later(room, ended_at + 600)
    assert room not in dict(await store.outbox(ended_at + 599, limit=100_000))
    assert room in dict(await store.outbox(ended_at + 600, limit=100_000))
    await store.outbox_later(room, ended_at + 10)  # never sooner than it was
    assert await _outbox_score(store, room) == ended_at + 600
    for seat in (0, 1):  # another race ends: due at once
        await store.transact(room, lambda r, s=seat: r.rematch(s, 77, 6.0), 6.0)
    await store.transact(room, lambda r: r.tick(6.0), 6.0)
    for seat in (0, 1):
        await store.transact(room, lambda r, s=seat: r.resign(s, 7.0), 7.0)
    assert room in dict(await store.outbox(8.0, limit=100_000))
    gone = uuid.uuid4().hex[:8]
    await store.outbox_later(gone, 1.0)  # a room not listed stays unlisted
    assert await _outbox_score(store, gone) is None


async def test_one_owner_at_a_time_archives_a_room(store: RoomStore) -> None:
    room = uuid.uuid4().hex[:8]
    assert await store.claim_ended(room, "a", 30.0)
    assert not await store.claim_ended(room, "b", 30.0)
    await store.release_ended(room, "b")  # not b's to release
    assert not await store.claim_ended(room, "b", 30.0)
    await store.release_ended(room, "a")
    assert await store.claim_ended(room, "b", 0.05)
    await asyncio.sleep(0.2)  # the lease lapses (its owner died)
    assert await store.claim_ended(room, "a", 30.0)
