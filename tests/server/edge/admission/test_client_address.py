"""Whose address per-client limits count by (`--trusted-proxies`), and the room-creation
limit kept in Redis for every process at once."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.balancers import haproxy, haproxy_config, nginx, nginx_config
from support.http import post_json
from support.ports import free_port
from support.servers import MakeServer

from server.edge.admission.client_address import client_address
from server.settings import Settings, SettingsError, parse_trusted_proxies

LOCAL = parse_trusted_proxies("127.0.0.1,::1")


def test_only_what_trusted_proxies_added_names_the_client() -> None:
    # A peer that is no trusted proxy is the client, whatever header it sends.
    assert client_address("203.0.113.9", None, LOCAL) == "203.0.113.9"
    assert client_address("203.0.113.9", "1.2.3.4", LOCAL) == "203.0.113.9"
    # Behind a trusted proxy: the entry it added (the last), not what the client wrote.
    assert client_address("127.0.0.1", "1.2.3.4, 5.6.7.8", LOCAL) == "5.6.7.8"
    assert client_address("::1", "5.6.7.8", LOCAL) == "5.6.7.8"
    # A chain of trusted proxies is walked over; the first untrusted entry is the client.
    chain = parse_trusted_proxies("127.0.0.1, 10.0.0.0/8")
    assert client_address("127.0.0.1", "6.6.6.6, 5.6.7.8, 10.1.2.3", chain) == "5.6.7.8"
    assert client_address("127.0.0.1", "5.6.7.8, 10.1.2.3", LOCAL) == "10.1.2.3"
    # A client that came through the proxy from this machine is still limited ...
    assert client_address("127.0.0.1", "127.0.0.5", LOCAL) == "127.0.0.5"
    assert client_address("127.0.0.1", "127.0.0.1", LOCAL) == "127.0.0.1"
    # ... but a direct local connection is not, and then a header proves nothing.
    assert client_address("127.0.0.1", None, LOCAL) is None
    assert client_address("127.0.0.1", "5.6.7.8", ()) is None
    assert client_address(None, "5.6.7.8", LOCAL) is None
    # Garbage where the proxy's entry should be: the proxy itself is the nearest sure address.
    assert client_address("10.0.0.1", "5.6.7.8, junk", chain) == "10.0.0.1"
    assert client_address("::ffff:203.0.113.9", None, LOCAL) == "203.0.113.9"


def test_trusted_proxies_is_a_setting_and_an_environment_variable() -> None:
    env = {"SOLRACE_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1"}
    assert Settings.from_env(env).trusted_proxies == "10.0.0.0/8, 192.0.2.1"
    assert Settings().trusted_proxies == "127.0.0.1,::1"
    with pytest.raises(SettingsError, match="trusted_proxies"):
        Settings(trusted_proxies="10.0.0.0/8, proxy.example")


async def post_room(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST /rooms with `headers`: the status and the answer."""
    return await post_json(url + "/rooms", {"game": "shaula"}, headers)


_ADDRESSES = itertools.count()


def unique_address() -> str:
    """An address no other call in this process gave: two clients of one test are two
    (drawn at random, they were the same one time in 65,024, and the second was refused)."""
    n = next(_ADDRESSES)
    return f"198.51.{n // 254 % 256}.{n % 254 + 1}"


async def test_a_forged_header_behind_a_trusted_proxy_does_not_escape_the_limit(
    make_server: MakeServer,
) -> None:
    url = await make_server(room_rate=3.0)
    real = unique_address()
    statuses = []
    for i in range(6):  # the client rotates what it writes; the proxy appends the truth
        forged = f"203.0.113.{i}"
        statuses.append((await post_room(url, {"X-Forwarded-For": f"{forged}, {real}"}))[0])
    assert statuses == [201, 201, 201, 429, 429, 429]


async def test_the_header_of_an_untrusted_peer_is_ignored(make_server: MakeServer) -> None:
    # This loopback peer is no configured proxy: it is a direct local client (not limited),
    # and the addresses it claims are not charged with rooms.
    url = await make_server(room_rate=1.0, trusted_proxies="192.0.2.1")
    claimed = unique_address()
    for _ in range(3):
        assert (await post_room(url, {"X-Forwarded-For": claimed}))[0] == 201
    trusting = await make_server(room_rate=1.0)
    assert (await post_room(trusting, {"X-Forwarded-For": claimed}))[0] == 201


async def test_the_room_limit_is_shared_by_every_process(make_server: MakeServer) -> None:
    first, second = await make_server(room_rate=2.0), await make_server(room_rate=2.0)
    client = {"X-Forwarded-For": unique_address()}
    assert (await post_room(first, client))[0] == 201
    assert (await post_room(second, client))[0] == 201
    for url in (first, second):  # two processes do not mean twice the limit
        status, answer = await post_room(url, client)
        assert status == 429 and answer["error"]["code"] == "rate_limited"
    assert (await post_room(second, {"X-Forwarded-For": unique_address()}))[0] == 201


async def _rooms_from(front: int, source: str, times: int) -> list[int]:
    """POST /rooms `times` through a balancer, from `source`, each with a new forged header."""
    statuses = []
    connector = aiohttp.TCPConnector(local_addr=(source, 0), force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:
        for i in range(times):
            forged = {"X-Forwarded-For": f"203.0.113.{i}"}
            async with http.post(
                f"http://127.0.0.1:{front}/rooms", json={"game": "shaula"}, headers=forged
            ) as r:
                statuses.append(r.status)
    return statuses


def _loopback_source() -> str:
    # A loopback address of its own, so that this test's count in the shared Redis is its own.
    return f"127.{random.randrange(1, 255)}.{random.randrange(256)}.{random.randrange(2, 255)}"


@pytest.mark.parametrize("balancer", ["haproxy", "nginx"])
async def test_the_shipped_balancers_replace_a_forged_header(
    tmp_path: Path, make_server: MakeServer, balancer: str
) -> None:
    # Every loopback address is a trusted proxy here, the client's own too: were the header
    # appended to, the entry the client forged would be the first untrusted one, believed.
    url = await make_server(room_rate=3.0, trusted_proxies="127.0.0.0/8")
    port = int(url.rsplit(":", 1)[1])
    front = free_port()
    if balancer == "haproxy":
        config = haproxy_config(tmp_path, front, [port] * 3)
        running = haproxy(config, tmp_path / "stats.sock", front, tmp_path / "haproxy.log")
    else:
        running = nginx(nginx_config(tmp_path, front, [port] * 3), front)
    with running:
        # Rotating the header it sends gains the client nothing: the balancer replaces it.
        assert await _rooms_from(front, _loopback_source(), 5) == [201] * 3 + [429] * 2
