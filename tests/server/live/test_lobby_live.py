"""The live lobby: `lobby_watch` -> `lobby`, then `lobby_changed` as rooms are created,
seated, started, finished or expire, across server processes, coalesced and bounded.

The picture's rules are tested alone (pure, synchronous); the feed over real WebSockets,
a real Redis, and two real `python -m server` processes (a room created on one appears to
a watcher on the other).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from support.http import create_room
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p
from server.daily.rule import day_bounds
from server.live.frames import Outgoing
from server.live.lobby_live import LIMIT, MIN_GAP, LobbyLive, LobbyPicture
from server.room.race import Race, RoomConfig
from server.storage.keys import RoomKeys
from server.storage.memory_store import MemoryRoomStore

# ------------------------------------------------------------ the picture, alone


def _room(room: str, status: str = "lobby", created: float = 1.0, **extra: Any) -> p.LobbyRoom:
    entry: dict[str, Any] = {"id": room, "status": status, "created_at": created, "players": []}
    entry.update(extra)
    return entry


def test_a_later_rev_wins_whatever_the_order() -> None:
    picture = LobbyPicture()
    picture.update(2, _room("a", "countdown"))
    picture.update(1, _room("a", "lobby"))  # older, late: ignored
    assert picture.rooms["a"]["status"] == "countdown"
    picture.update(3, _room("a", "running"))
    assert picture.rooms["a"]["status"] == "running"


def test_a_daily_attempt_is_never_listed() -> None:
    picture = LobbyPicture()
    picture.update(1, _room("a", "running"))
    picture.update(1, _room("d", "running", kind="daily"))
    assert list(picture.rooms) == ["a"]


def test_a_room_on_a_daily_deal_is_listed_once_its_day_is_over() -> None:
    end = day_bounds(dt.date(2026, 12, 6))[1]
    now = [end - 1.0]
    picture = LobbyPicture(clock=lambda: now[0])
    deal = "2026-12-06 shaula"
    picture.update(1, _room("p", "running", kind="room", daily_deal=deal))
    picture.update(1, _room("a", "running", kind="room", daily_deal=None))
    assert set(picture.rooms) == {"a"}
    now[0] = end  # the next day: its line is everyone's
    picture.update(2, _room("p", "running", kind="room", daily_deal=deal))
    assert set(picture.rooms) == {"a", "p"}


def test_changes_are_coalesced_to_each_rooms_latest_state() -> None:
    picture = LobbyPicture()
    for rev in range(1, 50):
        picture.update(rev, _room("a", players=[{"seat": 0, "name": f"n{rev}"}]))
    picture.update(1, _room("b", created=2.0))
    picture.update(2, _room("b", "finished", created=2.0))
    changes = picture.take_changes()
    assert changes is not None
    assert [r["id"] for r in changes.rooms] == ["a"]
    assert changes.rooms[0]["players"][0]["name"] == "n49"
    assert changes.gone == ["b"]  # came and went between two flushes: told as gone
    assert picture.take_changes() is None


def test_the_list_keeps_the_newest_rooms_up_to_its_limit() -> None:
    picture = LobbyPicture(limit=3)
    for i in range(3):
        picture.update(1, _room(f"r{i}", created=10.0 + i))
    picture.take_changes()
    picture.update(1, _room("old", created=1.0))  # older than every listed room
    assert picture.take_changes() is None
    picture.update(1, _room("new", created=20.0))  # the oldest listed one makes room
    changes = picture.take_changes()
    assert changes is not None
    assert [r["id"] for r in changes.rooms] == ["new"] and changes.gone == ["r0"]
    assert [r["id"] for r in picture.state().rooms] == ["new", "r2", "r1"]
    assert picture.state().limit == 3


def test_a_reading_of_the_store_never_brings_back_an_older_state() -> None:
    picture = LobbyPicture()
    picture.update(1, _room("a"))
    began = picture.begin_reading()
    picture.update(5, _room("a", "finished"))  # pub/sub, while the reading runs
    picture.update(1, _room("b", created=3.0))  # a room created meanwhile
    picture.finish_reading(began, [(4, _room("a", "running"))])  # read before it finished
    assert "a" not in picture.rooms
    assert "b" in picture.rooms  # not in the reading, but heard of after it began


def test_a_reading_drops_rooms_gone_without_a_word() -> None:
    """A lobby room whose keys expired (TTL) publishes nothing: the next reading drops it."""
    picture = LobbyPicture()
    picture.update(1, _room("expired"))
    picture.update(1, _room("kept", created=2.0))
    picture.take_changes()
    began = picture.begin_reading()
    picture.finish_reading(began, [(1, _room("kept", created=2.0))])
    changes = picture.take_changes()
    assert changes is not None and changes.gone == ["expired"] and changes.rooms == []


# ------------------------------------------------------------ over the wire


class Lobby:
    """What a watcher knows: the rooms by id, from `lobby` and each `lobby_changed`."""

    def __init__(self, client: WsClient) -> None:
        self.client = client
        self.rooms: dict[str, p.LobbyRoom] = {}
        self.frames: list[tuple[float, p.Message]] = []

    async def watch(self) -> p.LobbyState:
        await self.client.send(p.LobbyWatch())
        state = await self.client.expect(p.LobbyState)
        self.rooms = {r["id"]: r for r in state.rooms}
        return state

    async def until(self, ok: Callable[[dict[str, p.LobbyRoom]], bool], limit: float = 10) -> None:
        deadline = time.monotonic() + limit
        while not ok(self.rooms):
            left = deadline - time.monotonic()
            assert left > 0, f"the lobby never got there: {sorted(self.rooms)}"
            message = await self.client.expect_any((p.LobbyChanged, p.LobbyState), left)
            self.frames.append((time.monotonic(), message))
            if isinstance(message, p.LobbyState):
                self.rooms = {r["id"]: r for r in message.rooms}
                continue
            assert isinstance(message, p.LobbyChanged)
            for room in message.rooms:
                self.rooms[room["id"]] = room
            for gone in message.gone:
                self.rooms.pop(gone, None)


def _status(room: str, status: str) -> Callable[[dict[str, p.LobbyRoom]], bool]:
    return lambda rooms: room in rooms and rooms[room]["status"] == status


async def test_a_room_created_on_another_process_appears_then_starts_then_leaves(
    redis_url: str, tmp_path: Path
) -> None:
    """Two real server processes on one Redis: the watcher is on A, everything else on B."""
    env = environment()
    a = ServerProcess(free_port(), env, "--redis-url", redis_url, log=tmp_path / "a.log")
    b = ServerProcess(free_port(), env, "--redis-url", redis_url, log=tmp_path / "b.log")
    try:
        await asyncio.gather(a.start(), b.start())
        async with WsClient.connect(a.url, binary=False) as watcher:
            lobby = Lobby(watcher)
            state = await lobby.watch()
            assert state.limit == LIMIT
            room = (await create_room(b.url, seats=2, countdown=0.2))["id"]
            await lobby.until(_status(room, "lobby"))
            entry = lobby.rooms[room]
            assert entry["seats"] == 2 and entry["players"] == [] and entry["game"] == "shaula"
            assert "progress" not in str(entry)  # no per-move data in a lobby entry
            async with WsClient.connect(b.url) as ann, WsClient.connect(b.url) as bo:
                await ann.join(room, "ann")
                await lobby.until(lambda rooms: len(rooms[room]["players"]) == 1)
                assert lobby.rooms[room]["players"][0]["name"] == "ann"
                await bo.join(room, "bo")
                await ann.send(p.Ready())
                await bo.send(p.Ready())
                await lobby.until(_status(room, "running"))
                await ann.send(p.Resign())
                await lobby.until(lambda rooms: rooms[room]["players"][0]["out"] == "resigned")
                await bo.send(p.Resign())
                await lobby.until(lambda rooms: room not in rooms)  # finished: gone
    finally:
        await asyncio.gather(a.stop(), b.stop())


@pytest.fixture(params=["one node", "cluster"])
def servers(request: pytest.FixtureRequest) -> MakeServer:
    """Server apps over one Redis node, or over a Redis Cluster (any node hears PUBLISH)."""
    name = "make_server" if request.param == "one node" else "make_cluster_server"
    made: MakeServer = request.getfixturevalue(name)
    return made


async def test_a_burst_of_changes_is_coalesced_for_each_watcher(servers: MakeServer) -> None:
    """40 rooms created on one server at once reach a watcher on another (on a cluster
    too) in a few coalesced frames, each room in its latest state."""
    one, two = await servers(room_rate=0), await servers(room_rate=0)
    async with WsClient.connect(one) as watcher:
        lobby = Lobby(watcher)
        await lobby.watch()
        began = time.monotonic()
        rooms = [r["id"] for r in await asyncio.gather(*(create_room(two) for _ in range(40)))]
        await lobby.until(lambda known: all(r in known for r in rooms))
        elapsed = time.monotonic() - began
        # 40 rooms (and as many transitions) in at most one frame per MIN_GAP.
        assert len(lobby.frames) <= elapsed / MIN_GAP + 2, (len(lobby.frames), elapsed)
        assert len(lobby.frames) < 40


async def test_a_room_that_expires_leaves_the_list(
    make_server: MakeServer, redis_url: str, monkeypatch: Any
) -> None:
    """Keys that expire publish nothing: the feed reads the rooms again (every
    RECONCILE_EVERY seconds; shortened here) and tells watchers the room is gone."""
    monkeypatch.setattr("server.live.lobby_live.RECONCILE_EVERY", 0.5)
    server = await make_server()
    async with WsClient.connect(server) as watcher:
        lobby = Lobby(watcher)
        await lobby.watch()
        room = (await create_room(server))["id"]
        await lobby.until(lambda rooms: room in rooms)
        redis = Redis.from_url(redis_url)
        keys = RoomKeys(room)
        await redis.delete(keys.meta, keys.race, keys.log)  # what its TTL would do
        await redis.aclose()
        await lobby.until(lambda rooms: room not in rooms)


async def test_unwatch_and_bad_input(server_url: str) -> None:
    async with WsClient.connect(server_url) as watcher:
        lobby = Lobby(watcher)
        await lobby.watch()
        await watcher.send(p.LobbyUnwatch())
        await create_room(server_url)
        assert not [m for m in await watcher.quiet(1.0) if isinstance(m, p.LobbyChanged)]
        # Watching again is a fresh list; a stray field is ignored, a wrong type is refused.
        await watcher.send_raw('{"type": "lobby_watch", "v": 1, "extra": 5}')
        assert isinstance(await watcher.expect(p.LobbyState), p.LobbyState)
        await watcher.send_raw('{"type": "lobby_watch", "v": 2}')
        error = await watcher.expect(p.Error)
        assert error.code == "bad_version"


# ------------------------------------------------------------ the shell, in memory


class _GatedStore(MemoryRoomStore):
    """The in-memory store whose listing waits for a gate: a reading held in progress."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def room_ids(self, limit: int = 200) -> list[str]:
        await self.gate.wait()
        return await super().room_ids(limit)


class _Socket:
    """What LobbyLive needs of a connection: somewhere to send."""

    def __init__(self) -> None:
        self.got: list[p.Message] = []

    def send(self, message: p.Message | Outgoing) -> None:
        self.got.append(message.message if isinstance(message, Outgoing) else message)


async def test_a_watcher_leaving_while_the_list_is_read_leaves_the_next_one_served() -> None:
    """A leaves while the first reading runs and B comes meanwhile: A's cancelled start must
    not undo B's (B got its list but then never heard of a change: its subscription was
    dropped by A's stop)."""
    store = _GatedStore()
    live = LobbyLive(store, store.feed)
    a, b = _Socket(), _Socket()
    watching_a = asyncio.ensure_future(live.handle(a, p.LobbyWatch()))  # type: ignore[arg-type]
    for _ in range(3):
        await asyncio.sleep(0)  # A's reading waits at the gate
    leaving = asyncio.ensure_future(live.closed(a))  # type: ignore[arg-type]
    watching_b = asyncio.ensure_future(live.handle(b, p.LobbyWatch()))  # type: ignore[arg-type]
    for _ in range(5):
        await asyncio.sleep(0)
    store.gate.set()
    await asyncio.gather(watching_a, leaving, watching_b)
    assert a.got == [] and [type(m) for m in b.got] == [p.LobbyState]
    await store.create(Race(room="r1", config=RoomConfig(game="shaula"), seed=1, created_at=1.0))
    await asyncio.sleep(MIN_GAP + 0.1)
    changed = [m for m in b.got if isinstance(m, p.LobbyChanged)]
    assert changed and [r["id"] for r in changed[0].rooms] == ["r1"]
    await live.close()


class _DownOnceStore(MemoryRoomStore):
    """The in-memory store whose first listing fails as Redis down does."""

    def __init__(self) -> None:
        super().__init__()
        self.down = True

    async def room_ids(self, limit: int = 200) -> list[str]:
        if self.down:
            self.down = False
            raise ConnectionError("Redis is down")
        return await super().room_ids(limit)


async def test_a_list_that_cannot_be_read_is_an_error_and_the_next_watch_works() -> None:
    store = _DownOnceStore()
    live = LobbyLive(store, store.feed)
    first, second = _Socket(), _Socket()
    await live.handle(first, p.LobbyWatch())  # type: ignore[arg-type]
    assert len(first.got) == 1 and isinstance(first.got[0], p.Error)
    assert first.got[0].code == "unavailable" and first.got[0].request == "lobby_watch"
    await live.handle(second, p.LobbyWatch())  # type: ignore[arg-type]
    assert [type(m) for m in second.got] == [p.LobbyState]
    await store.create(Race(room="r2", config=RoomConfig(game="shaula"), seed=1, created_at=2.0))
    await asyncio.sleep(MIN_GAP + 0.1)
    assert any(isinstance(m, p.LobbyChanged) for m in second.got)
    assert first.got[1:] == []  # the one refused is not watching
    await live.close()


async def test_a_watch_while_the_process_knows_redis_is_away_is_refused_at_once() -> None:
    """Redis frozen: its pub/sub connection stays open, but the process's own check of
    Redis has failed (its /healthz says so): `unavailable` at once, not after WATCH_WAIT."""
    store = _GatedStore()  # a listing that never comes, as from a frozen Redis
    away: list[str | None] = ["Redis: TimeoutError"]

    async def problem() -> str | None:
        return away[0]

    live = LobbyLive(store, store.feed, away=problem)
    watcher = _Socket()
    await asyncio.wait_for(live.handle(watcher, p.LobbyWatch()), 0.5)  # type: ignore[arg-type]
    assert [(type(m), getattr(m, "code", None)) for m in watcher.got] == [(p.Error, "unavailable")]
    away[0] = None  # Redis answers again
    store.gate.set()
    again = _Socket()
    await live.handle(again, p.LobbyWatch())  # type: ignore[arg-type]
    assert [type(m) for m in again.got] == [p.LobbyState]
    await live.close()
