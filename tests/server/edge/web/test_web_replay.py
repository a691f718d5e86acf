"""The replay page (/replay/ROOM) in Chromium: stepping with the keys, the address at move
N or time T, playing, one board or all, the hash chain checked in the page (a tampered
replay is marked not verified), a phone-sized screen, and no console error."""

from __future__ import annotations

import json

from playwright.async_api import Browser, Page, Route
from support.finished import archived_alone, archived_replay, expire_room, resigned_with_a_bot
from support.http import create_room, get_text, post_json
from support.players import new_player
from support.server_processes import ServerProcess
from support.web import (
    expected_board,
    new_page,
    page_errors,
    room_view,
    seen,
    shown_board,
    start_race,
)
from support.wsclient import WsClient

import core
import protocol as p
from core.replay import verify

SEED = 617


async def finished_race(base: str) -> tuple[str, str]:
    """A two-player Shaula race, each player a few moves of the solver's line then resigned
    (ann past the first split): the room and its replay's text."""
    room = str((await create_room(base, game="shaula", seed=SEED, seats=2, countdown=0))["id"])
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await ann.expect(p.RaceStarted)
        for player, count in ((ann, 48), (bo, 6)):
            for seq, move in enumerate(line[:count], start=1):
                await player.send(p.Move(seq=seq, move=move))
                assert isinstance(await player.expect_any((p.Accepted, p.Refused)), p.Accepted)
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        await ann.expect(p.RaceFinished)
    status, text = await get_text(f"{base}/rooms/{room}/replay")
    assert status == 200
    return room, text


def board_after(text: str, n: int, seat: int) -> dict[str, list[str]]:
    """The seat's board after the replay's first `n` moves, by the engine."""
    game = core.new_game("shaula", SEED)
    for s, move, _t in verify(text).moves[:n]:
        if s == seat:
            game.apply(move)
    return expected_board(game.state(view="player"))


async def position(page: Page) -> int:
    return int(await page.get_attribute("#main", "data-pos") or -1)


async def board_of(page: Page, seat: int) -> dict[str, list[str]]:
    return await shown_board(page, f'.watched[data-seat="{seat}"] .board')


async def test_stepping_the_address_and_playing(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    room, text = await finished_race(base)
    moves = verify(text).moves
    total = len(moves)
    page = await new_page(browser)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    assert "Verified" in await page.inner_text("#verify")
    assert await position(page) == 0
    assert await board_of(page, 0) == board_after(text, 0, 0)  # the deal

    for _ in range(3):
        await page.keyboard.press("ArrowRight")
    assert await position(page) == 3
    assert await board_of(page, 0) == board_after(text, 3, 0)
    assert page.url.endswith("?move=3")
    await page.keyboard.press("ArrowLeft")
    assert await position(page) == 2 and await board_of(page, 0) == board_after(text, 2, 0)
    await page.keyboard.press("End")
    assert await position(page) == total
    for seat in (0, 1):
        assert await board_of(page, seat) == board_after(text, total, seat)
    # The splits at the end: ann's first, as the server recorded it; bo reached none.
    ann_splits = await page.inner_text('#replay-bars .bar[data-seat="0"] .splits')
    bo_splits = await page.inner_text('#replay-bars .bar[data-seat="1"] .splits')
    assert ann_splits.startswith("13 0:") and bo_splits.startswith("13 \N{EN DASH}")
    scrolled = "() => document.querySelector('#timeline').scrollTop"
    assert await page.evaluate(scrolled) > 0  # the last move in sight in the list
    await page.keyboard.press("Home")
    assert await position(page) == 0 and await board_of(page, 1) == board_after(text, 0, 1)
    assert await page.evaluate(scrolled) == 0  # back at the deal: the list's first moves

    # An address at move N, and one at time T.
    at_move = await new_page(browser)
    await at_move.goto(f"{base}/replay/{room}?move=17")
    await at_move.wait_for_selector("#verify")
    assert await position(at_move) == 17
    assert await board_of(at_move, 0) == board_after(text, 17, 0)
    t = moves[9][2]
    at_time = await new_page(browser)
    await at_time.goto(f"{base}/replay/{room}?t={t}")
    await at_time.wait_for_selector("#verify")
    assert await position(at_time) == sum(1 for m in moves if m[2] <= t)
    # A move that is no whole number opens at the deal, as one that is no number does,
    # not at the digits it begins with (1e400 is not move 1, nor 2.5 move 2).
    for odd in ("1e400", "2.5", "abc"):
        await at_move.goto(f"{base}/replay/{room}?move={odd}")
        await at_move.wait_for_selector("#verify")
        assert await position(at_move) == 0, odd

    # One board at a time: bo's alone. Asked from the keyboard: Space on a focused button
    # presses it (the page's Space plays only where no control takes the key).
    await page.focus("#replay-layout")
    await page.keyboard.press(" ")
    assert await page.inner_text("#replay-play") == "▶ play"
    await page.select_option("#replay-seat", "1")
    assert await page.locator(".watched").count() == 1
    await page.keyboard.press("End")
    assert await board_of(page, 1) == board_after(text, total, 1)

    # Playing at 16x from move 30 reaches the end by itself.
    await page.keyboard.press("Home")
    for _ in range(30):
        await page.keyboard.press("ArrowRight")
    await page.select_option("#replay-speed", "16")
    await page.click("#replay-play")
    await page.wait_for_function(
        "n => document.querySelector('#main').dataset.pos === String(n)", arg=total
    )
    assert await page.inner_text("#replay-play") == "▶ play"
    assert page_errors(page, at_move, at_time) == []


async def test_a_tampered_replay_is_marked_not_verified(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room, text = await finished_race(base)
    lines = text.splitlines()
    record = json.loads(lines[3])
    record["t"] = record["t"] + 1.0  # a move said to be a second later
    tampered = "\n".join([*lines[:3], json.dumps(record, separators=(",", ":")), *lines[4:]])

    async def serve_tampered(route: Route) -> None:
        await route.fulfill(status=200, content_type="application/x-ndjson", body=tampered + "\n")

    page = await new_page(browser)
    await page.route(f"**/rooms/{room}/replay", serve_tampered)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="false"]')
    said = await page.inner_text("#verify")
    assert "Not verified" in said and "line 5" in said
    # Its hash chain rebuilt to match: still not the replay the server has.
    rechained = [lines[0]]
    edited = [*lines[1:3], json.dumps(record, separators=(",", ":")), *lines[4:]]
    for line in edited:
        data = json.loads(line)
        data["prev"] = core.replay.line_hash(rechained[-1])
        rechained.append(json.dumps(data, separators=(",", ":")))

    async def serve_rechained(route: Route) -> None:
        body = "\n".join(rechained) + "\n"
        await route.fulfill(status=200, content_type="application/x-ndjson", body=body)

    again = await new_page(browser)
    await again.route(f"**/rooms/{room}/replay", serve_rechained)
    await again.goto(f"{base}/replay/{room}")
    await again.wait_for_selector('#verify[data-verified="false"]')
    assert "not the replay the server" in await again.inner_text("#verify")
    assert page_errors(page, again) == []


async def test_the_replay_page_fits_a_phone(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    room, _text = await finished_race(base)
    page = await new_page(browser, width=375, height=740)
    await page.goto(f"{base}/replay/{room}?move=12")
    await page.wait_for_selector('#verify[data-verified="true"]')
    overflow = await page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    await page.click("#replay-next")
    assert await position(page) == 13
    status, _ = await get_text(f"{base}/replay/nosuchroom")
    missing = await new_page(browser)
    await missing.goto(f"{base}/replay/0badc0de")
    await missing.wait_for_selector("#replay-error")
    assert status == 200
    assert page_errors(page) == []


async def test_racing_a_ghost_from_the_replay_page(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    room, _text = await finished_race(base)
    page = await new_page(browser)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    # ann's row (she went further): race her ghost.
    await page.click('#replay-results button.race-ghost[data-seat="0"]')
    await page.wait_for_url(f"{base}/play/*")
    ghost_room = page.url.rsplit("/", 1)[1].split("?")[0]
    await page.wait_for_selector("#ready")  # seated at once: the ghost's race is its creator's
    assert "ghost" in await page.inner_text('#players .bar[data-seat="1"]')
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    # The ghost's bar moves by itself, by its recorded run.
    await page.wait_for_function(
        """() => !document.querySelector('#players .bar[data-seat="1"] .num')
              .textContent.startsWith('0/')"""
    )
    await page.click("#resign")
    await page.click("#resign")  # the second click confirms
    await page.wait_for_selector("#results-table")
    rows = await page.locator("#results-table tbody tr").all_inner_texts()
    assert rows[0].startswith("1") and "ann's ghost" in rows[0]
    view = room_view(base, ghost_room)
    assert view["ghost"] == room
    # No rematch offered (a ghost race has none); its replay, and a new ghost race instead.
    assert await page.locator("#rematch").count() == 0
    replay = await page.get_attribute("#replay-link", "href")
    assert replay == f"/replay/{ghost_room}"
    await page.click("#ghost-again")
    await page.wait_for_url(lambda url: ghost_room not in url and "/play/" in url)
    await page.wait_for_selector("#ready")
    again = page.url.rsplit("/", 1)[1].split("?")[0]
    assert room_view(base, again)["ghost"] == room
    assert page_errors(page) == []


async def test_a_double_click_on_a_ghost_button_makes_one_ghost_race(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on "race this ghost" (the replay page) or on "Race this ghost again"
    (a finished ghost race) makes one ghost race: the second click made a second room,
    which its creator never saw, its seat held for nobody."""
    base = server.url
    room, _text = await finished_race(base)
    page = await new_page(browser)

    def made() -> list[str]:
        return [u for u in seen(page).posts if u == f"{base}/rooms"]

    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    await page.dblclick('#replay-results button.race-ghost[data-seat="1"]')
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#ready")
    first = page.url.rsplit("/", 1)[1].split("?")[0]
    assert len(made()) == 1, made()
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    await page.click("#resign")
    await page.click("#resign")  # the second click confirms
    await page.dblclick("#ghost-again")
    await page.wait_for_url(lambda url: first not in url and "/play/" in url)
    await page.wait_for_selector("#ready")
    assert len(made()) == 2, made()
    assert page_errors(page) == []


async def test_a_ghost_race_from_the_replay_page_under_a_time_limit(
    server: ServerProcess, browser: Browser
) -> None:
    """A ghost race may have a time limit (docs/protocol.md, "Ghost races"): the replay
    page asks for one where it starts ghost races, as the lobby does for a room; left
    empty, none."""
    base = server.url
    room, _text = await finished_race(base)
    page = await new_page(browser)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    await page.fill("#ghost-limit", "2")
    await page.click('#replay-results button.race-ghost[data-seat="1"]')
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#ready")
    limited = page.url.rsplit("/", 1)[1].split("?")[0]
    view = room_view(base, limited)
    assert view["ghost"] == room and view["time_limit"] == 120
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    assert await page.input_value("#ghost-limit") == ""
    await page.click('#replay-results button.race-ghost[data-seat="1"]')
    await page.wait_for_url(lambda url: "/play/" in url and limited not in url)
    await page.wait_for_selector("#ready")
    assert room_view(base, page.url.rsplit("/", 1)[1].split("?")[0])["time_limit"] is None
    assert page_errors(page) == []


async def test_racing_the_same_ghost_again(server: ServerProcess, browser: Browser) -> None:
    """The ghost chosen on the replay page (bo's run, not the one a ghost race takes by
    default) is the one raced again from the finished ghost race, under the same time
    limit."""
    base = server.url
    room, _text = await finished_race(base)
    page = await new_page(browser)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    await page.click('#replay-results button.race-ghost[data-seat="1"]')  # bo's
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#ready")
    assert "bo's ghost" in await page.inner_text('#players .bar[data-seat="1"]')
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    await page.click("#resign")
    await page.click("#resign")  # the second click confirms
    await page.wait_for_selector("#ghost-again")
    first = page.url.rsplit("/", 1)[1].split("?")[0]
    await page.click("#ghost-again")
    await page.wait_for_url(lambda url: first not in url and "/play/" in url)
    await page.wait_for_selector("#ready")
    again = page.url.rsplit("/", 1)[1].split("?")[0]
    view = room_view(base, again)
    assert view["ghost"] == room
    ghosts = [x for x in view["players"] if x["ghost"]]  # type: ignore[attr-defined]
    assert [g["name"] for g in ghosts] == ["bo's ghost"]
    # A ghost race with a time limit (made over HTTP, as docs/protocol.md allows) is
    # raced again under it.
    status, made = await post_json(
        f"{base}/rooms", {"ghost": room, "ghost_seat": 1, "time_limit": 90}
    )
    assert status == 201, made
    limited = made["room"]["id"]
    await start_race(page, base, limited, "cy")
    await page.click("#resign")
    await page.click("#resign")
    await page.click("#ghost-again")
    await page.wait_for_url(lambda url: limited not in url and "/play/" in url)
    await page.wait_for_selector("#ready")
    view = room_view(base, page.url.rsplit("/", 1)[1].split("?")[0])
    assert view["time_limit"] == 90
    assert [g["name"] for g in view["players"] if g["ghost"]] == ["bo's ghost"]  # type: ignore[attr-defined, index]
    assert page_errors(page) == []


async def test_an_archived_race_by_its_id(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    room, text = await finished_race(base)
    await archived_replay(base, f"{room}.1")
    page = await new_page(browser)
    await page.goto(f"{base}/replay/{room}.1?move=9")
    await page.wait_for_selector('#verify[data-verified="true"]')
    assert await position(page) == 9
    assert await board_of(page, 0) == board_after(text, 9, 0)
    assert page_errors(page) == []


async def test_a_profile_page_shows_the_splits(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    key, player = await new_player(base)
    await archived_alone(base, key, 50, SEED)  # 50 at once: the rate limit's burst
    page = await new_page(browser)
    await page.goto(f"{base}/p/{player['name']}")
    await page.wait_for_selector("table.splits-best")
    assert "null" not in await page.inner_text("main")  # no section left out shows as text
    row = await page.inner_text('table.splits-best tr[data-game="shaula"]')
    assert "no win yet" in row  # a split reached, no win: best segments only
    assert "0:" in await page.inner_text("table.races td.splits")
    assert page_errors(page) == []


async def test_a_profile_says_each_race_s_deltas_as_the_race_page_does(
    server: ServerProcess, browser: Browser
) -> None:
    # One rule for a delta wherever it is shown: to a tenth, half a tenth away from zero
    # (250 ms is +0.3 s, not the +0.2 s of a float rounded half to even), level when it
    # rounds to nothing (30 ms behind is ±0.0 s, not +0.0).
    base = server.url
    key, player = await new_player(base)
    await archived_alone(base, key, 50, SEED)

    async def with_deltas(route: Route) -> None:
        answer = await route.fetch()
        body = await answer.json()
        race = body["races"]["items"][0]
        race["splits"], race["delta"] = [41200, 88030, 131900, 184520], [-3200, 250, 30, 0]
        await route.fulfill(response=answer, json=body)

    page = await new_page(browser)
    await page.route(f"**/players/{player['name']}?*", with_deltas)
    await page.goto(f"{base}/p/{player['name']}")
    await page.wait_for_selector("table.races td.splits")
    assert await page.inner_text("table.races td.splits") == (
        "0:41.2 (-3.2 s) · 1:28.0 (+0.3 s) · 2:11.9 (±0.0 s) · 3:04.5 (±0.0 s)"
    )
    assert page_errors(page) == []


async def test_a_bots_racer_is_named_as_a_bot(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    bot_key, bot = await new_player(base, bot=True)
    room = await resigned_with_a_bot(base, bot_key)
    page = await new_page(browser)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector(".watched h3")
    names = await page.locator(".watched h3").all_inner_texts()
    assert any(text.startswith(f"{bot['name']} (bot)") for text in names), names
    assert any(text.startswith("ann") and "(bot)" not in text for text in names), names
    assert page_errors(page) == []
    await page.context.close()


async def test_an_expired_rooms_pages_show_its_results_and_lead_to_its_archived_replay(
    server: ServerProcess, browser: Browser, redis_url: str
) -> None:
    """A link to a race's room kept after the room expired (a shared link, the history)
    finds the race in the records: its play and watch pages show its results (from the
    records) and lead to the replay."""
    base = server.url
    room, _ = await finished_race(base)
    await archived_replay(base, f"{room}.1")
    await expire_room(redis_url, room)
    status, _ = await get_text(f"{base}/rooms/{room}")
    assert status == 404
    for path in (f"/play/{room}", f"/watch/{room}"):
        page = await new_page(browser)
        await page.goto(f"{base}{path}")
        link = await page.wait_for_selector(f'#archived a[href="/replay/{room}"]')
        assert "over" in await page.inner_text("#archived"), path
        rows = await page.locator("#archived #results-table tbody tr").all_inner_texts()
        assert [row.split()[:2] for row in rows] == [["1", "ann"], ["2", "bo"]], rows
        assert all("resigned" in row for row in rows), rows
        await link.click()
        await page.wait_for_selector("#replay-results th")
        # The room's own address answers 404 (it is gone), which Chromium logs; nothing else.
        assert [e for e in page_errors(page) if "404 (Not Found)" not in e] == [], path
