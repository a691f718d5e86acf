"""The Redis store against a real redis-server: atomic moves, CAS transitions, the log."""

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

import protocol as p
from protocol import ErrorCode
from server.redis_io.batcher import ScriptBatcher
from server.room.race import Race, RaceError, RoomConfig, Status
from server.storage.codec import MoveWrite, parse_entry_wire
from server.storage.keys import DEADLINES, RoomKeys
from server.storage.store import RedisRoomStore


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RedisRoomStore]:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    yield RedisRoomStore(redis, batcher, event_log=8)
    await batcher.close()
    await redis.aclose()


async def running_room(store: RedisRoomStore) -> str:
    room = uuid.uuid4().hex[:8]
    race = Race(room=room, config=RoomConfig(game="shaula", countdown=0.0), seed=5, created_at=0.0)
    await store.create(race)
    await store.transact(room, lambda r: r.join("a", "h", 1.0)[1], 1.0)
    await store.transact(room, lambda r: r.join("b", "h", 1.0)[1], 1.0)
    applied = await store.transact(room, lambda r: r.start(0, 2.0), 2.0)
    assert [e.TYPE for e in applied.events] == ["countdown"]
    applied = await store.transact(room, lambda r: r.tick(2.0), 2.0)
    assert [e.TYPE for e in applied.events] == ["started"]
    return room


def move(room: str, seat: int, seq: int, expected: int, text: str = "t1 c1") -> MoveWrite:
    event = p.Progress(
        version=0,
        at=3.0,
        seat=seat,
        progress=0,
        moves=expected + 1,
        won=False,
        stuck=False,
        move=text,
    )
    return MoveWrite(room, 1, seat, seq, expected, text, 3.0, event, None, "h")


async def test_versions_count_every_event_without_gaps(store: RedisRoomStore) -> None:
    room = await running_room(store)
    loaded = await store.load(room)
    assert loaded is not None and loaded.version == 4 and loaded.race.status is Status.RUNNING
    events = await store.events_since(room, 0)
    assert events is not None
    assert [(e.version, e.TYPE) for e in events] == [
        (1, "joined"),
        (2, "joined"),
        (3, "countdown"),
        (4, "started"),
    ]


async def test_a_move_is_accepted_once_and_a_resend_gets_the_same_answer(
    store: RedisRoomStore,
) -> None:
    room = await running_room(store)
    first = await store.submit_move(move(room, 0, 1, 0))
    assert first.kind == "ok" and first.answer == p.Accepted(
        seq=1, move="t1 c1", progress=0, moves=1, won=False, stuck=False, version=5
    )
    again = await store.submit_move(move(room, 0, 1, 1))
    assert again.kind == "dup" and again.answer == first.answer
    assert await store.stored_answer(room, 0, 1) == first.answer
    assert [m for _, m in await store.moves(room, 0)] == ["t1 c1"]
    assert (await store.submit_move(move(room, 0, 1, 0))).kind == "dup"


async def test_stale_seq_and_count_mismatch_are_refused(store: RedisRoomStore) -> None:
    room = await running_room(store)
    assert (await store.submit_move(move(room, 0, 5, 0))).kind == "ok"
    assert (await store.submit_move(move(room, 0, 3, 1))).kind == "stale"
    mismatch = await store.submit_move(move(room, 0, 6, 0))
    assert (mismatch.kind, mismatch.detail) == ("count", "1")


async def test_concurrent_conflicting_moves_only_one_wins(store: RedisRoomStore) -> None:
    room = await running_room(store)
    results = await asyncio.gather(*(store.submit_move(move(room, 1, 10 + i, 0)) for i in range(5)))
    assert sorted(r.kind for r in results) == ["count"] * 4 + ["ok"]
    assert store.batcher.pipelines >= 1
    assert len(await store.moves(room, 1)) == 1


async def test_no_move_before_start_or_after_end(store: RedisRoomStore) -> None:
    room = uuid.uuid4().hex[:8]
    race = Race(room=room, config=RoomConfig(game="shaula"), seed=5, created_at=0.0)
    await store.create(race)
    await store.transact(room, lambda r: r.join("a", "h", 1.0)[1], 1.0)
    assert (await store.submit_move(move(room, 0, 1, 0))).kind == "closed"
    await store.transact(room, lambda r: r.start(0, 1.0), 1.0)
    assert (await store.submit_move(move(room, 0, 1, 0))).detail == "early"
    await store.transact(room, lambda r: r.tick(10.0), 10.0)
    await store.transact(room, lambda r: r.resign(0, 11.0), 11.0)
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.status is Status.FINISHED
    assert (await store.submit_move(move(room, 0, 1, 0))).kind == "closed"
    ttl = await store.redis.ttl(RoomKeys(room).race)
    assert 0 < ttl <= 3600  # finished rooms expire after room_ttl


async def test_a_room_in_its_lobby_with_nobody_seated_expires_sooner(redis_url: str) -> None:
    """A room nobody sits in (created and never joined, or left by everyone) lives
    `empty_ttl` after its last change, not a whole `lobby_ttl`: the lobby does not list it
    for a day. A room somebody sits in keeps `lobby_ttl`."""
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    store = RedisRoomStore(redis, batcher, lobby_ttl=86400.0, empty_ttl=600.0)
    try:
        room = uuid.uuid4().hex[:8]
        race = Race(room=room, config=RoomConfig(game="shaula"), seed=5, created_at=0.0)
        await store.create(race)
        keys = RoomKeys(room)
        assert 0 < await redis.ttl(keys.race) <= 600
        await store.transact(room, lambda r: r.join("a", "h", 1.0)[1], 1.0)
        assert await redis.ttl(keys.race) > 600
        await store.transact(room, lambda r: r.leave(0, 2.0), 2.0)
        assert 0 < await redis.ttl(keys.race) <= 600
        assert 0 < await redis.ttl(keys.meta) <= 600  # every key of the room alike
        # A ghost race's ghost is no one sitting in it: its room waits for a live player
        # as long as an empty room does, and so once that player has left.
        ghost = uuid.uuid4().hex[:8]
        config = RoomConfig(game="shaula", seats=2, ghost="3f2a9c1b", kind="ghost")
        race = Race(room=ghost, config=config, seed=5, created_at=0.0)
        race.add_ghost("ann's ghost", [[1.0, 1, 1, False, "t1 f1"]], 0.0)
        await store.create(race)
        assert 0 < await redis.ttl(RoomKeys(ghost).race) <= 600
        await store.transact(ghost, lambda r: r.join("a", "h", 1.0)[1], 1.0)
        assert await redis.ttl(RoomKeys(ghost).race) > 600
        await store.transact(ghost, lambda r: r.leave(0, 2.0), 2.0)
        assert 0 < await redis.ttl(RoomKeys(ghost).race) <= 600
        # A tournament's race room waits for its players as long as its round does.
        heat = f"{uuid.uuid4().hex[:8]}-0"
        config = RoomConfig(game="shaula", tournament=heat[:8])
        await store.create(Race(room=heat, config=config, seed=5, created_at=0.0))
        assert await redis.ttl(RoomKeys(heat).race) > 600
    finally:
        await batcher.close()
        await redis.aclose()


async def test_resigned_player_cannot_move(store: RedisRoomStore) -> None:
    room = await running_room(store)
    await store.transact(room, lambda r: r.resign(1, 3.0), 3.0)
    assert (await store.submit_move(move(room, 1, 1, 0))).kind == "out"


async def test_transitions_are_compare_and_set(store: RedisRoomStore) -> None:
    room = await running_room(store)
    results = await asyncio.gather(
        *(store.transact(room, lambda r: r.resign(0, 3.0), 3.0) for _ in range(3)),
        return_exceptions=True,
    )
    assert sum(1 for r in results if not isinstance(r, Exception)) == 1
    assert all(isinstance(r, RaceError) for r in results if isinstance(r, Exception))


async def test_the_log_is_capped_and_old_versions_need_a_snapshot(store: RedisRoomStore) -> None:
    room = await running_room(store)
    for seq in range(1, 11):
        assert (await store.submit_move(move(room, 0, seq, seq - 1))).kind == "ok"
    assert await store.events_since(room, 2) is None
    recent = await store.events_since(room, 12)
    assert recent is not None and [e.version for e in recent] == [13, 14]


async def test_deadlines_are_scheduled_before_the_write(store: RedisRoomStore) -> None:
    room = uuid.uuid4().hex[:8]
    race = Race(room=room, config=RoomConfig(game="shaula", countdown=5.0), seed=5, created_at=0.0)
    await store.create(race)
    await store.transact(room, lambda r: r.join("a", "h", 1.0)[1], 1.0)
    await store.transact(room, lambda r: r.start(0, 100.0), 100.0)
    assert await store.redis.zscore(DEADLINES, room) == 105.0
    assert room in [r for r, _ in await store.due(105.0, limit=10_000)]
    await store.unschedule(room, 105.0)
    assert await store.redis.zscore(DEADLINES, room) is None


async def test_moves_arriving_together_share_one_pipeline_behind_the_first(
    store: RedisRoomStore,
) -> None:
    """The first goes out at once (nothing was in flight), the seven after it together."""
    room = uuid.uuid4().hex[:8]
    race = Race(
        room=room,
        config=RoomConfig(game="shaula", seats=8, countdown=0.0),
        seed=5,
        created_at=0.0,
    )
    await store.create(race)
    for i in range(8):
        await store.transact(room, lambda r, i=i: r.join(str(i), "h", 1.0)[1], 1.0)
    await store.transact(room, lambda r: r.start(0, 2.0), 2.0)
    before = (store.batcher.pipelines, store.batcher.calls)
    results = await asyncio.gather(*(store.submit_move(move(room, s, 1, 0)) for s in range(8)))
    assert [r.kind for r in results] == ["ok"] * 8
    assert (store.batcher.pipelines - before[0], store.batcher.calls - before[1]) == (2, 8)
    versions = sorted(r.answer.version for r in results if r.answer)
    assert versions == list(range(versions[0], versions[0] + 8))


async def test_logged_entries_parse_back_with_their_wire_map(store: RedisRoomStore) -> None:
    room = await running_room(store)
    assert (await store.submit_move(move(room, 0, 1, 0))).kind == "ok"
    entries = await store.redis.lrange(RoomKeys(room).log, 0, -1)
    parsed = [parse_entry_wire(e) for e in entries]
    assert len(parsed) == 5 and all(x is not None for x in parsed)
    for item in parsed:
        assert item is not None
        event, wire = item
        assert list(wire.items()) == list(p.to_wire(event).items())  # same bytes when packed
    assert parse_entry_wire(b"7|not msgpack") is None


async def test_the_log_is_trimmed_in_steps_and_keeps_at_least_its_cap(
    store: RedisRoomStore, redis_url: str
) -> None:
    # The move script trims only when the log is an eighth over its cap (8 here: at 10).
    room = await running_room(store)
    redis = Redis.from_url(redis_url)
    lengths = []
    for seq in range(1, 31):
        assert (await store.submit_move(move(room, 0, seq, seq - 1))).kind == "ok"
        lengths.append(await redis.llen(RoomKeys(room).log))
    await redis.aclose()
    assert min(lengths[8:]) == 8 and max(lengths) == 9
    recent = await store.events_since(room, 26)
    assert recent is not None and [e.version for e in recent] == [27, 28, 29, 30, 31, 32, 33, 34]


async def test_a_new_round_starts_every_seat_from_no_moves(store: RedisRoomStore) -> None:
    room = await running_room(store)
    for seq in (1, 2):
        assert (await store.submit_move(move(room, 1, seq, seq - 1))).kind == "ok"
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.seats[1].moves == 2
    await store.transact(room, lambda r: r.resign(0, 4.0), 4.0)
    await store.transact(room, lambda r: r.resign(1, 4.0), 4.0)
    await store.transact(room, lambda r: r.rematch(0, 7, 5.0), 5.0)
    applied = await store.transact(room, lambda r: r.rematch(1, 7, 5.0), 5.0)
    assert applied.race.round == 2
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.seats[1].moves == 0
    assert await store.moves(room, 1) == []
    # Round 2 counts from 0 again; the old count (2) would be refused as "count".
    second = dataclasses.replace(move(room, 1, 3, 0), round=2, now=6.0)
    started = await store.transact(room, lambda r: r.tick(5.0), 5.0)
    assert started.race.status is Status.RUNNING
    assert (await store.submit_move(second)).kind == "ok"
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.seats[1].moves == 1


async def test_a_room_meta_is_a_hash_table_from_its_creation(store: RedisRoomStore) -> None:
    """A listpack is searched from its start for each field: move.lua's reads and writes
    of a room of 8 seats' meta cost a fifth of its instructions so (bench/script_call.py)."""
    room = await running_room(store)
    assert await store.redis.object("ENCODING", RoomKeys(room).meta) == b"hashtable"


async def test_a_seat_whose_last_seq_only_its_seq_hash_holds_is_judged_by_it(
    store: RedisRoomStore,
) -> None:
    """A process of the version before (a rolling deploy) keeps a seat's highest accepted
    seq in the seq hash alone: the move function falls back to it."""
    room = await running_room(store)
    keys = RoomKeys(room)
    assert (await store.submit_move(move(room, 0, 5, 0))).kind == "ok"
    assert await store.redis.hget(keys.meta, "q:0") == b"5"
    await store.redis.hdel(keys.meta, "q:0")
    assert (await store.submit_move(move(room, 0, 3, 1))).kind == "stale"
    assert (await store.submit_move(move(room, 0, 5, 1))).kind == "dup"
    assert await store.last_seq(room, 0) == 5
    assert (await store.submit_move(move(room, 0, 6, 1))).kind == "ok"
    assert await store.redis.hget(keys.seq(0), "last") == b"6"


async def test_a_transition_gets_through_while_a_racer_bursts_moves(store: RedisRoomStore) -> None:
    # Every accepted move counts as an event, so a transition read before it must be made
    # again. A racer's burst (60 frames at once by default, per socket) lands a move between
    # nearly every read and write: the other racer's resign must still be carried out, not
    # answered as a failure of the server.
    room = await running_room(store)
    burst = 400

    async def mover() -> None:
        for n in range(burst):
            await store.submit_move(move(room, 1, n + 1, n))

    moving = asyncio.create_task(mover())
    await asyncio.sleep(0.01)  # the burst is on
    applied = await store.transact(room, lambda r: r.resign(0, 3.0), 3.0)
    assert [e.TYPE for e in applied.events] == ["player_out"]
    await moving
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.seats[0].out == "resigned"
    assert loaded.race.seats[1].moves == burst


async def test_a_transition_that_never_finds_the_room_still_is_unavailable(
    store: RedisRoomStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing changed and the client should try again: `unavailable`, not `internal` (a
    # bug on the server's side, docs/protocol.md section 7).
    room = await running_room(store)

    async def conflict(*_: object, **__: object) -> None:
        return None

    monkeypatch.setattr(store, "_write", conflict)
    with pytest.raises(RaceError) as refused:
        await store.transact(room, lambda r: r.resign(0, 3.0), 3.0)
    assert refused.value.code is ErrorCode.UNAVAILABLE
