"""A player's seat survives a reload of the page and a restart of the server mid-race: the
token is kept in the browser, the page joins again with it and carries on. A join (or a
watch) the server refuses for now (`unavailable`: Redis is down) is asked again with
backoff until it is taken, and a move typed meanwhile is played once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from playwright.async_api import Browser
from support.finished import archived_replay, expire_room
from support.http import create_room
from support.own_redis import OwnRedis
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.tcp_relay import tcp_relay
from support.web import (
    expected_board,
    new_page,
    page_errors,
    resigned_with,
    room_view,
    shown_board,
    solo_race,
    start_race,
    typed_move,
    wait_acks,
)
from support.wsclient import WsClient, race_alone

import core
import protocol as p

SEED = 617
LINE = core.solve(core.new_game("shaula", SEED), shorten=True).moves


def after(moves: list[str]) -> dict[str, list[str]]:
    game = core.new_game("shaula", SEED)
    for move in moves:
        game.apply(move)
    return expected_board(game.state(view="player"))


def players(base: str, room: str) -> list[dict[str, object]]:
    players = room_view(base, room)["players"]
    assert isinstance(players, list)
    return players


async def test_a_reload_in_the_middle_of_a_race_puts_the_player_back(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room, page = await solo_race(browser, base, game="shaula", seed=SEED)
    for i, move in enumerate(LINE[:6]):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
    assert await shown_board(page) == after(LINE[:6])
    await page.reload()
    await page.wait_for_selector("#board .card")
    assert await shown_board(page) == after(LINE[:6])
    assert "ann (you)" in await page.inner_text("#players")
    for i, move in enumerate(LINE[6:12]):  # the seqs go on above the welcome's last_seq
        await typed_move(page, move)
        await wait_acks(page, i + 1)
    assert await shown_board(page) == after(LINE[:12])
    assert await page.inner_text("#message") == ""
    seats = players(base, room)
    assert len(seats) == 1 and seats[0]["moves"] == 12 and seats[0]["connected"] is True
    assert page_errors(page) == []


async def test_a_link_gone_silent_is_noticed_and_the_page_plays_on(
    server: ServerProcess, browser: Browser
) -> None:
    """The network drops without a word (no close, no reset: a half-open link): the page,
    whose pings go unanswered, says the connection is lost, opens a new one and plays on;
    a move typed meanwhile goes through once."""
    async with tcp_relay(server.port) as relay:
        room = await create_room(server.url, game="shaula", seed=SEED, seats=1, countdown=0)
        page = await new_page(browser)
        await start_race(page, relay.url, room["id"])
        await typed_move(page, LINE[0])
        await wait_acks(page, 1)
        await page.evaluate(
            """() => { window.__said = [];
            new MutationObserver(() => window.__said.push(document.querySelector('#message')
                .textContent)).observe(document.querySelector('#message'),
                { childList: true, characterData: true, subtree: true }); }"""
        )
        accepted = relay.accepted
        assert relay.freeze() >= 1  # the page's socket (and any idle HTTP connection)
        await typed_move(page, LINE[1])
        await wait_acks(page, 2, timeout=45_000)
        assert relay.accepted > accepted  # a new connection
        said = await page.evaluate("window.__said")
        assert any("Connection lost" in text for text in said), said
        assert await shown_board(page) == after(LINE[:2])
    assert players(server.url, room["id"])[0]["moves"] == 2
    assert page_errors(page) == []


async def test_a_network_gone_is_said_at_once_and_the_page_plays_on_when_it_is_back(
    server: ServerProcess, browser: Browser
) -> None:
    """The browser knows when its network goes (its `offline` event): the page says the
    connection is lost at once, not when a ping goes unanswered 10 to 20 s later (a move
    made meanwhile did nothing, in silence), and comes back as soon as the network does; a
    move typed meanwhile goes through once."""
    room, page = await solo_race(browser, server.url, game="shaula", seed=SEED)
    await typed_move(page, LINE[0])
    await wait_acks(page, 1)
    await page.context.set_offline(True)
    await page.wait_for_function(
        "() => document.querySelector('#message').textContent.includes('Connection lost')",
        timeout=3000,
    )
    await typed_move(page, LINE[1])
    await asyncio.sleep(1)
    await page.context.set_offline(False)
    await wait_acks(page, 2, timeout=10_000)
    await page.wait_for_function("() => document.querySelector('#message').textContent === ''")
    assert await shown_board(page) == after(LINE[:2])
    assert players(server.url, room)[0]["moves"] == 2
    # Chromium's own word on each socket it could not open while offline.
    assert [e for e in page_errors(page) if "ERR_INTERNET_DISCONNECTED" not in e] == []


async def test_a_server_restart_in_the_middle_of_a_race_puts_the_player_back(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room, page = await solo_race(browser, base, game="shaula", seed=SEED)
    for i, move in enumerate(LINE[:6]):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
    server.kill()  # SIGKILL: no goodbye to the page
    await server.stop()
    await page.wait_for_selector(
        ".race-head[data-connection=down], .race-head[data-connection=connecting]"
    )
    await typed_move(page, LINE[6])  # while the server is down: sent again once it is back
    await server.start()
    await wait_acks(page, 7)
    for i, move in enumerate(LINE[7:12]):
        await typed_move(page, move)
        await wait_acks(page, 8 + i)
    assert await shown_board(page) == after(LINE[:12])
    assert await page.get_attribute(".race-head", "data-connection") == "open"
    seats = players(base, room)
    assert len(seats) == 1 and seats[0]["moves"] == 12 and seats[0]["out"] is None
    # The page's own reconnect errors (a refused WebSocket while the server was down) are
    # the browser's network log, not the page's: nothing else may be logged.
    assert [e for e in page_errors(page) if "WebSocket connection" not in e] == []


async def test_two_windows_on_one_seat_show_the_same_true_board(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room, first = await solo_race(browser, base, game="shaula", seed=SEED)
    second = await new_page(browser, beside=first)  # the same browser: the same token
    await second.goto(f"{base}/play/{room}")
    await second.wait_for_selector("#board .card")
    for i, move in enumerate(LINE[:8]):
        # The windows take turns: each follows the other's moves from its progress events,
        # and the server judges each on the seat's one true board.
        await typed_move((first, second)[i % 2], move)
        expected = after(LINE[: i + 1])
        # Both windows show the server's board, each move drawn once.
        for _ in range(100):
            boards = [await shown_board(each) for each in (first, second)]
            if boards == [expected, expected]:
                break
            await first.wait_for_timeout(50)
        assert boards == [expected, expected], (i, move)
    assert await first.inner_text("#message") == await second.inner_text("#message") == ""
    seats = players(base, room)
    assert len(seats) == 1 and seats[0]["moves"] == 8
    assert page_errors(first, second) == []


@pytest_asyncio.fixture(loop_scope="module")
async def outage_server(own_redis: OwnRedis, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    """A server process on a Redis of the test's own, to kill (append-only: rooms stay)."""
    server = ServerProcess(
        free_port(), environment(), "--redis-url", own_redis.url, log=tmp_path / "server.log"
    )
    await server.start()
    yield server
    await server.stop()


async def test_a_rejoin_refused_for_now_is_asked_again_and_the_move_goes_through(
    own_redis: OwnRedis, outage_server: ServerProcess, browser: Browser
) -> None:
    # The page's socket is cut while Redis is down: the reconnect's join is refused
    # `unavailable`. The page must ask again (with backoff) until the server can take it,
    # and the move typed meanwhile must be played once, not dropped.
    server = outage_server
    room = (await create_room(server.url, game="shaula", seed=SEED, seats=1, countdown=0))["id"]
    async with tcp_relay(server.port) as relay, WsClient.connect(server.url) as spectator:
        await spectator.send(p.Watch(room=room))  # keeps the room open on the process
        await spectator.expect(p.Snapshot)
        page = await new_page(browser)
        await start_race(page, relay.url, room)
        for i, move in enumerate(LINE[:3]):
            await typed_move(page, move)
            await wait_acks(page, i + 1)

        own_redis.stop()
        assert relay.cut() >= 1
        await page.wait_for_selector(
            ".race-head[data-connection=down], .race-head[data-connection=connecting]"
        )
        await typed_move(page, LINE[3])
        async with asyncio.timeout(10):
            while "handling join: Redis unavailable" not in server.text():
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # another refused rejoin or two
        await asyncio.to_thread(own_redis.start)  # from its append-only file
        await wait_acks(page, 4)
        for i, move in enumerate(LINE[4:6]):
            await typed_move(page, move)
            await wait_acks(page, 5 + i)
        assert await shown_board(page) == after(LINE[:6])
        assert await page.inner_text("#message") == ""
        seats = players(server.url, room)
        assert len(seats) == 1 and seats[0]["moves"] == 6 and seats[0]["out"] is None
        assert [e for e in page_errors(page) if "WebSocket connection" not in e] == []


async def test_a_watch_refused_for_now_is_asked_again(
    own_redis: OwnRedis, outage_server: ServerProcess, browser: Browser
) -> None:
    # The watch page opens while Redis is down: the process refuses the watch `unavailable`
    # (at once once its check of Redis has failed, else when its calls to Redis fail). The
    # page must ask again (with backoff) and show the race once Redis is back, not give up.
    room = (await create_room(outage_server.url, game="shaula", seed=SEED, seats=1, countdown=0))[
        "id"
    ]
    async with WsClient.connect(outage_server.url) as ann:
        await race_alone(ann, room)
        await ann.send(p.Move(seq=1, move=LINE[0]))
        await ann.expect(p.Accepted)
    # ann's socket is closed: the room is no longer open on the process.
    own_redis.stop()
    page = await new_page(browser)
    await page.goto(f"{outage_server.url}/watch/{room}")
    async with asyncio.timeout(30):
        while "handling watch: Redis unavailable" not in outage_server.text():
            await asyncio.sleep(0.1)
    await asyncio.to_thread(own_redis.start)
    await page.wait_for_selector("#boards .card", timeout=20_000)
    assert await shown_board(page, "#boards") == after(LINE[:1])
    assert [e for e in page_errors(page) if "WebSocket connection" not in e] == []


async def test_a_page_handed_on_by_a_process_cut_off_from_redis_comes_back(
    own_redis: OwnRedis, outage_server: ServerProcess, browser: Browser
) -> None:
    # Redis down past the process's cutoff (6 s): the page's socket is closed with 1013 and
    # its reconnects are refused 503 until Redis is back; then it takes its seat back and
    # the move typed meanwhile is played once.
    server = outage_server
    room = (await create_room(server.url, game="shaula", seed=SEED, seats=1, countdown=0))["id"]
    page = await new_page(browser)
    await start_race(page, server.url, room)
    for i, move in enumerate(LINE[:3]):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
    own_redis.stop()
    async with asyncio.timeout(30):
        while "sockets on (1013)" not in server.text():  # the page's socket, handed on
            await asyncio.sleep(0.1)
    await page.wait_for_selector(
        ".race-head[data-connection=down], .race-head[data-connection=connecting]"
    )
    await typed_move(page, LINE[3])
    await asyncio.to_thread(own_redis.start)
    await wait_acks(page, 4)
    for i, move in enumerate(LINE[4:6]):
        await typed_move(page, move)
        await wait_acks(page, 5 + i)
    assert await shown_board(page) == after(LINE[:6])
    seats = players(server.url, room)
    assert len(seats) == 1 and seats[0]["moves"] == 6 and seats[0]["out"] is None
    assert [e for e in page_errors(page) if "WebSocket connection" not in e] == []


async def test_a_page_whose_room_expired_while_it_was_away_leads_to_the_replay(
    server: ServerProcess, browser: Browser, redis_url: str
) -> None:
    """A racer's page stays on its finished race; the room expires (its Redis keys go) and
    the link drops: back, the page finds the room gone, says so and leads to the race's
    archived replay, and no more that it is reconnecting (it is connected)."""
    base = server.url
    room, page = await solo_race(browser, base, game="stalactites")
    await page.click("#resign")
    await page.click("#resign")  # "sure?"
    await page.wait_for_selector("#results-table")
    await archived_replay(base, f"{room}.1")
    await expire_room(redis_url, room)
    server.kill()
    await server.stop()
    await page.wait_for_selector("#message.warn")  # "Connection lost: reconnecting…"
    await server.start()
    await page.wait_for_selector(f'#archived a[href="/replay/{room}"]', timeout=20_000)
    assert "reconnecting" not in await page.inner_text("#message")
    assert await page.get_attribute(".race-head", "data-connection") == "open"


async def test_a_page_whose_seat_was_freed_after_the_end_says_so(
    server: ServerProcess, browser: Browser
) -> None:
    """ann closed her page after the race without voting; bo's vote gave her the grace and
    the rematch went on without her. Opening the room again, her page says her seat is
    gone, not merely that the race has none free."""
    base = server.url
    room = (await create_room(base, game="shaula", seats=2, grace=1, countdown=1))["id"]
    page = await new_page(browser)
    async with WsClient.connect(base) as bo:
        await resigned_with(page, base, room, bo)
        again = await new_page(browser, beside=page)  # the same browser keeps her seat token
        await page.close()
        await bo.send(p.Rematch())
        await bo.expect(p.PlayerLeft)
        await again.goto(f"{base}/play/{room}")
        await again.wait_for_function(
            "() => document.body.innerText.includes('Your seat here is gone')"
        )
    assert await again.locator(f'a[href="/watch/{room}"]').count() == 1
