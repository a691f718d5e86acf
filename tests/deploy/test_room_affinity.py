"""Room affinity, through the shipped balancer configs and two real server processes on one
Redis: the `ws` path a room's creation answers (`/ws?room=ID`) sends every socket of that
room to the same process (so one process, not up to min(8, N), parses each of its moves),
different rooms spread over the processes, a socket without the parameter still works, and
one naming a room whose process was killed is served by the other.

Which process holds a socket is read from each process's own `solrace_connections` metric
before and after the room's sockets open (every socket stays open to the end).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from support.balancers import haproxy, haproxy_config, nginx, nginx_config, wait_for_state
from support.http import create_room
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient

import protocol as p
from client_cli.net import ws_url
from client_cli.seat import Seat

# Rooms created through the balancer, and tournament-style ids "T-0", "T-1"... (differing
# in their last characters only), until both processes have some: at least the first
# number, at most the second. nginx places each process on its hash ring by its address,
# with a port drawn for each run: a dozen fixed heat ids all went to one process about one
# run in 350 (a hash without avalanche sends all 32 to one).
ROOMS = (16, 32)
HEATS = (12, 32)


@pytest.fixture
async def two_processes(redis_url: str, tmp_path: Path) -> AsyncIterator[list[ServerProcess]]:
    env = environment(REDIS_URL=redis_url, SOLRACE_ROOM_RATE="0")  # rooms from one address
    servers = [ServerProcess(free_port(), env, log=tmp_path / f"server-{i}.log") for i in (1, 2)]
    try:
        await asyncio.gather(*(server.start() for server in servers))
        yield servers
    finally:
        await asyncio.gather(*(server.stop() for server in servers))


async def _held(servers: list[ServerProcess]) -> list[int]:
    return [await server.connections() for server in servers]


async def _where(
    servers: list[ServerProcess], opening: Callable[[], Awaitable[object]], sockets: int
) -> int:
    """Run `opening` (which opens `sockets` sockets and keeps them); the index of the one
    process that got them all, or an assertion error naming how they were spread."""
    before = await _held(servers)
    await opening()
    grown = [after - was for after, was in zip(await _held(servers), before, strict=True)]
    assert sorted(grown) == [0, sockets], f"one room's sockets went {grown} over the processes"
    return grown.index(sockets)


async def check_affinity(front: str, servers: list[ServerProcess]) -> tuple[str, int]:
    """The checks above through the balancer at `front`; a room and the process it went to."""
    async with contextlib.AsyncExitStack() as sockets, aiohttp.ClientSession() as http:

        async def open_socket(path: str = "/ws") -> WsClient:
            return await sockets.enter_async_context(WsClient.connect(front, path=path))

        homes, rooms = [], []
        while len(rooms) < ROOMS[0] or (len(set(homes)) < 2 and len(rooms) < ROOMS[1]):
            body = {"game": "shaula", "seats": 2}
            async with http.post(f"{front}/rooms", json=body) as answer:
                assert answer.status == 201, await answer.text()
                created = await answer.json()
            room, ws = created["room"]["id"], created["ws"]
            assert ws == f"/ws?room={quote(room)}"
            rooms.append(room)

            async def a_racer_and_a_spectator(room: str = room, ws: str = ws) -> None:
                await (await open_socket(ws)).join(room, "ann")
                spy = await open_socket(ws)
                await spy.send(p.Watch(room=room))
                await spy.expect(p.Snapshot)

            homes.append(await _where(servers, a_racer_and_a_spectator, 2))
        assert sorted(set(homes)) == [0, 1], f"every room went to process {homes[0]}"

        # A tournament's heats are rooms "ID-0", "ID-1", ...: ids that differ only at their
        # end must spread too (a hash without avalanche puts them side by side on the ring).
        heat_homes: list[int] = []
        for heat in range(HEATS[1]):
            if heat >= HEATS[0] and len(set(heat_homes)) == 2:
                break
            path = f"/ws?room={quote(f'5be0c2d1-{heat}')}"
            heat_homes.append(await _where(servers, lambda path=path: open_socket(path), 1))
        assert sorted(set(heat_homes)) == [0, 1], f"every heat went to process {heat_homes[0]}"

        # Without the parameter (an older client): served as before, by either process.
        before = await _held(servers)
        plain = [await open_socket() for _ in range(4)]
        welcome = await plain[0].join(rooms[0], "bo")
        assert welcome.role == "player" and welcome.seat == 1
        for spy in plain[1:]:
            await spy.send(p.Watch(room=rooms[0]))
            await spy.expect(p.Snapshot)
        grown = [after - was for after, was in zip(await _held(servers), before, strict=True)]
        assert sum(grown) == 4 and min(grown) > 0, f"sockets without a room went {grown}"
        return rooms[0], homes[0]


async def check_failover(front: str, servers: list[ServerProcess], room: str, home: int) -> None:
    """Affinity is only an optimisation: with the room's process killed, a socket naming the
    room is served by the other one (the balancer tries the next process on its ring)."""
    servers[home].kill()
    other = servers[1 - home]
    before = await other.connections()
    async with WsClient.connect(front, path=p.socket_path(room)) as spy:
        await spy.send(p.Watch(room=room))
        snapshot = await spy.expect(p.Snapshot)
        assert snapshot.room["id"] == room
        assert await other.connections() == before + 1


async def test_haproxy_sends_a_rooms_sockets_to_one_process(
    tmp_path: Path, two_processes: list[ServerProcess]
) -> None:
    front, dead = free_port(), free_port()
    config = haproxy_config(tmp_path, front, [*(s.port for s in two_processes), dead])
    sock = tmp_path / "stats.sock"
    with haproxy(config, sock, front, tmp_path / "haproxy.log"):
        await wait_for_state(sock, "s1", "UP")
        await wait_for_state(sock, "s2", "UP")
        await wait_for_state(sock, "s3", "DOWN")
        room, home = await check_affinity(f"http://127.0.0.1:{front}", two_processes)
        await check_failover(f"http://127.0.0.1:{front}", two_processes, room, home)


async def test_nginx_sends_a_rooms_sockets_to_one_process(
    tmp_path: Path, two_processes: list[ServerProcess]
) -> None:
    front = free_port()
    config = nginx_config(tmp_path, front, [*(s.port for s in two_processes), free_port()])
    with nginx(config, front):
        room, home = await check_affinity(f"http://127.0.0.1:{front}", two_processes)
        await check_failover(f"http://127.0.0.1:{front}", two_processes, room, home)


async def test_the_terminal_clients_sockets_of_a_room_go_to_one_process(
    tmp_path: Path, two_processes: list[ServerProcess]
) -> None:
    """client_cli's Seat (the race and watch screens, the solver bot, tournament races)
    names the room in its socket path; a quick match's socket, opened before its room
    exists, names none, and its reconnects name the room it was matched into."""
    front = free_port()
    config = haproxy_config(tmp_path, front, [*(s.port for s in two_processes), free_port()])
    sock = tmp_path / "stats.sock"
    url = f"http://127.0.0.1:{front}"
    with haproxy(config, sock, front, tmp_path / "haproxy.log"):
        for server in ("s1", "s2"):
            await wait_for_state(sock, server, "UP")
        seats: list[Seat] = []
        try:
            for _ in range(3):
                room = (await create_room(url, seats=2))["id"]

                async def racer_and_spectator(room: str = room) -> None:
                    seats.append(Seat(url, room.upper(), "ann"))  # a code typed in capitals
                    seats.append(Seat(url, room, spectator=True))
                    for seat in seats[-2:]:
                        await seat.start()

                await _where(two_processes, racer_and_spectator, 2)
            quick = [Seat(url, "", name, quick="shaula") for name in ("ann", "bo")]
            seats += quick
            assert {seat.link.url for seat in quick} == {ws_url(url)}
            await asyncio.gather(*(seat.start() for seat in quick))
            # start() returns once each is queued; the first one's match may come later (on
            # a loaded machine it did, after this line read its room as still empty).
            async with asyncio.timeout(15):
                while not all(seat.view.room for seat in quick):
                    await asyncio.sleep(0.02)
            room = quick[0].view.room
            assert room and quick[1].view.room == room
            assert {seat.link.url for seat in quick} == {ws_url(url, room)}
        finally:
            await asyncio.gather(*(seat.close() for seat in seats))


async def test_nginx_sends_a_rooms_sockets_to_its_process_again_once_it_is_back(
    tmp_path: Path, two_processes: list[ServerProcess]
) -> None:
    """A process that nginx saw refuse connections (killed, then started again) gets its
    rooms' sockets back together once it is back: nginx clears a peer's failures only when
    a request to it *ends*, which a WebSocket does not do for as long as it races, so a
    remembered failure (`max_fails`) would send one socket to it as a probe every
    `fail_timeout` and the rest of its rooms' sockets, a room's split among them, elsewhere."""
    front = free_port()
    config = nginx_config(tmp_path, front, [*(s.port for s in two_processes), free_port()])
    url = f"http://127.0.0.1:{front}"
    with nginx(config, front):
        async with contextlib.AsyncExitStack() as sockets:

            async def open_socket(room: str) -> WsClient:
                path = p.socket_path(room)
                return await sockets.enter_async_context(WsClient.connect(url, path=path))

            # Rooms whose sockets go to the first process (the hash ring's choice).
            homed: list[str] = []
            for n in range(40):
                room = f"r{n}"
                if await _where(two_processes, lambda room=room: open_socket(room), 1) == 0:
                    homed.append(room)
            assert len(homed) >= 3, f"only {homed} of 40 rooms went to the first process"
            await sockets.aclose()

            killed = two_processes[0]
            killed.kill()
            assert killed.process is not None
            await killed.process.wait()
            for room in homed[:2]:  # refused there: served by the other, a failure noted
                async with WsClient.connect(url, path=p.socket_path(room)):
                    pass
            await killed.start()
            await asyncio.sleep(6)  # past the configs' fail_timeout (5 s)

        async with contextlib.AsyncExitStack() as sockets:

            async def two_sockets(room: str) -> None:
                for _ in range(2):
                    await sockets.enter_async_context(
                        WsClient.connect(url, path=p.socket_path(room))
                    )

            for room in homed[:3]:
                home = await _where(two_processes, lambda room=room: two_sockets(room), 2)
                assert home == 0, f"room {room}'s sockets went to the other process"


@pytest.fixture
async def three_processes(redis_url: str, tmp_path: Path) -> AsyncIterator[list[ServerProcess]]:
    env = environment(REDIS_URL=redis_url)
    servers = [ServerProcess(free_port(), env, log=tmp_path / f"server-{i}.log") for i in (1, 2, 3)]
    try:
        await asyncio.gather(*(server.start() for server in servers))
        yield servers
    finally:
        await asyncio.gather(*(server.stop() for server in servers))


async def _sockets_open(url: str, rooms: list[str]) -> list[str]:
    """Open a socket for each room, one after the other; the rooms whose socket failed."""
    failed = []
    for room in rooms:
        try:
            async with WsClient.connect(url, path=p.socket_path(room)):
                pass
        except aiohttp.WSServerHandshakeError:
            failed.append(room)
    return failed


@pytest.mark.parametrize("balancer", ["haproxy", "nginx"])
async def test_two_processes_killed_at_once_leave_every_room_served(
    tmp_path: Path, three_processes: list[ServerProcess], balancer: str
) -> None:
    """Two of three processes killed together, their rooms' sockets coming back at once,
    before any health check has seen them go: each is served by the one left. HAProxy's
    redispatch on a hash avoids only the server it has just tried, so with its retries it
    went from one dead process to the other and back, and answered 503."""
    front = free_port()
    ports = [s.port for s in three_processes]
    url = f"http://127.0.0.1:{front}"
    rooms = [f"k{n}" for n in range(12)]
    if balancer == "haproxy":
        sock = tmp_path / "stats.sock"
        running = haproxy(haproxy_config(tmp_path, front, ports), sock, front, tmp_path / "h.log")
    else:
        running = nginx(nginx_config(tmp_path, front, ports), front)
    with running:
        if balancer == "haproxy":
            for server in ("s1", "s2", "s3"):
                await wait_for_state(sock, server, "UP")
        assert await _sockets_open(url, rooms) == []
        for killed in three_processes[:2]:
            killed.kill()
        for killed in three_processes[:2]:
            assert killed.process is not None
            await killed.process.wait()
        assert await _sockets_open(url, rooms) == []
