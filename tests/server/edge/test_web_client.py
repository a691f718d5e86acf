"""The web client's server side: pages and static files served by the race server, the
TV's choice of race, the game list. (The pages themselves are tested in tests/server/edge/web.)"""

from __future__ import annotations

import gzip

import aiohttp
import pytest
from support.http import create_room, get_json, get_text
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from server.edge.web_client import PAGES, WEB_DIR
from server.room.tv import closest_race


def _room(room_id: str, status: str, *progress: int, start_at: float = 0.0) -> dict[str, object]:
    players = [{"seat": i, "progress": p} for i, p in enumerate(progress)]
    return {"id": room_id, "status": status, "players": players, "start_at": start_at}


def test_the_tv_shows_the_race_whose_leaders_are_closest() -> None:
    rooms = [
        _room("far", "running", 40, 10),
        _room("near", "running", 12, 11),
        _room("lobby", "lobby", 0, 0),
        _room("alone", "running", 30),
    ]
    assert closest_race(rooms)["id"] == "near"  # type: ignore[index]
    # Equally close: the one further along; then the one that started last.
    rooms.append(_room("later", "running", 30, 29))
    assert closest_race(rooms)["id"] == "later"  # type: ignore[index]
    rooms.append(_room("latest", "running", 30, 29, start_at=5.0))
    assert closest_race(rooms)["id"] == "latest"  # type: ignore[index]
    # A lone racer only when nothing else runs; nothing running: None.
    assert closest_race([_room("alone", "running", 3)])["id"] == "alone"  # type: ignore[index]
    assert closest_race([_room("lobby", "lobby", 0, 0)]) is None


async def test_every_page_is_the_client_shell_with_a_strict_policy(server_url: str) -> None:
    async with aiohttp.ClientSession() as http:
        pages = ("/", "/play/abc", "/watch/abc", "/tv", "/rules", "/rules/shaula", "/tour/abc")
        for path in (*pages, "/replay/abc", "/daily/2026-12-01"):
            async with http.get(server_url + path) as answer:
                assert answer.status == 200, path
                assert "text/html" in answer.headers["Content-Type"]
                assert '<script type="module" src="/static/app.js">' in await answer.text()
                policy = answer.headers["Content-Security-Policy"]
                assert "default-src 'self'" in policy and "connect-src 'self'" in policy
        assert len(PAGES) == 13
        # /daily is the page to a browser, the API's JSON to anyone else.
        async with http.get(f"{server_url}/daily", headers={"Accept": "text/html"}) as answer:
            assert '<script type="module" src="/static/app.js">' in await answer.text()
        async with http.get(f"{server_url}/daily") as answer:
            assert "commitment" in await answer.json()
        async with http.get(f"{server_url}/static/app.js") as answer:
            assert answer.status == 200
            assert "javascript" in answer.headers["Content-Type"]
            assert await answer.read() == (WEB_DIR / "app.js").read_bytes()
        async with http.get(f"{server_url}/static/nope.js") as answer:
            assert answer.status == 404


def test_the_client_makes_no_request_elsewhere() -> None:
    """No URL with a host in the shipped files (fonts, CDNs, analytics): LAN-only works."""
    for path in WEB_DIR.iterdir():
        text = path.read_text()
        for scheme in ("http://", "https://", "//cdn", "fonts.googleapis"):
            hits = [line for line in text.splitlines() if scheme in line and "w3.org" not in line]
            assert not hits, (path.name, hits)


async def test_the_tv_endpoint_and_the_game_list(server_url: str) -> None:
    status, body = await get_json(f"{server_url}/games")
    assert status == 200
    games = {g["name"]: g for g in body["games"]}
    assert set(games) == {"shaula", "stalactites", "moojub"}
    assert games["stalactites"]["cards"] == 48 and games["moojub"]["hidden"] is True
    assert games["shaula"]["piles"][:2] == ["f1", "f2"]
    for game in games:
        status, text = await get_text(f"{server_url}/games/{game}/rules")
        assert status == 200 and text == core.rules_text(game)
    status, _ = await get_text(f"{server_url}/games/chess/rules")
    assert status == 404
    room = await create_room(server_url, game="shaula")
    status, body = await get_json(f"{server_url}/tv/room")
    assert status == 200
    # Rooms of other tests may run on this Redis; a room in its lobby is never shown.
    assert body["room"] is None or body["room"]["id"] != room["id"]


async def test_legal_lists_the_engines_legal_and_safe_moves_and_changes_nothing(
    server_url: str,
) -> None:
    room = await create_room(server_url, game="shaula", seed=617, seats=1, hints=False)
    game = core.new_game("shaula", 617)
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as spy:
        await ann.send(p.Legal())
        assert (await ann.expect(p.Error)).code == "not_joined"
        await race_alone(ann, room["id"])
        await ann.send(p.Legal())
        reply = await ann.expect(p.LegalReply)  # allowed in a room without hints
        assert reply.moves == game.legal_moves() and reply.safe == game.copy().autoplay()
        # Play up to a position with safe moves: the list is autoplay's, and sent as
        # ordinary moves they are accepted.
        line = ["t2 t5", "t2 c1", "t8 t2", "t8 t6", "t4 c3", "t4 t5", "t4 c2", "t4 c4"]
        for seq, move in enumerate(line, start=1):
            await ann.send(p.Move(seq=seq, move=move))
            await ann.expect(p.Accepted)
            game.apply(move)
        await ann.send(p.Legal())
        reply = await ann.expect(p.LegalReply)
        assert reply.moves == game.legal_moves() and reply.safe == ["t4 f1"]
        await ann.send(p.Legal())
        assert (await ann.expect(p.LegalReply)).moves == reply.moves  # nothing changed
        await spy.send(p.Watch(room=room["id"]))
        await spy.expect(p.Welcome)
        await spy.send(p.Legal())
        assert (await spy.expect(p.Error)).code == "not_player"


async def test_the_clients_scripts_and_styles_are_sent_compressed_to_a_browser_that_takes_it(
    server_url: str,
) -> None:
    async with aiohttp.ClientSession(auto_decompress=False) as http:
        for name in ("cards.js", "style.css"):
            original = (WEB_DIR / name).read_bytes()
            url = f"{server_url}/static/{name}"
            async with http.get(url, headers={"Accept-Encoding": "gzip"}) as answer:
                assert answer.headers.get("Content-Encoding") == "gzip"
                body = await answer.read()
            assert gzip.decompress(body) == original and len(body) < len(original) / 2
            async with http.get(url, headers={"Accept-Encoding": "identity"}) as answer:
                assert "Content-Encoding" not in answer.headers
                assert await answer.read() == original
                etag = answer.headers["ETag"]
            # A browser's revalidation of its copy: a plain 304, nothing to decode.
            asked = {"Accept-Encoding": "gzip", "If-None-Match": etag}
            async with http.get(url, headers=asked) as answer:
                assert answer.status == 304 and await answer.read() == b""


@pytest.mark.parametrize("name", ["nope.js", "a" * 300, "..%2fserver%2fsettings.py", "x/y.js"])
async def test_a_static_file_that_is_none_is_a_json_404_not_an_outage(
    server_url: str, name: str
) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server_url}/static/{name}") as answer:
            assert answer.status == 404, await answer.text()
            assert (await answer.json())["error"]["code"] == "not_found"
        async with http.get(f"{server_url}/metrics") as answer:
            metrics = await answer.text()
    assert "solrace_redis_errors_total{" not in metrics  # no Redis outage was counted
