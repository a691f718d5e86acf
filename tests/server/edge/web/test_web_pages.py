"""The lobby (create with every setting, quick match, the live list), the TV page switching
races by itself, the rules page, the four-colour option, a game name no game has, and no
console error anywhere."""

from __future__ import annotations

import asyncio
import itertools
from contextlib import AsyncExitStack
from urllib.parse import urlparse

from playwright.async_api import Browser, Route, WebSocket
from support.http import create_room, get_json
from support.server_processes import ServerProcess
from support.web import (
    new_page,
    open_tournament_form,
    page_errors,
    room_view,
    seen,
    take_seat,
    until_sent,
)
from support.wsclient import WsClient, race_alone

import core
import protocol as p


async def test_the_tv_shows_the_closest_race_and_switches_when_it_ends(
    quiet_server: ServerProcess, browser: Browser
) -> None:
    base = quiet_server.url
    tv = await new_page(browser)
    await tv.goto(f"{base}/tv")
    await tv.wait_for_selector("#tv-idle")  # nothing runs yet
    await tv.goto("about:blank")  # (a look between the two starts would tune to the first)
    first = (await create_room(base, game="stalactites", seed=5, seats=1))["id"]
    second = (await create_room(base, game="shaula", seed=617, seats=1))["id"]
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await race_alone(ann, first)
        await race_alone(bo, second)  # equally close, started last: shown first
        await tv.goto(f"{base}/tv")
        await tv.wait_for_selector(f'#tv[data-room="{second}"] .watched .card')
        await bo.send(p.Resign())
        await tv.wait_for_selector(f'#tv[data-room="{second}"] #results-table')
        await tv.wait_for_selector(f'#tv[data-room="{first}"] .watched .card', timeout=20_000)
        # It is live: a move in the race shown is drawn on its board.
        await ann.send(p.Move(seq=1, move="t3 f1"))
        await ann.expect(p.Accepted)
        await tv.wait_for_function(
            "() => document.querySelector('#players .num').textContent.startsWith('1/')"
        )
        await ann.send(p.Resign())
        await tv.wait_for_selector("#tv-idle", timeout=20_000)  # and back to waiting
    assert page_errors(tv) == []


async def test_the_tv_says_when_the_server_cannot_be_reached(
    quiet_server: ServerProcess, browser: Browser
) -> None:
    """With no race to show, the TV says so; with no server to ask, it says that instead
    (not that no race runs), and picks up again once the server is back."""
    page = await new_page(browser)
    await page.goto(f"{quiet_server.url}/tv")
    await page.wait_for_selector("#tv-idle")
    assert "No race is running" in await page.inner_text("#tv-idle")
    await quiet_server.stop()
    try:
        await page.wait_for_function(
            "() => document.querySelector('#tv-idle')?.textContent.includes('cannot be reached')"
        )
    finally:
        await quiet_server.start()
    await page.wait_for_function(
        "() => document.querySelector('#tv-idle')?.textContent.includes('No race is running')"
    )


async def test_the_lobby_creates_a_room_with_every_setting(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.fill("#name", "ann")
    await page.select_option("select[name=game]", "stalactites")
    await page.click("#more-settings summary")  # the technical settings are folded
    # A deal by its number is never rated; back to a deal of the server's, the room is
    # rated again as it was.
    await page.select_option("select[name=seed_mode]", "number")
    assert not await page.is_checked("input[name=rated]")
    await page.select_option("select[name=seed_mode]", "random")
    assert await page.is_checked("input[name=rated]")
    await page.select_option("select[name=seed_mode]", "number")
    await page.fill("input[name=seed]", "5")
    await page.fill("input[name=seats]", "3")
    await page.uncheck("input[name=undo]")
    await page.check("input[name=hints]")
    await page.fill("input[name=time_limit]", "10")
    await page.fill("input[name=spectator_delay]", "4")
    await page.fill("input[name=grace]", "20")
    await page.fill("input[name=countdown]", "2")
    await page.click("#create button[type=submit]")
    await page.wait_for_selector("#ready")  # seated at once, as "ann"
    room = page.url.split("/play/")[1].split("?")[0]
    view = room_view(base, room)
    assert view["game"] == "stalactites" and view["seats"] == 3
    assert view["undo"] is False and view["hints"] is True
    assert view["time_limit"] == 600 and view["spectator_delay"] == 4
    assert view["grace"] == 20 and view["countdown"] == 2 and view["seed_mode"] == "fixed"
    assert [x["name"] for x in view["players"]] == ["ann"]  # type: ignore[union-attr]
    # The lobby lists it, live, with its share link and a watch button.
    lobby = await new_page(browser)
    await lobby.goto(base)
    row = lobby.locator(f'tr[data-room="{room}"]')
    await row.wait_for()
    assert "Stalactites" in await row.inner_text() and "1/3" in await row.inner_text()
    assert await row.locator("button.small").get_attribute("title") == f"{base}/play/{room}"
    async with WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await lobby.wait_for_function(
            "room => document.querySelector(`tr[data-room='${room}']`).textContent.includes('2/3')",
            arg=room,
        )
    # A second browser takes a seat: not the host, it is offered no start.
    cy = await new_page(browser)
    await take_seat(cy, base, room, "cy")
    assert await cy.locator("#start").count() == 0 and await page.locator("#start").count() == 1
    for each in (page, cy):
        assert "null" not in await each.inner_text("main")
    # A bad setting is refused with the server's reason, on the page.
    await page.goto(base)
    await page.click("#more-settings summary")
    await page.select_option("select[name=seed_mode]", "number")
    await page.fill("input[name=seed]", str(2**63))  # one past the last deal
    await page.click("#create button[type=submit]")
    await page.wait_for_selector("#create-error:not(:empty)")
    assert "seed must be 1..9223372036854775807" in await page.inner_text("#create-error")
    # Chrome logs the refused POST (400) itself; nothing else may be logged.
    assert [e for e in page_errors(page, lobby) if "status of 400" not in e] == []


async def test_a_setting_in_minutes_is_bounded_in_minutes(
    server: ServerProcess, browser: Browser
) -> None:
    """The lobby's time limit and a tournament's minutes per race are typed in minutes: one
    over the server's day (1440 minutes) was sent, and refused with "time_limit must be
    between 1 and 86400", seconds the player never typed. The form now says the bound in
    the field's own unit, and sends nothing; so does a tournament's spectator delay."""
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.click("#more-settings summary")
    await page.fill("input[name=time_limit]", "100000")
    await page.click("#create button[type=submit]")
    assert "1440" in await page.eval_on_selector(
        "input[name=time_limit]", "input => input.validationMessage"
    )
    await open_tournament_form(page, base)
    await page.fill("input[name=tour_name]", "Sunday cup")
    for field, too_much, bound in (
        ("tour_time_limit", "100000", "1440"),
        ("tour_delay", "99999", "3600"),
    ):
        await page.fill(f"input[name={field}]", too_much)
        await page.click("#tour-create button[type=submit]")
        assert bound in await page.eval_on_selector(
            f"input[name={field}]", "input => input.validationMessage"
        )
        await page.fill(f"input[name={field}]", "1")
    await asyncio.sleep(0.5)
    assert not [u for u in seen(page).posts if u in (f"{base}/rooms", f"{base}/tournaments")]
    assert page_errors(page) == []


async def test_spans_of_time_read_as_people_say_them(
    server: ServerProcess, browser: Browser
) -> None:
    """A room's time limit was listed in rounded minutes ("2 min" for 90 s, "0 min" for 20
    s) and a racer away was said to forfeit "in 3599 s" in a room that waits an hour for
    them. Spans read now as the terminal client says them: "1 min 30 s", "59 min 59 s"."""
    base = server.url
    limited = (await create_room(base, game="shaula", seats=2, time_limit=90))["id"]
    lobby = await new_page(browser)
    await lobby.goto(base)
    row = lobby.locator(f'tr[data-room="{limited}"]')
    await row.wait_for()
    assert "1 min 30 s" in await row.inner_text()
    room = (await create_room(base, game="shaula", seats=2, grace=3600))["id"]
    page = await new_page(browser)
    async with WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await bo.send(p.Ready())
        await take_seat(page, base, room, "ann")
        await page.click("#ready")
        await page.wait_for_selector("#board .card")
    await page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('forfeits in 59 min')"
    )
    assert page_errors(page, lobby) == []


async def test_a_double_click_on_create_makes_one_room_and_one_tournament(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on "Create and take a seat", or on "Organise", makes one room (one
    tournament): the second click made a second, which nobody was in, listed in the lobby
    for everyone to find."""
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.dblclick("#create button[type=submit]")
    await page.wait_for_selector("#ready")
    _, listed = await get_json(f"{base}/rooms")
    assert len(listed["rooms"]) == 1, listed
    await open_tournament_form(page, base)
    await page.fill("input[name=tour_name]", "Once")
    await page.dblclick("#tour-create button[type=submit]")
    await page.wait_for_selector("#tour-start")
    _, listed = await get_json(f"{base}/tournaments")
    assert [t["name"] for t in listed["tournaments"]] == ["Once"], listed
    assert page_errors(page) == []


async def test_the_lobby_list_is_pushed_live_and_polled_only_while_the_socket_is_down(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.wait_for_selector("#rooms[data-feed=live]")  # the first `lobby` came
    # A socket slow to come (a loaded machine) has the list polled until then: from the
    # first `lobby` on, the list is the socket's alone.
    lists = [u for u in seen(page).requests if urlparse(u).path == "/rooms"]
    room = (await create_room(base, game="shaula", seats=2, countdown=0.2))["id"]  # not by the page
    row = page.locator(f'tr[data-room="{room}"]')
    await row.wait_for(timeout=10_000)
    assert "lobby" in await row.inner_text() and "0/2" in await row.inner_text()
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await page.wait_for_selector(f'tr[data-room="{room}"] .status-running', timeout=10_000)
        assert "ann, bo" in await row.inner_text()
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        await row.wait_for(state="detached", timeout=10_000)  # finished: off the list
    since = [u for u in seen(page).requests if urlparse(u).path == "/rooms"][len(lists) :]
    assert since == []  # every change was pushed: not one HTTP list request
    assert page_errors(page) == []
    # The socket down (the server killed): the page says so and polls; back: live again.
    server.kill()
    await page.wait_for_selector("#rooms[data-feed=polling]", timeout=15_000)
    assert "Live updates are down" in await page.inner_text("#rooms-live")
    await server.start()
    await page.wait_for_selector("#rooms[data-feed=live]", timeout=15_000)
    assert await page.inner_text("#rooms-live") == ""
    later = (await create_room(base, game="moojub", seats=3))["id"]
    await page.locator(f'tr[data-room="{later}"]').wait_for(timeout=10_000)
    # Chrome logs the outage's refused socket and requests itself; nothing else. One begun
    # in the killed process's last moments (its sockets are closed one after another, the
    # listening one perhaps last, tens of milliseconds later on a busy machine) is reset.
    outage = ("net::ERR_CONNECTION_REFUSED", "net::ERR_CONNECTION_RESET")
    assert [e for e in page_errors(page) if not any(code in e for code in outage)] == []


async def test_quick_match_seats_two_browsers_in_one_race(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    ann, bo = await new_page(browser), await new_page(browser)
    for page, name in ((ann, "ann"), (bo, "bo")):
        await page.goto(base)
        await page.fill("#name", name)
        await page.click("[data-quick=shaula]")
    for page in (ann, bo):
        await page.wait_for_url("**/play/*")
        await page.wait_for_selector("#board .card", timeout=20_000)  # the race starts
    assert ann.url == bo.url
    text = await ann.inner_text("#players")
    assert "ann (you)" in text and "bo" in text
    assert page_errors(ann, bo) == []


async def test_cancelling_a_quick_match_says_so_to_the_server(
    server: ServerProcess, browser: Browser
) -> None:
    """Cancel sends `quick_cancel` (docs/protocol.md): a partner found a moment before
    still gets the player its `matched`, where a socket just closed left the player seated
    in a race they never heard of."""
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.click("[data-quick=stalactites]")
    await page.wait_for_selector("#quick-status button")
    await until_sent(page, '"type":"quick"')  # the quick socket is open and has asked
    await page.click("#quick-status button")  # cancel
    await page.wait_for_function("() => !document.querySelector('#quick-status button')")
    await until_sent(page, '"quick_cancel"')
    assert page_errors(page) == []


# Sockets opened after `window.slowSockets` is set stay connecting for a second and a half
# before the real one is made: a cancel can then come before the server was ever asked.
SLOW_SOCKETS = """
const Real = window.WebSocket;
class Slow extends EventTarget {
  constructor(url) {
    super();
    this.readyState = Real.CONNECTING;
    this.real = null;
    this.gone = false;
    setTimeout(() => {
      if (this.gone) return;
      const ws = (this.real = new Real(url));
      const pass = (type, state) => ws.addEventListener(type, (e) => {
        if (state !== undefined) this.readyState = state;
        const data = type === "message" ? { data: e.data } : {};
        this.dispatchEvent(new MessageEvent(type, data));
      });
      pass("open", Real.OPEN);
      pass("message");
      pass("close", Real.CLOSED);
    }, 1500);
  }
  send(data) { this.real.send(data); }
  close() {
    this.gone = true;
    this.readyState = Real.CLOSED;
    if (this.real) this.real.close();
    else this.dispatchEvent(new Event("close"));
  }
}
for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Slow[name] = Real[name];
window.WebSocket = function (url) { return window.slowSockets ? new Slow(url) : new Real(url); };
for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) window.WebSocket[name] = Real[name];
"""


async def test_a_quick_match_cancelled_before_its_socket_opened_never_asks(
    server: ServerProcess, browser: Browser
) -> None:
    """A cancel while the quick match's socket still connects closes it: the server is never
    asked, where the page once dropped the unsendable `quick_cancel` and left the socket to
    open, ask for a match the player had cancelled, and follow its `matched` into a race."""
    page = await new_page(browser)
    await page.add_init_script(SLOW_SOCKETS)
    await page.goto(server.url)
    await page.evaluate("() => { window.slowSockets = true; }")
    await page.click("[data-quick=shaula]")
    await page.wait_for_selector("#quick-status button")
    await page.click("#quick-status button")  # cancel, the socket still connecting
    await page.wait_for_timeout(3000)  # past the moment the socket would have opened
    assert not seen(page).sent('"type":"quick"'), seen(page).frames
    assert await page.inner_text("#quick-status") == ""
    assert page_errors(page) == []


async def test_a_quick_match_asked_again_while_the_first_sets_the_name_is_the_only_one(
    server: ServerProcess, browser: Browser
) -> None:
    """A second Quick match clicked while the first is still making the typed name the
    player's (requests to the server) replaces it: the first opens no socket. It once opened
    one the page no longer held, which no cancel reached: it stayed in the queue and took the
    next partner, leading the player into a race after they had cancelled."""
    base = server.url
    page = await new_page(browser)
    held: list[Route] = []  # the first click's name check, answered once both clicks are in

    async def hold(route: Route) -> None:
        if held:
            await route.continue_()
        else:
            held.append(route)

    await page.route("**/names/**", hold)
    await page.goto(base)
    await page.fill("#name", "ann")
    await page.click("[data-quick=shaula]")
    for _ in range(100):
        if held:
            break
        await page.wait_for_timeout(50)
    assert len(held) == 1
    await page.click("[data-quick=stalactites]")
    await held[0].continue_()
    await page.wait_for_function(
        "() => document.querySelector('#quick-status').textContent.includes('Stalactites')"
    )
    await until_sent(page, '"game":"stalactites"')  # that socket is open and has asked
    await page.click("#quick-status button")  # cancel
    await page.wait_for_function("() => !document.querySelector('#quick-status button')")
    # Two players ask for Shaula: paired with each other, as nobody else waits for it.
    async with WsClient.connect(base) as bo, WsClient.connect(base) as cy:
        await bo.send(p.QuickMatch(game="shaula", name="bo"))
        await bo.expect(p.Queued)
        await cy.send(p.QuickMatch(game="shaula", name="cy"))
        first, second = await bo.expect(p.Matched), await cy.expect(p.Matched)
        assert first.room == second.room
    assert not seen(page).sent('"game":"shaula"'), seen(page).frames
    assert "/play/" not in page.url
    assert page_errors(page) == []


async def test_a_quick_match_asked_again_while_the_first_renames_is_not_told_its_own_name_is_taken(
    server: ServerProcess, browser: Browser
) -> None:
    """A second Quick match clicked while the first is making the typed name the player's
    asks after it: it finds the name the player's already. Asked beside it, its name check
    could be answered after the first's rename, and the page said the player's own new name
    was taken ("another player is called 'ann': you play as ...")."""
    base = server.url
    page = await new_page(browser)
    renamed = asyncio.Event()
    checks: list[str] = []

    async def name_check(route: Route) -> None:
        checks.append(route.request.url)
        if len(checks) > 1:  # asked beside the first: answered after its rename
            await asyncio.wait_for(renamed.wait(), 10)
        await route.continue_()

    async def rename(route: Route) -> None:
        response = await route.fetch()
        await route.fulfill(response=response)
        renamed.set()

    await page.route("**/names/**", name_check)
    await page.route("**/me/name", rename)
    await page.goto(base)
    await page.fill("#name", "ann")
    await page.dblclick("[data-quick=shaula]")
    await page.wait_for_function(
        "() => document.querySelector('#quick-status').textContent.includes('Looking')"
    )
    await until_sent(page, '"game":"shaula"')
    await page.wait_for_timeout(300)  # a late answer to a second check would be shown by now
    status = await page.inner_text("#quick-status")
    assert "you play as" not in status, status
    assert renamed.is_set()
    assert page_errors(page) == []


async def test_a_cancelled_quick_match_lets_its_socket_go_once_the_server_says_so(
    server: ServerProcess, browser: Browser
) -> None:
    """The server answers a cancel that took with `unqueued` (docs/protocol.md): the page
    closes the quick match's socket then, not after a guess at how long a late `matched`
    might take."""
    page = await new_page(browser)
    told: list[float] = []
    closed: list[float] = []
    loop = asyncio.get_running_loop()

    def watch(ws: WebSocket) -> None:
        ws.on(
            "framereceived",
            lambda frame: told.append(loop.time()) if '"unqueued"' in str(frame) else None,
        )
        ws.on("close", lambda _: closed.append(loop.time()))

    page.on("websocket", watch)
    await page.goto(server.url)
    await page.click("[data-quick=shaula]")
    await page.wait_for_selector("#quick-status button")
    await until_sent(page, '"quick"')  # the quick socket is open and has asked
    await page.click("#quick-status button")  # cancel
    for _ in range(100):
        if told and closed:
            break
        await page.wait_for_timeout(50)
    assert told, "no unqueued"
    assert closed and closed[-1] - told[0] < 1.0, (told, closed)
    assert page_errors(page) == []


async def test_a_quick_match_says_it_looks_again_once_the_server_is_back(
    server: ServerProcess, browser: Browser
) -> None:
    """While the server cannot be reached the quick match says so; once its socket is back
    (and the request with it) it says it is looking again, and a partner still seats it."""
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.click("[data-quick=moojub]")
    status = page.locator("#quick-status")
    await page.wait_for_selector("#quick-status button")
    await server.stop()  # its sockets closed, going away (1001)
    try:
        await page.wait_for_function(
            "() => document.querySelector('#quick-status').textContent"
            ".includes('cannot be reached')"
        )
    finally:
        await server.start()
    await page.wait_for_function(
        "() => document.querySelector('#quick-status').textContent"
        ".startsWith('Looking for a Moojub')",
        timeout=10_000,
    )
    assert "cannot be reached" not in await status.inner_text()
    async with WsClient.connect(base) as partner:
        await partner.send(p.QuickMatch(game="moojub", name="bo"))
        await page.wait_for_url("**/play/*")
        await page.wait_for_selector("#board .card", timeout=20_000)


async def test_every_page_loads_without_a_console_error_and_only_from_this_server(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="moojub", seats=2, spectator_delay=3))["id"]
    page = await new_page(browser)
    checks = {
        "/": "#rooms table",
        "/rules": "#rules h2",
        "/rules/moojub": "#rules h2",
        "/tv": "#tv-idle, #tv .watched",
        f"/play/{room}": "#take-seat",
        f"/watch/{room}": "#delay",
    }
    for path, selector in checks.items():
        await page.goto(base + path)
        await page.wait_for_selector(selector)
        assert await page.locator("header nav a[href='/rules']").count() == 1, path
    await page.goto(f"{base}/watch/{room}")
    await page.wait_for_selector("#delay[data-delay='3']")
    assert "3 s behind" in await page.inner_text("#delay")
    await page.goto(f"{base}/rules/moojub")
    await page.wait_for_selector("#rules h2")
    assert core.rules_text("moojub").splitlines()[0].lstrip("# ") in await page.inner_text("#rules")
    assert page_errors(page) == []
    assert all(url.startswith(base) for url in seen(page).requests if "://" in url)


async def test_a_rooms_pages_name_it_in_their_socket_path(
    server: ServerProcess, browser: Browser
) -> None:
    """The race and watch pages open `/ws?room=ROOM` (protocol section 1: a balancer sends
    every socket of a room to one process); the lobby's socket is for no room."""
    base, ws = server.url.replace("http://", "ws://"), "/ws?room="
    room = (await create_room(server.url, game="shaula", seats=2))["id"]
    player, spectator, lobby = [await new_page(browser) for _ in range(3)]
    await take_seat(player, server.url, room.upper(), "ann")  # a code typed in capitals
    await spectator.goto(f"{server.url}/watch/{room}")
    await spectator.wait_for_selector("#delay")
    await lobby.goto(server.url)
    await lobby.wait_for_selector("#rooms table")
    assert seen(player).sockets == [f"{base}{ws}{room}"]
    assert seen(spectator).sockets == [f"{base}{ws}{room}"]
    assert seen(lobby).sockets == [f"{base}/ws"]
    assert page_errors(player, spectator, lobby) == []


async def test_four_colour_suits_are_an_option_kept_in_the_browser(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="shaula", seed=617, seats=1))["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/play/{room}?sit=1")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    colour = "el => getComputedStyle(el).color"
    club = page.locator('#board .card[data-card="KC"]').first
    diamond = page.locator('#board .card[data-card="JD"]').first
    spade = page.locator('#board .card[data-card="KS"]').first
    heart = page.locator('#board .card[data-card="4H"]').first
    assert await club.evaluate(colour) == await spade.evaluate(colour)
    assert await diamond.evaluate(colour) == await heart.evaluate(colour)
    await page.check("#four-colour")
    four = {await c.evaluate(colour) for c in (club, diamond, spade, heart)}
    assert len(four) == 4
    await page.reload()
    await page.wait_for_selector("#board .card")
    assert await page.is_checked("#four-colour")
    assert len({await c.evaluate(colour) for c in (club, diamond, spade, heart)}) == 4
    # Each card says its rank and suit in words too.
    assert await club.get_attribute("aria-label") == "king of clubs"
    assert page_errors(page) == []


async def test_a_moojub_spectator_sees_undealt_cards_face_down(
    server: ServerProcess, browser: Browser
) -> None:
    """The hidden-card rule as the watch page draws it: a card a racer still racing has not been
    dealt comes as "??" and is drawn face down, never as a broken card."""
    base = server.url
    room = (await create_room(base, game="moojub", seats=2))["id"]
    page = await new_page(browser)
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        await page.goto(f"{base}/watch/{room}")
        await page.wait_for_selector("#players .bar")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await page.wait_for_selector(".watched .card")
        await ann.expect(p.RaceStarted, timeout=10)
        await ann.send(p.Move(seq=1, move="deal"))  # ann is dealt cards bo has not seen
        await ann.expect(p.Accepted)
        await page.wait_for_selector('.watched[data-seat="0"] .pile:not(.talon) .card.back')
        assert (
            await page.locator('.watched[data-seat="1"] .pile:not(.talon) .card.back').count() == 0
        )
        labels = await page.eval_on_selector_all(
            '.watched[data-seat="0"] .pile:not(.talon) .card.back', "cs => cs.map(c => c.ariaLabel)"
        )
        assert labels and set(labels) == {"a face-down card"}
    assert "??" not in await page.inner_text("main")
    assert page_errors(page) == []


# Where each board of a watch page is, and the room the piles in it take: [left, top, right,
# bottom, the piles' right edge, the piles' bottom edge, a card's width].
BOARDS = """() => [...document.querySelectorAll('.watched')].map(w => {
  const b = w.querySelector('.board').getBoundingClientRect();
  const piles = [...w.querySelectorAll('.pile, .card')].map(x => x.getBoundingClientRect());
  const card = w.querySelector('.card').getBoundingClientRect();
  return [w.getBoundingClientRect().left, w.getBoundingClientRect().top, b.right, b.bottom,
          Math.max(...piles.map(r => r.right)), Math.max(...piles.map(r => r.bottom)), card.width];
})"""


async def test_a_full_room_watched_on_a_wide_screen_is_seen_whole(
    server: ServerProcess, browser: Browser
) -> None:
    """Eight boards on a wide screen (1920x1080, 2560x1440) are all in the first screen,
    side by side across the screen's width, cards no smaller than a phone's; on a phone
    (390x844) they come one under the other, none wider than the screen. Nowhere is a
    pile cut off by its board's edge or a board drawn over another."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=617, seats=8))["id"]
    async with AsyncExitStack() as stack:
        racers = [await stack.enter_async_context(WsClient.connect(base)) for _ in range(8)]
        for i, racer in enumerate(racers):
            await racer.join(room, f"racer{i}")
        for racer in racers:
            await racer.send(p.Ready())
        await racers[0].expect(p.RaceStarted, timeout=10)
        for width, height, touch in ((2560, 1440, False), (1920, 1080, False), (390, 844, True)):
            page = await new_page(browser, width=width, height=height, touch=touch)
            await page.goto(f"{base}/watch/{room}")
            await page.wait_for_function(
                "() => document.querySelectorAll('.watched .card').length > 400"
            )
            boards = await page.evaluate(BOARDS)
            assert len(boards) == 8
            where = f"at {width}x{height}: {boards}"
            assert await page.evaluate("document.documentElement.scrollWidth") <= width, where
            for left, _top, right, bottom, piles_right, piles_bottom, card in boards:
                assert left >= 0 and right <= width, where
                assert piles_right <= right and piles_bottom <= bottom, where  # nothing cut off
                assert card >= 30, where  # as a phone's cards, at least
            rows = sorted({round(b[1]) for b in boards})
            for (l1, t1, r1, b1, *_), (l2, t2, r2, b2, *_) in itertools.combinations(boards, 2):
                assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, where  # no overlap
            if touch:
                assert len(rows) == 8, where  # one board a row
            else:
                assert max(b[3] for b in boards) <= height, where  # every board in sight
                assert max(b[2] for b in boards) > 0.8 * width, where  # across the screen
            assert page_errors(page) == []


async def test_a_game_name_no_game_has_is_said_so(server: ServerProcess, browser: Browser) -> None:
    """The pages named by a game (/rules/GAME, /top/GAME) say there is no such game for a
    name no game has, and show no other game's rules or leaderboard in its place."""
    base = server.url
    shaula = core.rules_text("shaula").splitlines()[2][:40]  # a line of Shaula's rules
    page = await new_page(browser)
    await page.goto(f"{base}/rules/nosuch")
    await page.wait_for_selector("#no-such-game")
    text = await page.inner_text("main")
    assert "No such game" in text and "nosuch" in text
    assert shaula not in text and await page.locator("#rules h2").count() == 0
    # The games there are, to choose from.
    assert await page.locator("main a[href='/rules/moojub']").count() == 1
    await page.goto(f"{base}/top/nosuch")
    await page.wait_for_selector("#no-such-game")
    text = await page.inner_text("main")
    assert (
        "No such game" in text and "nosuch" in text and "Shaula" not in await page.inner_text("h1")
    )
    assert await page.locator("#board").count() == 0  # no board of another game
    assert await page.locator("main a[href='/top/moojub']").count() == 1
    # A name an object has of its own in JavaScript is no game either.
    await page.goto(f"{base}/top/constructor")
    await page.wait_for_selector("#no-such-game")
    asked = [urlparse(u).path for u in seen(page).requests]
    assert not [path for path in asked if path.startswith(("/leaderboard/", "/games/shaula"))]
    # Without a game, the first game's: the pages' own starting point.
    await page.goto(f"{base}/top")
    await page.wait_for_selector("#board")
    assert await page.inner_text("h1") == "Shaula leaderboard"
    # A game's name in any case is that game, as a room's code is that room.
    await page.goto(f"{base}/top/Moojub")
    await page.wait_for_selector("#board")
    assert await page.inner_text("h1") == "Moojub leaderboard"
    await page.goto(f"{base}/rules/STALACTITES")
    await page.wait_for_selector("#rules h2")
    assert "Stalactites" in await page.inner_text("#rules")
    assert page_errors(page) == []


async def test_a_leaderboard_shows_which_board_and_period_are_chosen(
    server: ServerProcess, browser: Browser
) -> None:
    """The leaderboard's choices (by rating or a deal's best times; today, this week or all
    time) are buttons: the chosen ones look chosen (and say so to a screen reader), the
    others do not, so that a reader knows which board the rows are."""
    base = server.url
    page = await new_page(browser)

    async def chosen() -> list[str]:
        await page.wait_for_selector("#board")
        return [t.strip() for t in await page.locator("main [aria-pressed=true]").all_inner_texts()]

    async def look(label: str) -> str:
        button = page.locator("main button", has_text=label)
        return str(await button.evaluate("b => getComputedStyle(b).backgroundColor"))

    await page.goto(f"{base}/top/shaula")
    assert await chosen() == ["By rating", "All time"]
    assert await look("All time") != await look("Today")
    assert await look("By rating") != await look("Show")
    await page.click("main button:has-text('This week')")
    await page.wait_for_url("**period=week**")
    assert await chosen() == ["By rating", "This week"]
    assert await look("This week") != await look("All time")
    await page.fill("#board-seed", "617")
    await page.click("main button:has-text('Show')")
    await page.wait_for_url("**seed=617**")
    assert await chosen() == ["Show", "This week"]
    assert await look("Show") != await look("By rating")
    assert page_errors(page) == []
