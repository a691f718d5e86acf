"""One checklist, two runners: the same cases through `checklist.prefilter` (Python, on a
race) and through move.lua (Redis, on the stored race) give the same verdict; and the
script names no verdict the enum does not have."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio import Redis
from support.paths import ROOT

import protocol as p
from server.redis_io.batcher import ScriptBatcher
from server.room.checklist import LUA_VERDICTS, Verdict, lua_prelude, prefilter
from server.room.race import Outcome, Race, RoomConfig
from server.storage.codec import MoveWrite
from server.storage.store import RedisRoomStore

LUA = ROOT / "server" / "storage" / "lua" / "move.lua"


def test_the_script_returns_only_the_enums_verdicts() -> None:
    source = LUA.read_text()
    used = set(re.findall(r"\bV\.([A-Z]+)\b", source))
    assert used == {v.name for v in LUA_VERDICTS}  # every verdict is reachable, no other
    assert "return {'" not in source  # no verdict spelled out by hand
    assert lua_prelude().startswith("local V = {OK='ok', SEAT='seat'")


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RedisRoomStore]:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    yield RedisRoomStore(redis, batcher)
    await batcher.close()
    await redis.aclose()


Setup = Callable[[Race], object]


def nothing(race: Race) -> None:
    return None


def start(race: Race) -> None:
    race.start(0, 2.0)


def run(race: Race) -> None:
    race.start(0, 2.0)
    race.tick(3.0)  # the countdown is over: running until 63.0


def resign_bo(race: Race) -> None:
    run(race)
    race.resign(1, 3.0)


def ann_leaves_cy_sits(race: Race) -> None:
    race.leave(0, 1.5)
    race.join("cy", "hc", 1.5)
    run(race)


# (what happens to the race, seat, token, seq, now, the prefilter's verdict, Lua's)
CASES: list[tuple[str, Setup, int, str, int, float, Verdict, Verdict]] = [
    ("lobby", nothing, 0, "ha", 1, 3.0, Verdict.CLOSED, Verdict.CLOSED),
    ("counting down, too early", start, 0, "ha", 1, 1.0, Verdict.CLOSED, Verdict.CLOSED),
    ("start time reached", start, 0, "ha", 1, 3.0, Verdict.OK, Verdict.OK),
    ("running", run, 0, "ha", 1, 3.0, Verdict.OK, Verdict.OK),
    ("time up", run, 0, "ha", 1, 99.0, Verdict.CLOSED, Verdict.CLOSED),
    ("another seat's token", run, 0, "hb", 1, 3.0, Verdict.SEAT, Verdict.SEAT),
    ("no such seat", run, 5, "ha", 1, 3.0, Verdict.SEAT, Verdict.SEAT),
    ("the seat given up", ann_leaves_cy_sits, 0, "ha", 1, 3.0, Verdict.SEAT, Verdict.SEAT),
    ("the new holder", ann_leaves_cy_sits, 0, "hc", 1, 3.0, Verdict.OK, Verdict.OK),
    ("out", resign_bo, 1, "hb", 1, 3.0, Verdict.OUT, Verdict.OUT),
    ("seq 2^63 - 1", run, 0, "ha", 2**63 - 1, 3.0, Verdict.OK, Verdict.OK),
]


@pytest.mark.parametrize(("name", "setup", "seat", "token", "seq", "now", "python", "lua"), CASES)
async def test_prefilter_and_script_agree(
    store: RedisRoomStore,
    name: str,
    setup: Setup,
    seat: int,
    token: str,
    seq: int,
    now: float,
    python: Verdict,
    lua: Verdict,
) -> None:
    room = uuid.uuid4().hex[:8]
    config = RoomConfig(game="shaula", countdown=1.0, time_limit=60.0)
    await store.create(Race(room=room, config=config, seed=5, created_at=0.0))
    await store.transact(room, lambda r: r.join("ann", "ha", 1.0)[1], 1.0)
    await store.transact(room, lambda r: r.join("bo", "hb", 1.0)[1], 1.0)

    def change(race: Race) -> Outcome:
        setup(race)
        return Outcome(changed=True)

    await store.transact(room, change, 2.0)
    loaded = await store.load(room)
    assert loaded is not None
    assert prefilter(loaded.race, seat, token, seq, 0, now) is python
    result = await store.submit_move(move(room, seat, seq, now, token))
    assert result.kind is lua, result


def move(room: str, seat: int, seq: int, now: float, token: str) -> MoveWrite:
    event = p.Progress(
        version=0, at=now, seat=seat, progress=0, moves=1, won=False, stuck=False, move="t1 c1"
    )
    return MoveWrite(room, 1, seat, seq, 0, "t1 c1", now, event, None, token)


async def test_re_sends_and_stale_seqs_agree(store: RedisRoomStore) -> None:
    """The prefilter cannot tell a re-send from a stale seq (it says DUP for both, and
    the store's answer decides); the script can."""
    room = uuid.uuid4().hex[:8]
    await store.create(
        Race(room=room, config=RoomConfig("shaula", countdown=0.0), seed=5, created_at=0.0)
    )
    await store.transact(room, lambda r: r.join("ann", "ha", 1.0)[1], 1.0)
    await store.transact(room, lambda r: r.start(0, 2.0), 2.0)
    await store.transact(room, lambda r: r.tick(2.0), 2.0)
    big = 2**60
    assert (await store.submit_move(move(room, 0, big, 3.0, "ha"))).kind is Verdict.OK
    loaded = await store.load(room)
    assert loaded is not None
    for seq in (big, big - 1, 1):
        assert prefilter(loaded.race, 0, "ha", seq, big, 3.0) is Verdict.DUP
    assert (await store.submit_move(move(room, 0, big, 3.0, "ha"))).kind is Verdict.DUP
    for seq in (big - 1, 1, -5):
        assert (await store.submit_move(move(room, 0, seq, 3.0, "ha"))).kind is Verdict.STALE
    # Above 2^53 a double cannot tell big + 1 from big: the script compares exactly.
    write = move(room, 0, big + 1, 3.0, "ha")
    write.expected, write.event = (
        1,
        p.Progress(
            version=0, at=3.0, seat=0, progress=0, moves=2, won=False, stuck=False, move="t1 c1"
        ),
    )
    assert (await store.submit_move(write)).kind is Verdict.OK
