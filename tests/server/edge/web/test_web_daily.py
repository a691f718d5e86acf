"""The daily deal's page in Chromium: the rule said before the start, a ranked attempt
started from the page and raced on the race page, then on the board, with practice offered
instead of a second ranked attempt; a phone-sized screen; a day with no deals in the address;
a profile whose best time is on a deal kept back; no console error."""

from __future__ import annotations

import asyncio
import datetime
import json

import aiohttp
import pytest
from playwright.async_api import Browser, Page, Route
from support.finished import dealt_seed, won_daily_attempt
from support.players import new_player
from support.server_processes import ServerProcess
from support.web import new_page, page_errors, room_view, seen, typed_move, wait_acks

import core
from core.replay import verify

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the module's Chromium and server


async def started(page: Page, base: str, game: str) -> None:
    """The page's player starts their ranked attempt at today's `game` from the daily page:
    its race page, the board drawn."""
    await page.goto(f"{base}/daily")
    await page.click(f'.daily-game[data-game="{game}"] button.daily-start')
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#board .card")


async def attempted(page: Page, base: str, game: str) -> None:
    """The page's player starts their ranked attempt at today's `game` from the daily page
    and resigns it: the race page shows the results."""
    await started(page, base, game)
    await page.click("#resign")
    await page.click("#resign")  # "sure?"
    await page.wait_for_selector("#results-table")


async def test_a_ranked_attempt_from_the_daily_page(
    quiet_server: ServerProcess, browser: Browser
) -> None:
    base = quiet_server.url  # a Redis of its own: today's board holds this attempt only
    page = await new_page(browser, width=375, height=740)
    await page.goto(f"{base}/daily")
    await page.wait_for_selector('.daily-game[data-game="shaula"] button.daily-start')
    intro = await page.inner_text("#main")
    assert "Undo makes it unranked" in intro and "does not stop" in intro
    overflow = await page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    await page.click('.daily-game[data-game="shaula"] button.daily-start')
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#board .card")  # running at once: the clock has started
    await page.click("#resign")
    await page.click("#resign")
    await page.wait_for_selector("#results-table")
    # One ranked attempt: no rematch (it dealt a new deal in the daily room), the way back.
    await page.wait_for_selector("#back-to-daily")
    assert await page.locator("#rematch").count() == 0
    # A finished race's page links to its replay (README): open to her, her attempt is over.
    room = page.url.rsplit("/", 1)[-1]
    assert await page.get_attribute("#replay-link", "href") == f"/replay/{room}"
    await page.goto(f"{base}/daily")
    card = '.daily-game[data-game="shaula"]'
    await page.wait_for_selector(f"{card} button.daily-practice")
    text = await page.inner_text(card)
    assert "You ended with 0 cards up" in text and "Board: 1 ranked" in text
    assert await page.locator(f"{card} button.daily-start").count() == 0
    assert await page.locator(f"{card} .daily-board a").count() == 1  # my replay
    # The leader's ghost (mine: the only attempt), now that my attempt is over, under a
    # time limit of my choice.
    await page.fill("#ghost-limit", "3")
    await page.click(f"{card} button.daily-ghost")
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#ready")  # seated at once: nobody else takes the seat
    await page.wait_for_selector('#players .bar[data-seat="1"]')
    assert "ghost" in await page.inner_text('#players .bar[data-seat="1"]')
    assert room_view(base, page.url.rsplit("/", 1)[1].split("?")[0])["time_limit"] == 180
    assert page_errors(page) == []


async def test_once_ones_attempt_is_over_its_replay_ghost_and_deal_open_in_the_browser(
    server: ServerProcess, browser: Browser, redis_url: str
) -> None:
    """The pages that read what a daily attempt keeps back say who reads: once the
    browser's own attempt is over, its replay opens (and races as a ghost), and its profile
    shows the deal of its best time."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/daily")
    await page.click('.daily-game[data-game="shaula"] button.daily-start')
    await page.wait_for_url(f"{base}/play/*")
    room = page.url.rsplit("/", 1)[-1]
    await page.wait_for_selector("#board .card")
    assert "#" not in await page.inner_text(".room-title")  # its number kept back: "Shaula"
    seed = await dealt_seed(redis_url, room)  # the test's own look at the deal
    line = core.solve(core.new_game("shaula", seed)).moves
    assert line
    for i, move in enumerate(line, start=1):
        await typed_move(page, move)
        await wait_acks(page, i)
    await page.wait_for_selector("#results-table")
    name = await page.inner_text("#who")
    await page.goto(f"{base}/daily")
    await page.click('.daily-game[data-game="shaula"] .daily-board a')  # my replay
    await page.wait_for_url(f"{base}/replay/{room}")
    await page.wait_for_selector('#verify[data-verified="true"]')
    # One racer: no choice of boards side by side or one at a time is offered.
    assert not await page.is_visible("#replay-layout")
    assert not await page.is_visible("#replay-seat")
    # Its text is downloaded as the page read it (the day is not over: a link asked again
    # without the player's key was refused).
    async with page.expect_download() as saving:
        await page.click("a[download]")
    saved = await (await saving.value).path()
    assert len(verify(saved.read_text()).moves) == len(line)
    await page.click(".race-ghost")
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector('#players .bar[data-seat="1"]')
    assert "ghost" in await page.inner_text('#players .bar[data-seat="1"]')
    assert f"deal {seed}" in await best_times(page, f"{base}/p/{name}")
    assert page_errors(page) == []


async def test_a_double_click_on_start_asks_once_and_races(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on "Start my ranked attempt" asks for the attempt once. The second
    ask was the attempt opened again, which hands its seat a new token; the page went to
    the race with the first one's token, no longer the seat's, and found the seat gone
    while the attempt's clock ran."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/daily")
    await page.dblclick('.daily-game[data-game="stalactites"] button.daily-start')
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#board .card, #seat-form p")
    assert await page.locator("#board .card").count() > 0, await page.inner_text("#seat-form")
    asked = [u for u in seen(page).posts if u.endswith("/daily/stalactites")]
    assert asked == [f"{base}/daily/stalactites"]
    assert page_errors(page) == []


async def test_a_double_click_on_race_its_ghost_makes_one_ghost_race(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on "race its ghost" makes one ghost race: the second click made a
    second room, which its creator never saw, its seat held for nobody."""
    base = server.url
    page = await new_page(browser)
    await attempted(page, base, "stalactites")
    await page.goto(f"{base}/daily")
    await page.dblclick('.daily-game[data-game="stalactites"] button.daily-ghost')
    await page.wait_for_url(f"{base}/play/*")
    await page.wait_for_selector("#ready")
    assert [u for u in seen(page).posts if u == f"{base}/rooms"] == [f"{base}/rooms"]
    assert page_errors(page) == []


async def test_the_boards_drawn_again_keep_the_keyboard_focus(
    server: ServerProcess, browser: Browser
) -> None:
    """Today's boards are read again every few seconds: a control the keyboard is on
    keeps the focus (the start of an attempt, a row's replay)."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/daily")
    start = '.daily-game[data-game="moojub"] button.daily-start'
    await page.wait_for_selector(start)
    await page.focus(start)
    await page.evaluate(
        """() => new MutationObserver(() => (window.__redrawn = true))
        .observe(document.getElementById("daily-games"), { childList: true })"""
    )
    await page.wait_for_function("() => window.__redrawn", timeout=15_000)
    assert await page.evaluate("() => document.activeElement.dataset.game") == "moojub"
    assert await page.evaluate("() => document.activeElement.className") == "daily-start"
    assert page_errors(page) == []


async def test_a_day_with_no_deals_is_said_so(server: ServerProcess, browser: Browser) -> None:
    """A day not begun yet, or no day at all, in the address: the server's reason on the
    page, in place of the boards (not an empty page)."""
    base = server.url
    page = await new_page(browser)
    for day, reason in (("2999-01-01", "has not begun"), ("2026-13-45", "YYYY-MM-DD")):
        await page.goto(f"{base}/daily/{day}")
        await page.wait_for_selector("#daily-error")
        assert reason in await page.inner_text("#daily-error")
        assert await page.locator(".daily-game").count() == 0
    # Chrome logs the refused requests (404, 400) itself; nothing else may be logged.
    assert [e for e in page_errors(page) if "Failed to load resource" not in e] == []


async def test_back_to_the_daily_page_shows_the_page_not_its_json(
    server: ServerProcess, browser: Browser
) -> None:
    """`/daily` is the page to a browser and JSON to the page's own request: both answers
    say they vary by `Accept`, so going back there is the page, where the browser once
    took the JSON it had cached for the same address and showed it raw."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/daily")
    await page.wait_for_selector(".daily-game")  # the page, and its request for the JSON
    await page.goto(f"{base}/rules")
    await page.wait_for_selector("#main h1, #main h2")
    await page.go_back()
    await page.wait_for_selector(".daily-game")
    assert await page.locator("pre").count() == 0  # no raw JSON
    async with aiohttp.ClientSession() as http:
        for accept in ("text/html", "application/json"):
            async with http.get(f"{base}/daily", headers={"Accept": accept}) as answer:
                assert "Accept" in answer.headers.get("Vary", ""), accept
    assert page_errors(page) == []


async def test_a_profile_does_not_print_a_deal_it_keeps_back(
    server: ServerProcess, browser: Browser
) -> None:
    # ann wins today's daily deal: her best time is on a deal nobody else may know yet.
    base = server.url
    key, player = await new_player(base)
    await won_daily_attempt(base, key)
    page = await new_page(browser)
    best = await best_times(page, f"{base}/p/{player['name']}")
    assert "null" not in best and "deal not public yet" in best, best
    assert page_errors(page) == []


async def best_times(page: Page, profile: str) -> str:
    """The best times of the profile at `profile`, once its race is archived."""
    async with asyncio.timeout(30):  # archived within a second or two
        while True:
            await page.goto(profile)
            await page.wait_for_selector("#main h1")
            if await page.locator("text=Best times").count():
                return await page.inner_text('[aria-label="best times"]')
            await asyncio.sleep(0.3)


async def test_an_attempt_opened_in_a_second_window_is_said_so_in_the_first(
    server: ServerProcess, browser: Browser, redis_url: str
) -> None:
    """Opening the running attempt again (another tab) hands its seat to the new window;
    the first says so when its player acts there, and plays on after "Play here"."""
    base = server.url
    first = await new_page(browser)
    await first.goto(f"{base}/daily")
    start = '.daily-game[data-game="stalactites"] button.daily-start'
    await first.click(start)
    await first.wait_for_url(f"{base}/play/*")
    await first.wait_for_selector("#board .card")
    room = first.url.rsplit("/", 1)[-1]
    game = core.new_game("stalactites", await dealt_seed(redis_url, room))  # kept from the page
    second = await new_page(browser, beside=first)  # the same player: the same key
    await second.goto(f"{base}/daily")
    await second.click(start)  # "continue": the same room, a new token for this window
    await second.wait_for_url(first.url)
    await second.wait_for_selector("#board .card")
    move = game.legal_moves()[0]
    await typed_move(first, move)
    await first.wait_for_selector("#play-here")
    assert "another window" in await first.inner_text("#seat-form")
    assert await first.inner_text("#message") == ""  # not "join or watch a room first"
    await first.click("#play-here")
    await first.wait_for_function("() => !document.querySelector('#play-here')")
    await typed_move(first, move)
    await wait_acks(first, 1)
    assert page_errors(first, second) == []


async def test_a_double_click_on_play_here_takes_the_seat_back_once(
    server: ServerProcess, browser: Browser, redis_url: str
) -> None:
    """A double click on "Play here" asks for the seat once: the second join came to a
    socket seated again by the first and was refused, and the refusal drew the seat form
    (this socket is already in a room, no free seat) over the race being played."""
    base = server.url
    first = await new_page(browser)
    await first.goto(f"{base}/daily")
    start = '.daily-game[data-game="stalactites"] button.daily-start'
    await first.click(start)
    await first.wait_for_url(f"{base}/play/*")
    await first.wait_for_selector("#board .card")
    room = first.url.rsplit("/", 1)[-1]
    game = core.new_game("stalactites", await dealt_seed(redis_url, room))  # kept from the page
    second = await new_page(browser, beside=first)
    await second.goto(f"{base}/daily")
    await second.click(start)
    await second.wait_for_url(first.url)
    await second.wait_for_selector("#board .card")
    move = game.legal_moves()[0]
    await typed_move(first, move)
    await first.wait_for_selector("#play-here")
    joins = len(seen(first).sent('"type":"join"'))
    await first.dblclick("#play-here")
    await first.wait_for_function("() => !document.querySelector('#play-here')")
    await typed_move(first, move)
    await wait_acks(first, 1)  # answered after anything sent before it
    assert len(seen(first).sent('"type":"join"')) == joins + 1
    assert await first.inner_text("#seat-form") == ""
    assert page_errors(first, second) == []


async def test_an_attempt_undone_says_it_is_no_longer_ranked(
    server: ServerProcess, browser: Browser, redis_url: str
) -> None:
    """The race page of a ranked attempt says it is ranked; once its player undoes a move
    it says the attempt is kept but no longer ranked, and so it does after a reload."""
    base = server.url
    page = await new_page(browser)
    await started(page, base, "shaula")
    await page.wait_for_selector("#attempt-rank")
    assert await page.inner_text("#attempt-rank") == "ranked attempt"
    room = page.url.rsplit("/", 1)[-1]
    game = core.new_game("shaula", await dealt_seed(redis_url, room))  # kept from the page
    await typed_move(page, game.legal_moves()[0])
    await wait_acks(page, 1)
    await page.click("#undo")
    await wait_acks(page, 2)
    unranked = "() => document.querySelector('#attempt-rank')?.textContent.startsWith('unranked')"
    await page.wait_for_function(unranked)
    await page.reload()
    await page.wait_for_selector("#board .card")
    await page.wait_for_function(unranked)
    assert page_errors(page) == []


async def test_a_ranked_attempt_offers_no_link_to_share_or_watch(
    server: ServerProcess, browser: Browser
) -> None:
    """Nobody can watch a daily attempt while it runs, nor take a seat in it (one seat, its
    player's): its race page offers no link to watch it or to share its seat, which would
    only lead others to a refusal."""
    base = server.url
    page = await new_page(browser)
    await started(page, base, "shaula")
    await page.wait_for_selector("#attempt-rank")
    links = await page.inner_text(".race-head .links")
    assert "Rules of Shaula" in links
    assert "watch link" not in links and "share link" not in links, links
    assert page_errors(page) == []


async def test_another_player_at_a_running_attempt_is_not_offered_to_watch_it(
    server: ServerProcess, browser: Browser
) -> None:
    """An attempt's room opened by someone else (a link passed on) has no free seat and
    cannot be watched while it runs: the page says so and leads to the daily page, not to
    a watch page that would only be refused."""
    base = server.url
    page = await new_page(browser)
    await started(page, base, "shaula")
    other = await new_page(browser)
    await other.goto(page.url)
    notice = other.locator("#seat-form .notice")
    await notice.wait_for()
    text = await notice.inner_text()
    assert "daily attempt" in text and "Watch it" not in text, text
    assert await notice.locator('a[href^="/watch/"]').count() == 0
    assert await notice.locator('a[href="/daily"]').count() == 1
    assert page_errors(other) == []


async def test_a_daily_attempt_on_the_profile_is_said_to_be_one_not_casual(
    server: ServerProcess, browser: Browser
) -> None:
    """A daily attempt moves no rating, but it is ranked on its day's board: the profile's
    list of races says it was the daily deal, not a casual race (one made unrated by its
    creator), as it says a ghost race was one."""
    base = server.url
    page = await new_page(browser)
    await attempted(page, base, "shaula")
    name = await page.inner_text("#who")
    for _ in range(50):  # archived within a second or two of its end
        await page.goto(f"{base}/p/{name}")
        await page.wait_for_selector("h1")
        if await page.locator("table.races tbody tr").count():
            break
        await asyncio.sleep(0.2)
    game = await page.locator("table.races tbody tr td").nth(1).inner_text()
    assert "daily deal" in game and "casual" not in game, game
    assert page_errors(page) == []


async def test_a_past_days_empty_board_is_not_said_to_wait_for_attempts(
    server: ServerProcess, browser: Browser
) -> None:
    """A day that is over has had every attempt it will have: its empty board says nobody
    was ranked that day, not that no attempt is over "yet"; today's says "yet"."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/daily")
    await page.wait_for_selector(".daily-game[data-game='shaula'] .daily-board")
    today = await page.input_value("#daily-date")
    assert "No attempt is over yet." in await page.inner_text("#daily-games")
    yesterday = (datetime.date.fromisoformat(today) - datetime.timedelta(days=1)).isoformat()
    await page.goto(f"{base}/daily/{yesterday}")
    await page.wait_for_selector(".daily-game[data-game='shaula'] .daily-board")
    boards = await page.inner_text("#daily-games")
    assert "yet" not in boards, boards
    assert boards.count("Nobody was ranked that day.") == 3, boards
    assert page_errors(page) == []


async def test_the_streaks_are_said_in_words_without_a_count_of_nothing(
    server: ServerProcess, browser: Browser
) -> None:
    """After a first attempt, lost: "1 day in a row played", and no "0 won"."""
    base = server.url
    page = await new_page(browser)
    await attempted(page, base, "stalactites")
    await page.goto(f"{base}/daily")
    await page.wait_for_selector("#daily-streaks:not(:empty)")
    text = await page.inner_text("#daily-streaks")
    assert text == "Your streaks: 1 day in a row played; no day won in a row yet.", text
    assert page_errors(page) == []


async def test_a_board_says_each_winning_time_to_the_millisecond_it_ranks_by(
    server: ServerProcess, browser: Browser
) -> None:
    # Said in whole seconds, two wins a few ms apart read alike (0:05, 0:05) in two places.
    base = server.url
    key, player = await new_player(base)
    won = (await won_daily_attempt(base, key)).results[0]
    assert won["won"] and won["time"] is not None
    ms = round(won["time"] * 1000)
    said = f"{ms // 60000}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
    page = await new_page(browser)
    await page.goto(f"{base}/daily")
    row = page.locator('.daily-game[data-game="shaula"] tr', has_text=player["name"])
    await row.wait_for(timeout=15_000)  # on the board within seconds of its end
    assert said in await row.inner_text()
    assert page_errors(page) == []


async def test_a_board_says_one_card_and_one_move_in_the_singular_and_who_is_a_bot(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/daily")  # the first visit makes the page's player
    await page.wait_for_function("() => localStorage.getItem('solrace.player')")
    kept = await page.evaluate("localStorage.getItem('solrace.player')")
    await won_daily_attempt(base, json.loads(kept)["key"])

    async def one_card_up(route: Route) -> None:
        answer = await route.fetch()
        body = await answer.json()
        you = {**body["you"], "won": False, "time": None, "progress": 1, "moves": 1}
        row = {**body["board"][0], "won": False, "time": None, "progress": 1, "moves": 1}
        machine = {**row, "name": "Bot-1", "player": "0123456789abcdef", "room": None, "bot": True}
        body["you"], body["board"] = you, [row, {**machine, "place": 2}]
        await route.fulfill(response=answer, json=body)

    await page.route("**/daily/*/shaula", one_card_up)
    await page.goto(f"{base}/daily")
    card = page.locator('.daily-game[data-game="shaula"]')
    await card.locator("tr.me", has_text="1 card").wait_for()
    text = await card.inner_text()
    assert "You ended with 1 card up" in text and "1 cards" not in text and "1 moves" not in text
    # A bot's row says so (the row the server gave first is a person's).
    assert await card.locator("tr", has_text="Bot-1").locator(".tag.bot").count() == 1
    assert await card.locator(".tag.bot").count() == 1
    assert page_errors(page) == []
