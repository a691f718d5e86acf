"""The browser's identity: a player at the first visit (its key in localStorage, sent as
`identify` and as a Bearer header, never in a URL), a name chosen by taking a seat, the
account page (claim, sign in on another browser, sign out), the profile page, and bots
shown as bots."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.async_api import Browser, Page, Route
from sqlalchemy.engine import make_url
from support.http import create_room, post_json
from support.own_postgres import OwnPostgres
from support.players import call, new_player
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.tcp_relay import Relay, tcp_relay
from support.web import new_page, open_tournament_form, page_errors, room_view, seen, take_seat
from support.wsclient import WsClient

import core
import protocol as p

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the module's Chromium and server


SEAT_LATER = "The server cannot seat you right now: try again in a few seconds."
MATCH_LATER = "The server cannot match you yet: trying again…"


async def tournament(base: str) -> dict[str, object]:
    status, body = await post_json(f"{base}/tournaments", {"name": "Open", "winnable": False})
    assert status == 201, body
    return dict(body["tournament"])


async def kept_player(page: Page) -> dict[str, object]:
    return dict(json.loads(await page.evaluate("localStorage.getItem('solrace.player')")))


async def test_a_first_visit_plays_as_a_player_that_can_sign_in_elsewhere(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/")
    await page.wait_for_function(
        "() => (document.getElementById('who')?.textContent ?? '').startsWith('Guest-')"
    )
    player = await kept_player(page)
    key = str(player["key"])
    # Taking a seat under a typed name makes it the player's name; the seat is theirs.
    room = (await create_room(base, seats=2))["id"]
    await take_seat(page, base, room, "zoe")
    view = room_view(base, room)
    assert [(p["name"], p["player"]) for p in view["players"]] == [("zoe", player["id"])]  # type: ignore[index,union-attr]
    await page.wait_for_function(
        "() => (document.getElementById('who')?.textContent ?? '') === 'zoe'"
    )
    # A reload comes back to the seat; so does the player on a page that lost the token.
    await page.evaluate(f"localStorage.removeItem('solrace.seat.{room}')")
    await page.goto(f"{base}/play/{room}")
    await take_seat(page, base, room, "zoe")
    assert len(room_view(base, room)["players"]) == 1  # type: ignore[arg-type]

    # The account page: claim with a password.
    await page.goto(f"{base}/account")
    await page.fill("#password", "zoe's secret")
    await page.fill("#again", "zoe's secret")
    await page.click("#claim button")
    await page.wait_for_selector("text=Your account has a password")
    assert "null" not in await page.inner_text("main")

    # Another browser signs in as zoe and is the same player.
    other = await new_page(browser)
    await other.goto(f"{base}/account")
    await other.wait_for_selector("#login-name")
    await other.fill("#login-name", "ZOE")
    await other.fill("#login-password", "zoe's secret")
    async with other.expect_navigation():  # signed in, the page loads again as zoe
        await other.click("#sign-in button")
    await other.wait_for_function(
        "() => (document.getElementById('who')?.textContent ?? '') === 'zoe'"
    )
    assert (await kept_player(other))["id"] == player["id"]
    assert (await kept_player(other))["key"] != key  # a key of its own

    # The profile page.
    await other.goto(f"{base}/p/zoe")
    await other.wait_for_selector("h1:has-text('zoe')")
    assert "0 races" in await other.inner_text("main")

    # Signing out of one browser leaves the other signed in.
    await other.goto(f"{base}/account")
    await other.click("#sign-out button")
    await other.wait_for_function(
        "() => (document.getElementById('who')?.textContent ?? '').startsWith('Guest-')"
    )
    await page.goto(f"{base}/account")
    await page.wait_for_selector("h1:has-text('zoe')")

    # The key was never in a URL, of a page, a request or a socket.
    for shown in (page, other):
        assert not [u for u in seen(shown).requests + seen(shown).sockets if key in u]
    assert page_errors(page, other) == []


async def test_signing_out_forgets_what_the_browser_kept_for_the_player(
    server: ServerProcess, browser: Browser
) -> None:
    """After "Sign out of this browser", or another player's sign-in on it, the browser
    holds nothing of the player who left: not their seats' tokens, not their tournament
    place (its token withdraws them), not a tournament they organise, not their name."""
    base = server.url
    zed, _ = await new_player(base, "zed")
    await call(base, "POST", "/me/claim", {"password": "zed's secret"}, zed)
    page = await new_page(browser)
    kept = (
        "() => Object.keys(localStorage).filter((k) => /^solrace[.](name|seat[.]|tour[.])/.test(k))"
    )

    async def keep_some(name: str) -> None:
        room = (await create_room(base, seats=2))["id"]
        await take_seat(page, base, room, name)
        await page.goto(f"{base}/tour/{(await tournament(base))['id']}")
        await page.fill("#tour-name", name)
        await page.click("#register")
        await page.wait_for_selector("#withdraw")
        await open_tournament_form(page, base)
        await page.fill("input[name=tour_name]", f"{name}'s cup")
        await page.click("#tour-create button[type=submit]")
        await page.wait_for_selector("#tour-start")
        assert len(await page.evaluate(kept)) == 4

    await keep_some("yan")
    await page.goto(f"{base}/account")
    await page.fill("#login-name", "zed")
    await page.fill("#login-password", "zed's secret")
    async with page.expect_navigation():
        await page.click("#sign-in button")
    await page.wait_for_function("() => document.getElementById('who')?.textContent === 'zed'")
    assert await page.evaluate(kept) == ["solrace.name"]  # zed's own
    assert await page.evaluate("localStorage.getItem('solrace.name')") == "zed"

    await keep_some("zed")
    await page.goto(f"{base}/account")
    await page.click("#sign-out button")
    await page.wait_for_function(
        "() => (document.getElementById('who')?.textContent ?? '').startsWith('Guest-')"
    )
    assert await page.evaluate(kept) == []
    assert page_errors(page) == []


async def test_a_won_race_shows_on_the_profile_and_the_deals_leaderboard(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    room = (await create_room(base, game="shaula", seed=617, seats=1, countdown=0))["id"]
    await take_seat(page, base, room, "wes")
    key = str((await kept_player(page))["key"])
    # The player wins the deal from another socket of theirs (the solver's line).
    line = core.solve(core.new_game("shaula", 617)).moves
    async with WsClient.connect(base) as ws:
        await ws.send(p.Identify(key=key))
        await ws.expect(p.Identified)
        await ws.join(room)  # no token: the player's seat, by identity
        await ws.send(p.Start())
        await ws.expect(p.RaceStarted)
        await ws.play(line)  # the same seq again after a "slow down", as a client does
        await ws.expect(p.RaceFinished)
    await page.goto(f"{base}/p/wes")
    await page.wait_for_selector("h1:has-text('wes')")
    replay = page.locator("table.races a:has-text('watch')")
    for _ in range(50):  # archived a moment after the end; each part of the page then
        shown = await page.inner_text("main")  # shows it once its own answer is in (the
        # latest races too: their list may have been read before the bests were)
        parts = ("1 race, 1 won", "Best times", "deal 617")
        if all(part in shown for part in parts) and await replay.count() > 0:
            break
        await page.wait_for_timeout(200)
        await page.reload()
        await page.wait_for_selector("h1:has-text('wes')")
    text = await page.inner_text("main")
    assert "1 race, 1 won" in text and "Best times" in text and "deal 617" in text
    assert await replay.get_attribute("href") == f"/replay/{room}.1"  # the race, by its id
    # Each table names the game as every other page does (its title), not by its id.
    games = await page.eval_on_selector_all(
        "table.stats:not(.races) tbody td:first-child, table.races tbody td:nth-child(2)",
        "cells => cells.map(c => c.textContent)",
    )
    assert games == ["Shaula", "Shaula", "Shaula casual"], games
    # Its time reads as the best times' does: minutes and seconds, then to the hundredth.
    best = await page.inner_text(
        "table.stats:not(.races) tbody tr:has-text('deal 617') td:nth-child(2)"
    )
    assert await page.inner_text("table.races tbody td:nth-child(4)") == best
    await page.goto(f"{base}/top/shaula?by=time&seed=617")
    await page.wait_for_selector("table.leaderboard")
    assert "wes" in await page.inner_text("table.leaderboard")
    await page.check("#around-me")
    await page.wait_for_url("**around=1**")
    await page.wait_for_selector("table.leaderboard tr.me")
    # A deal nobody has won says why a win may be missing from it (hints do not count).
    await page.goto(f"{base}/top/shaula?by=time&seed=618")
    empty = page.locator("#board p.muted")
    await empty.wait_for()
    assert "rooms that allow hints do not count" in await empty.inner_text()
    assert page_errors(page) == []


async def test_a_profile_opened_under_a_name_given_up_shows_the_player_as_called_now(
    server: ServerProcess, browser: Browser
) -> None:
    """A link made under an earlier name (a race's results, a standings row) opens the
    player's profile under the name they have now, and the address says that name."""
    base = server.url
    key, player = await new_player(base)
    await call(base, "POST", "/me/name", {"name": "Yan_1"}, key)
    page = await new_page(browser)
    await page.goto(f"{base}/p/{player['name']}?page=1")
    await page.wait_for_selector("h1:has-text('Yan_1')")
    assert urlparse(page.url).path == "/p/Yan_1" and urlparse(page.url).query == "page=1"
    assert f"Formerly {player['name']}" in await page.inner_text("main")
    assert page_errors(page) == []


async def test_a_bot_is_shown_as_a_bot_in_the_lobby_and_on_the_bars(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    bot_key, bot = await new_player(base, bot=True)
    room = (await create_room(base, seats=2))["id"]
    async with WsClient.connect(base) as ws:
        await ws.send(p.Identify(key=bot_key))
        await ws.expect(p.Identified)
        await ws.join(room)
        page = await new_page(browser)
        await page.goto(f"{base}/")
        row = page.locator(f'#rooms tr[data-room="{room}"]')
        await row.wait_for()
        assert f"{bot['name']} (bot)" in await row.inner_text()
        await take_seat(page, base, room, "una")
        await page.wait_for_selector("#players .tag.bot")
        assert bot["name"] in await page.inner_text("#players")
    assert page_errors(page) == []


async def test_a_name_another_player_has_is_said_to_be_taken_when_the_seat_is_taken(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    await new_player(base, "wendy")
    room = (await create_room(base, seats=2))["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/play/{room}")
    await page.wait_for_selector("#take-seat")
    await page.fill("#seat-name", "wendy")
    await page.click("#take-seat")
    await page.wait_for_selector("#ready")  # seated, under the browser's own name
    [seated] = room_view(base, room)["players"]  # type: ignore[misc]
    assert seated["name"] != "wendy"  # type: ignore[index]
    # ... and the page says why, where it stays to be read.
    await page.wait_for_function(
        "() => (document.getElementById('message')?.textContent ?? '').includes('wendy')"
    )
    await page.wait_for_timeout(1000)
    assert "you play as" in await page.inner_text("#message")
    assert not page_errors(page)


async def test_a_name_another_player_has_is_said_to_be_taken_on_the_quick_matchs_race_page(
    server: ServerProcess, browser: Browser
) -> None:
    """A quick match asked for under a name that is another player's races under the
    browser's own name: the lobby said why beside "Looking for an opponent", but an
    opponent waiting already took the page to the race at once, where nothing said it. The
    race page says it, as it does of a name typed for a seat."""
    base = server.url
    await new_player(base, "wendy")
    async with WsClient.connect(base) as bo:
        await bo.send(p.QuickMatch(game="shaula", name="bo"))
        await bo.expect(p.Queued)
        page = await new_page(browser)
        await page.goto(base)
        await page.fill("#name", "wendy")
        await page.click("[data-quick=shaula]")
        await page.wait_for_url("**/play/*")
        await page.wait_for_selector("#board .card", timeout=20_000)
        await page.wait_for_function(
            "() => (document.getElementById('message')?.textContent ?? '').includes('wendy')"
        )
    assert "you play as" in await page.inner_text("#message")
    assert await page.locator("#message a[href='/account']").count() == 1
    assert not page_errors(page)


async def test_a_request_the_server_cannot_answer_is_said_in_words(
    server: ServerProcess, browser: Browser
) -> None:
    """The account page's requests, with the server gone: the page says so in words, not
    the browser's "Failed to fetch"."""
    page = await new_page(browser)
    await page.goto(f"{server.url}/account")
    await page.wait_for_selector("#make-code button")
    server.kill()
    try:
        await page.click("#make-code button")
        said = page.locator("#make-code .message.error")
        await said.wait_for()
        assert await said.inner_text() == "The server cannot be reached."
    finally:
        await server.start()


async def test_the_account_page_is_drawn_whole_with_its_devices(
    server: ServerProcess, browser: Browser
) -> None:
    """The account page shows its forms once the devices signed in are read: drawn before,
    the list came in under them a moment later and pushed every form below it down, from
    under a pointer (or a test's click) about to land on one."""
    page = await new_page(browser)
    held: list[Route] = []  # the devices, read once the page has been looked at

    async def hold(route: Route) -> None:
        held.append(route)

    await page.route("**/me/devices", hold)
    await page.goto(f"{server.url}/account")
    for _ in range(100):
        if held:
            break
        await page.wait_for_timeout(50)
    assert held
    top = "() => document.querySelector('#sign-out button')?.getBoundingClientRect().top ?? null"
    drawn = await page.evaluate(top)
    await held[0].continue_()
    await page.wait_for_selector("#devices li.current")
    assert drawn is None or drawn == await page.evaluate(top)
    assert page_errors(page) == []


async def renamed_on_the_account_page(page: Page, base: str, typed: str) -> None:
    """The page's player renamed on the account page, `typed` in its name field: the page
    is drawn again under the new name, `typed` without the spaces around it."""
    await page.goto(f"{base}/account")
    await page.wait_for_selector("#rename input")
    await page.fill("#rename input", typed)
    await page.click("#rename button")
    await page.wait_for_function(
        "name => document.querySelector('#main h1')?.textContent === name", arg=typed.strip()
    )


async def test_a_new_name_chosen_on_the_account_page_is_the_one_in_the_header(
    server: ServerProcess, browser: Browser
) -> None:
    page = await new_page(browser)
    await renamed_on_the_account_page(page, server.url, "renamed_ann")
    assert await page.inner_text("#who") == "renamed_ann"
    assert page_errors(page) == []


async def test_a_name_typed_with_spaces_around_it_on_the_account_page_is_the_name(
    server: ServerProcess, browser: Browser
) -> None:
    """A phone's keyboard puts a space after a word it completes: the account page sent the
    name as typed, and a rename was refused ("a name has letters (A-Z), digits ...") and a
    sign-in found "no player is called 'zoe '", where the lobby and the race page take
    the name without the spaces around it. So does the account page now."""
    base = server.url
    await claimed_elsewhere(base, "spaced_zoe", "a good password")
    page = await new_page(browser)
    await renamed_on_the_account_page(page, base, " spaced_ann ")
    await signed_in_on_the_account_page(page, base, "spaced_zoe ", "a good password")
    assert page_errors(page) == []


async def claimed_elsewhere(base: str, name: str, password: str) -> dict[str, str]:
    """A claimed player signed in on a laptop and a phone (over HTTP): their keys."""
    status, body, _ = await call(base, "POST", "/players", {"label": "laptop"})
    assert status == 201, body
    laptop = body["key"]
    await call(base, "POST", "/me/name", {"name": name}, laptop)
    status, body, _ = await call(base, "POST", "/me/claim", {"password": password}, laptop)
    assert status == 200, body
    sign_in = {"name": name, "password": password, "label": "phone"}
    status, body, _ = await call(base, "POST", "/sign-in", sign_in)
    assert status == 200, body
    return {"laptop": laptop, "phone": body["key"]}


async def signs_in(base: str, key: str) -> bool:
    status, _, _ = await call(base, "GET", "/me", key=key)
    return status == 200


async def signed_in_on_the_account_page(page: Page, base: str, name: str, password: str) -> None:
    await page.goto(f"{base}/account")
    await page.fill("#login-name", name)
    await page.fill("#login-password", password)
    async with page.expect_navigation():
        await page.click("#sign-in button")
    await page.wait_for_function(
        "name => document.getElementById('who')?.textContent === name", arg=name.strip()
    )


async def test_the_account_page_lists_the_devices_and_signs_a_lost_one_out(
    server: ServerProcess, browser: Browser
) -> None:
    """The devices signed in as the player, this browser marked; "Sign out" of a lost phone
    and "Sign out everywhere else" end those keys. A sign-in here as another player signs
    out the key this browser held before (nobody holds it any more)."""
    base = server.url
    keys = await claimed_elsewhere(base, "kim", "kim's secret")
    page = await new_page(browser)
    await page.goto(f"{base}/account")
    await page.wait_for_selector("#devices li.current")
    guest_key = str((await kept_player(page))["key"])
    assert await page.inner_text("#devices li.current .label") == "Chrome on Linux"
    await signed_in_on_the_account_page(page, base, "kim", "kim's secret")
    assert not await signs_in(base, guest_key)  # the guest's key, forgotten, is signed out
    keys["browser"] = str((await kept_player(page))["key"])
    status, body, _ = await call(
        base, "POST", "/sign-in", {"name": "kim", "password": "kim's secret", "label": "tablet"}
    )
    assert status == 200, body
    keys["tablet"] = body["key"]

    await page.goto(f"{base}/account")
    rows = page.locator("#devices li")
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 4")
    labels = await rows.locator(".label").all_inner_texts()
    assert sorted(labels) == ["Chrome on Linux", "laptop", "phone", "tablet"]
    assert await page.inner_text("#devices li.current .label") == "Chrome on Linux"
    assert await page.locator("#devices li.current button").count() == 0  # not this one

    await page.click("#devices li:has(.label:text-is('phone')) button")
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 3")
    assert "phone is signed out" in await page.inner_text("#devices .message")
    assert not await signs_in(base, keys["phone"])
    assert await signs_in(base, keys["laptop"]) and await signs_in(base, keys["browser"])

    await page.click("#sign-out-others")
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 1")
    assert "2 other devices were signed out" in await page.inner_text("#devices .message")
    assert not await signs_in(base, keys["laptop"]) and not await signs_in(base, keys["tablet"])
    assert await signs_in(base, keys["browser"])
    assert await page.locator("#sign-out-others").is_hidden()
    await page.reload()
    await page.wait_for_selector("#devices li.current")
    assert await page.inner_text("#who") == "kim"
    for key in keys.values():
        assert not [u for u in seen(page).requests + seen(page).sockets if key in u]
    assert page_errors(page) == []


async def test_a_double_click_on_the_account_pages_buttons_asks_once(
    server: ServerProcess, browser: Browser
) -> None:
    """Each button of the account page asks once, however quickly clicked twice: a second
    sign-in made a second key, a second "Sign out" of a device was refused (no such
    device), a second "Sign out everywhere else" said that no other device was signed in,
    a second password change was refused (wrong password: the first had changed it) and
    counted against the sign-in limits, a second rename drew the page twice."""
    base = server.url
    await claimed_elsewhere(base, "max", "max's secret")
    page = await new_page(browser)

    def posts(path: str) -> list[str]:
        return [u for u in seen(page).requests if urlparse(u).path.endswith(path)]

    await page.goto(f"{base}/account")
    await page.fill("#login-name", "max")
    await page.fill("#login-password", "max's secret")
    async with page.expect_navigation():
        await page.dblclick("#sign-in button")
    await page.wait_for_function("() => document.getElementById('who')?.textContent === 'max'")
    assert len(posts("/sign-in")) == 1, posts("/sign-in")
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 3")

    await page.dblclick("#devices li:has(.label:text-is('phone')) button")
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 2")
    assert "phone is signed out" in await page.inner_text("#devices .message")
    assert len([u for u in posts("/sign-out") if "/me/devices/" in u]) == 1
    await page.dblclick("#sign-out-others")
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 1")
    assert len(posts("/me/sign-out-others")) == 1
    assert await page.inner_text("#devices .message") == "1 other device was signed out."

    await page.fill("#current-password", "max's secret")
    await page.fill("#new-password", "max's new secret")
    await page.fill("#new-password-again", "max's new secret")
    await page.dblclick("#change-password button")
    await page.wait_for_function(
        "() => document.querySelector('#change-password .message')?.textContent.includes('changed')"
    )
    assert len(posts("/me/password")) == 1
    assert "Your password is changed" in await page.inner_text("#change-password .message")

    await page.fill("#rename input", "max_two")
    await page.dblclick("#rename button")
    await page.wait_for_function(
        "() => document.querySelector('#main h1')?.textContent === 'max_two'"
    )
    assert len(posts("/me/name")) == 1
    await page.dblclick("#make-code button")
    await page.wait_for_function(
        "() => document.querySelector('#make-code .message')?.textContent.includes('code')"
    )
    assert len(posts("/me/link")) == 1
    assert await page.locator("#main h1").count() == 1
    assert page_errors(page) == []


async def test_a_double_clicks_second_click_asks_nothing_even_after_the_first_is_answered(
    server: ServerProcess, browser: Browser
) -> None:
    """A busy browser may handle the second click of a double click after the answer to the
    first came back and gave the button back: that click asked again (a second link code,
    the first one's message replaced). The second click of a double click asks nothing."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/account")
    button = page.locator("#make-code button")
    await button.wait_for()
    box = await button.bounding_box()
    assert box is not None
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await page.mouse.down(click_count=1)
    await page.mouse.up(click_count=1)
    await page.wait_for_function(
        "() => document.querySelector('#make-code .message')?.textContent.includes('code')"
    )
    first = await page.inner_text("#make-code .message")
    await page.wait_for_function("() => !document.querySelector('#make-code button').disabled")
    await page.mouse.down(click_count=2)  # the same double click's second, late
    await page.mouse.up(click_count=2)
    await page.wait_for_timeout(500)
    links = [u for u in seen(page).requests if urlparse(u).path == "/me/link"]
    assert len(links) == 1, links
    assert await page.inner_text("#make-code .message") == first
    assert page_errors(page) == []


async def test_a_claimed_player_changes_the_password_on_the_account_page(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    guest = await new_page(browser)
    await guest.goto(f"{base}/account")
    await guest.wait_for_selector("#claim")
    assert await guest.locator("#change-password").count() == 0  # no password to change

    keys = await claimed_elsewhere(base, "lou", "lou's secret")
    page = await new_page(browser)
    await signed_in_on_the_account_page(page, base, "lou", "lou's secret")
    await page.wait_for_selector("#change-password")
    assert await page.locator("#claim").count() == 0
    said = page.locator("#change-password .message")

    await page.fill("#current-password", "not lou's secret")
    await page.fill("#new-password", "lou's new secret")
    await page.fill("#new-password-again", "lou's new secret")
    await page.click("#change-password button")
    await page.wait_for_selector("#change-password .message.error")
    assert "wrong_password" in await said.inner_text()
    assert await signs_in(base, keys["phone"])  # nothing changed

    await page.fill("#current-password", "lou's secret")
    await page.fill("#new-password", "lou's new secret")
    await page.fill("#new-password-again", "lou's new secret")
    await page.click("#change-password button")
    await page.wait_for_function(
        "() => document.querySelector('#change-password .message')?.textContent.includes('changed')"
    )
    text = await said.inner_text()
    assert "Your password is changed" in text and "2 other devices were signed out" in text
    assert await page.input_value("#current-password") == ""  # not left on the page
    await page.wait_for_function("() => document.querySelectorAll('#devices li').length === 1")
    assert not await signs_in(base, keys["laptop"]) and not await signs_in(base, keys["phone"])
    assert await signs_in(base, str((await kept_player(page))["key"]))
    old = {"name": "lou", "password": "lou's secret"}
    status, body, _ = await call(base, "POST", "/sign-in", old)
    assert (status, body["error"]["code"]) == (401, "wrong_password")
    status, _, _ = await call(
        base, "POST", "/sign-in", {"name": "lou", "password": "lou's new secret"}
    )
    assert status == 200
    # The one refusal, the wrong current password, is the browser's only complaint.
    [refused] = page_errors(page)
    assert "401" in refused, refused
    assert page_errors(guest) == []


async def test_the_note_that_a_guest_has_no_name_goes_once_they_choose_one(
    server: ServerProcess, browser: Browser
) -> None:
    """A guest whose typed name is another player's takes the seat as their guest name: the
    race page says so, and where a name of their own is chosen. Once they have chosen one
    (on the account page, in another tab) the note no longer holds and goes, and the
    header says the new name, without a move or a reload."""
    base = server.url
    await new_player(base, "wendy")
    room = (await create_room(base, seats=2))["id"]
    page = await new_page(browser)
    await take_seat(page, base, room, "wendy")
    await page.wait_for_function("() => document.querySelector('#message').textContent")
    note = await page.inner_text("#message")
    assert "wendy" in note and "you play as Guest-" in note, note
    assert await page.get_attribute("#message a", "href") == "/account"
    account = await new_page(browser, beside=page)  # the same browser, another tab
    await account.goto(f"{base}/account")
    await account.fill("#name", "wendy_two")
    await account.click("#rename button[type=submit]")
    await account.wait_for_function(
        "() => document.querySelector('h1')?.textContent === 'wendy_two'"
    )
    await page.wait_for_function("() => document.querySelector('#who').textContent === 'wendy_two'")
    await page.wait_for_function("() => document.querySelector('#message').textContent === ''")
    assert page_errors(page, account) == []


async def test_a_guest_is_asked_for_a_name_before_claiming_the_account(
    server: ServerProcess, browser: Browser
) -> None:
    """A guest's name cannot sign in, so the server refuses to claim the account under it:
    the account page says to choose a name first, in words, and offers no Claim that can
    only be refused (nor says which request would be). Once named, the account is claimed
    there."""
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/account")
    await page.wait_for_selector("#claim")
    claim = await page.inner_text("#claim")
    assert "choose a name" in claim.lower(), claim
    assert await page.is_disabled("#claim button[type=submit]")
    assert await page.is_disabled("#password")
    await page.fill("#name", "quinn")
    await page.click("#rename button[type=submit]")
    await page.wait_for_function("() => document.querySelector('h1')?.textContent === 'quinn'")
    await page.fill("#password", "quinn's secret")
    await page.fill("#again", "quinn's secret")
    await page.click("#claim button[type=submit]")
    await page.wait_for_selector("text=Your account has a password")
    assert "/me/" not in await page.inner_text("main")
    assert page_errors(page) == []


@contextlib.asynccontextmanager
async def records_away(
    browser: Browser, redis_url: str, postgres: OwnPostgres, tmp_path: Path
) -> AsyncIterator[tuple[ServerProcess, Relay, Page, dict[str, object]]]:
    """A server whose records' database is reached through a relay, and a player's page
    (made at its first visit); the relay refuses from then on, until `listen()`."""
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        env = environment(REDIS_URL=redis_url, SOLRACE_DATABASE_URL=through)
        server = ServerProcess(free_port(), env, log=tmp_path / "server.log")
        await server.start()
        try:
            page = await new_page(browser)
            await page.goto(f"{server.url}/")
            async with asyncio.timeout(10):  # the first visit makes the player
                while await page.evaluate("localStorage.getItem('solrace.player')") is None:
                    await asyncio.sleep(0.05)
            player = await kept_player(page)
            relay.cut()
            await relay.refuse()
            yield server, relay, page, player
        finally:
            await server.stop()


async def test_a_seat_asked_for_once_the_records_are_back_is_the_players(
    browser: Browser, redis_url: str, postgres: OwnPostgres, tmp_path: Path
) -> None:
    """A player's page opened while the records' database is away: its socket's
    `identify` is answered `unavailable`, so the socket is nobody, and the seat it asks
    for is refused for now. Asked again once the records are back, on the same page, the
    seat is taken, as the player: the page identifies again before it asks, not only when
    its socket opens (the server refuses a nobody's join until an `identify` is answered)."""
    async with records_away(browser, redis_url, postgres, tmp_path) as (server, relay, page, me):
        room = str((await create_room(server.url))["id"])
        await page.goto(f"{server.url}/play/{room}")
        await page.fill("#seat-name", "ann")
        await page.click("#take-seat")
        said = await page.wait_for_selector("#seat-form .error")
        assert await said.inner_text() == SEAT_LATER  # in words, not the protocol's
        await relay.listen()
        await page.click("#take-seat")
        await page.wait_for_selector("#ready")
        status, body, _ = await call(server.url, "GET", f"/rooms/{room}")
        assert status == 200
        assert [s.get("player") for s in body["room"]["players"]] == [me["id"]]


async def test_a_quick_match_asked_while_the_records_are_away_is_asked_again(
    browser: Browser, redis_url: str, postgres: OwnPostgres, tmp_path: Path
) -> None:
    """A player's Quick match while the records' database is away is refused for now (who
    the player is cannot be checked): the page says so in words and asks again, with
    backoff, until the records are back, then the player is matched, as the player."""
    async with records_away(browser, redis_url, postgres, tmp_path) as (server, relay, page, me):
        await page.click("[data-quick=shaula]")
        status = page.locator("#quick-status")
        async with asyncio.timeout(10):
            while MATCH_LATER not in await status.inner_text():
                await asyncio.sleep(0.05)
        await asyncio.sleep(3)  # asked again meanwhile: said all along, not "cannot be reached"
        assert await status.inner_text() == f"{MATCH_LATER} cancel"
        await relay.listen()
        async with asyncio.timeout(10):  # queued: looking again, as it says
            while "Looking for a Shaula opponent" not in await status.inner_text():
                await asyncio.sleep(0.05)
        async with WsClient.connect(server.url) as bo:
            await bo.send(p.QuickMatch(game="shaula", name="bo"))
            matched = await bo.expect(p.Matched, timeout=15)
        await page.wait_for_url(f"**/play/{matched.room}")
        status_code, body, _ = await call(server.url, "GET", f"/rooms/{matched.room}")
        assert status_code == 200
        assert me["id"] in [s.get("player") for s in body["room"]["players"]]
