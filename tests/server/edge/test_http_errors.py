"""HTTP edges: every error is a JSON body with a code (never a 500 or plain text), null
fields take their defaults, and POST /rooms is rate limited per client address."""

import re
from typing import Any

import aiohttp
import pytest
from support.servers import MakeServer


async def call(
    method: str, url: str, data: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, dict[str, str]]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, url, data=data, headers=headers) as r,
    ):
        assert r.content_type == "application/json", (r.status, await r.text())
        return r.status, await r.json(), dict(r.headers)


@pytest.mark.parametrize(
    ("method", "path", "data", "status", "code"),
    [
        ("POST", "/rooms", b"[" * 30_000 + b"]" * 30_000, 400, "bad_request"),
        ("POST", "/rooms", b"\xff\xfe{", 400, "bad_request"),
        ("POST", "/rooms", b'{"game": "shaula", "pad": NaN}', 400, "bad_request"),  # no JSON
        ("POST", "/rooms", b"{" + b" " * 70_000 + b"}", 413, "too_big"),
        ("GET", "/nowhere", None, 404, "not_found"),
        ("DELETE", "/rooms", None, 405, "bad_request"),
        ("FOO", "/rooms", None, 405, "bad_request"),  # a method no HTTP parser knows
        ("GET", "/ws", None, 400, "bad_request"),  # no WebSocket upgrade
        ("GET", "/rooms/nope/results", None, 404, "unknown_room"),
    ],
)
async def test_http_errors_are_json_with_a_code(
    server_url: str, method: str, path: str, data: bytes | None, status: int, code: str
) -> None:
    got, body, _ = await call(method, server_url + path, data)
    assert (got, body["error"]["code"]) == (status, code)
    message = body["error"]["message"]
    assert message and not message.startswith(str(status))  # says what is wrong
    if status == 405:
        assert "GET" in message and "POST" in message  # what is allowed


@pytest.mark.parametrize(
    "path",
    [
        "/leaderboard/shaula?limit=1&limit=2",
        "/leaderboard/shaula?by=time&seed=5&by=rating",
        "/players/nobody?page=1&page=2",
        "/tournaments/nope/standings?format=csv&format=json",
    ],
)
async def test_a_query_option_given_twice_is_a_bad_request(server_url: str, path: str) -> None:
    """Which of the two would count is anybody's guess: the request says so instead of the
    answer silently following the first."""
    got, body, _ = await call("GET", server_url + path)
    assert (got, body["error"]["code"]) == (400, "bad_request"), body
    option = path.rpartition("&")[2].partition("=")[0]
    assert (
        f"'{option}'" in body["error"]["message"] and "more than once" in body["error"]["message"]
    )


@pytest.mark.parametrize("path", ["/rooms", "/players", "/sign-in", "/link", "/tournaments"])
async def test_a_body_in_a_charset_nobody_knows_is_a_bad_request(
    server_url: str, path: str
) -> None:
    headers = {"Content-Type": "application/json; charset=utf-99"}
    got, body, _ = await call("POST", server_url + path, b'{"game": "shaula"}', headers)
    assert (got, body["error"]["code"]) == (400, "bad_request"), body


async def test_a_number_of_thousands_of_digits_is_refused_for_its_field(server_url: str) -> None:
    """JSON carries an integer of any length; one of more digits than Python reads at once
    (4,300) is out of range for its field as a shorter one is, not a body that is no JSON."""
    for digits in (4000, 4400, 60000):
        body = b'{"game": "shaula", "seed": ' + b"9" * digits + b"}"
        status, answer, _ = await call("POST", server_url + "/rooms", body)
        assert (status, answer["error"]["code"]) == (400, "bad_request"), digits
        assert answer["error"]["message"].startswith("seed must be"), (digits, answer)


async def test_null_fields_take_their_defaults(server_url: str) -> None:
    body = (
        b'{"game": "shaula", "seed": null, "seats": null, "undo": null, "hints": null,'
        b' "time_limit": null, "spectator_delay": null, "grace": null, "countdown": null}'
    )
    status, answer, _ = await call("POST", server_url + "/rooms", body)
    assert status == 201, answer
    room = answer["room"]
    assert (room["seats"], room["undo"], room["hints"]) == (2, True, False)
    assert (room["time_limit"], room["spectator_delay"], room["seed_mode"]) == (None, 0, "random")
    assert room["grace"] == 30.0  # the server's default, not 0


async def test_creating_rooms_is_rate_limited_per_client(make_server: MakeServer) -> None:
    url = await make_server(room_rate=3.0)
    body = b'{"game": "shaula"}'
    # Behind a reverse proxy on this machine: the address the proxy appended is the client.
    ann = {"X-Forwarded-For": "203.0.113.9, 198.51.100.7"}
    for _ in range(3):
        assert (await call("POST", url + "/rooms", body, ann))[0] == 201
    status, answer, headers = await call("POST", url + "/rooms", body, ann)
    assert status == 429 and answer["error"]["code"] == "rate_limited"
    assert int(headers["Retry-After"]) >= 1
    # Another client is not held back by the first one's limit ...
    bo = {"X-Forwarded-For": "198.51.100.8"}
    assert (await call("POST", url + "/rooms", body, bo))[0] == 201
    # ... nor is someone on the machine itself (no proxy header).
    for _ in range(5):
        assert (await call("POST", url + "/rooms", body))[0] == 201


SAMPLE = re.compile(r'^([a-z_:][a-z0-9_:]*)(\{(?:le="([^"]+)"|[a-z_]+="[a-z0-9_]*")\})? (\S+)$')


async def test_metrics_are_prometheus_text(server_url: str) -> None:
    async with aiohttp.ClientSession() as http, http.get(server_url + "/metrics") as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        text = await r.text()
    kinds: dict[str, str] = {}
    samples: dict[str, list[tuple[str | None, float]]] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            kinds[name] = kind
        elif not line.startswith("# HELP "):
            match = SAMPLE.match(line)
            assert match, line
            samples.setdefault(match.group(1), []).append((match.group(3), float(match.group(4))))
    for name in samples:  # every sample belongs to a declared family
        assert name in kinds or name.rsplit("_", 1)[0] in kinds, name
    expected = {
        "solrace_rooms_active": "gauge",
        "solrace_connections": "gauge",
        "solrace_moves_accepted_total": "counter",
        "solrace_moves_refused_total": "counter",
        "solrace_move_latency_seconds": "histogram",
    }
    assert expected.items() <= kinds.items()
    buckets = samples["solrace_move_latency_seconds_bucket"]
    assert buckets[-1][0] == "+Inf"
    assert [b for _, b in buckets] == sorted(b for _, b in buckets)  # cumulative
    assert buckets[-1][1] == samples["solrace_move_latency_seconds_count"][0][1]


async def test_a_browser_at_a_path_that_is_no_page_gets_the_page_saying_so(
    server_url: str,
) -> None:
    """A browser's navigation (HTML asked for first) to a path that is neither a page nor
    an API gets the web client, which says there is no such page, with status 404; any
    other client the JSON error, as before."""
    html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server_url}/nowhere", headers={"Accept": html}) as answer:
            assert answer.status == 404
            assert answer.content_type == "text/html"
            assert '<main id="main"' in await answer.text()
            assert answer.headers.get("Vary") == "Accept"
        async with http.get(f"{server_url}/nowhere") as answer:
            assert answer.status == 404
            assert (await answer.json())["error"]["code"] == "not_found"
        # An API path's own 404 stays the API's, for a browser too.
        async with http.get(f"{server_url}/rooms/nosuchroom", headers={"Accept": html}) as answer:
            assert answer.status == 404
            assert (await answer.json())["error"]["code"] == "unknown_room"
        async with http.get(f"{server_url}/static/nosuch.js", headers={"Accept": html}) as answer:
            assert answer.status == 404 and answer.content_type == "application/json"


UPGRADE = {"Upgrade": "websocket", "Connection": "Upgrade"}
KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455's example: 16 bytes


@pytest.mark.parametrize(
    ("headers", "status", "words"),
    [
        ({}, 400, "Upgrade: websocket"),
        ({**UPGRADE, "Sec-WebSocket-Key": KEY, "Sec-WebSocket-Version": "8"}, 426, "version 13"),
        ({**UPGRADE, "Sec-WebSocket-Key": KEY}, 426, "version 13"),
        ({**UPGRADE, "Sec-WebSocket-Version": "13"}, 400, "Sec-WebSocket-Key"),
        ({**UPGRADE, "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "short"}, 400, "16"),
    ],
)
async def test_a_websocket_upgrade_the_server_cannot_take_says_what_to_send(
    server_url: str, headers: dict[str, str], status: int, words: str
) -> None:
    """A request to /ws that is no upgrade RFC 6455 allows is refused `bad_request` in
    words a client's author can act on (aiohttp's own said "Handshake error: None"), and a
    version other than 13 is answered 426 with the version this server speaks, as section
    4.2.2 of the RFC asks (drafts 7 and 8 were taken)."""
    got, body, answered = await call("GET", f"{server_url}/ws", headers=headers)
    assert (got, body["error"]["code"]) == (status, "bad_request"), body
    assert words in body["error"]["message"], body
    if status == 426:
        assert answered["Sec-WebSocket-Version"] == "13"
