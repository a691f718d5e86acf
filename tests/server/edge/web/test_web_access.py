"""Every page for everyone: axe-core (axe-playwright-python) finds no serious or critical
violation, nothing scrolls sideways on a 390x844 phone, the board plays from the keyboard
alone and by touch (tap, drag), and a live region says what happens."""

from __future__ import annotations

import json
from typing import Any

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Browser, Page
from support.http import create_room, post_ok
from support.server_processes import ServerProcess
from support.web import new_page, page_errors, room_view, shown_board, wait_acks

import core

SEED = 617
PHONE = (390, 844)


async def serious(page: Page, *, phone: bool = False) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now; on a phone with
    its rule of tap targets at least 24 px (WCAG 2.2's target size, off in axe by default)."""
    options = {"rules": {"target-size": {"enabled": True}}} if phone else None
    results = await Axe().run(page, options=options)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


async def pages(base: str, page: Page) -> Any:
    """Visit every page (and the race page in each state): yields its name, once ready."""
    waiting = (await create_room(base, game="shaula", seats=2))["id"]
    await page.goto(f"{base}/")
    await page.wait_for_selector("#rooms[data-feed=live] table")
    yield "lobby"
    await page.goto(f"{base}/play/{waiting}")
    await page.wait_for_selector("#take-seat")
    yield "seat form"
    await page.click("#take-seat")
    await page.wait_for_selector("#ready")
    yield "waiting room"
    for game in core.GAMES:
        room = (await create_room(base, game=game, seed=SEED, seats=1, countdown=0))["id"]
        await page.goto(f"{base}/play/{room}?sit=1")
        await page.click("#ready")
        await page.wait_for_selector("#board .card")
        yield f"race ({game})"
        await page.goto(f"{base}/watch/{room}")
        await page.wait_for_selector(".watched .card")
        yield f"watch ({game})"
        await page.goto(f"{base}/play/{room}")
        await page.click("#resign")
        await page.click("#resign")
        await page.wait_for_selector("#results-table")
        yield f"results ({game})"
        await page.goto(f"{base}/replay/{room}")
        await page.wait_for_selector("#verify[data-verified]")
        yield f"replay ({game})"
    running = (await create_room(base, game="shaula", seed=SEED, seats=1, countdown=0))["id"]
    other = await new_page(page.context.browser)  # type: ignore[arg-type]
    await other.goto(f"{base}/play/{running}?sit=1")
    await other.click("#ready")
    await other.wait_for_selector("#board .card")
    await page.goto(f"{base}/tv")
    await page.wait_for_selector("#tv .watched .card")
    yield "tv"
    await other.context.close()
    created = await post_ok(
        base + "/tournaments", {"name": "Access cup", "format": "rounds", "games": ["shaula"]}
    )
    tid = created["tournament"]["id"]
    for name in ("ann", "bo", "cy"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": name})
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_selector("#standings")
    yield "tournament"
    await page.goto(f"{base}/rules/moojub")
    await page.wait_for_selector("#rules h2")
    yield "rules"
    await page.goto(f"{base}/daily")
    await page.wait_for_selector(".daily-game .daily-board")
    yield "daily"
    await page.goto(f"{base}/top/shaula")
    await page.wait_for_selector("#board p, #board table")
    yield "leaderboard"
    await page.goto(f"{base}/account")
    await page.wait_for_selector("main h1")
    yield "account"
    # This browser's player raced above: its profile lists those races once archived.
    name = await page.inner_text("#who")
    for _ in range(50):
        await page.goto(f"{base}/p/{name}")
        await page.wait_for_selector("main h1")
        if await page.locator("table.races").count():
            break
        await page.wait_for_timeout(200)
    assert await page.locator("table.races").count() == 1
    yield "profile"


# Twenty-two pages, each checked by axe in Chromium: over the suite's 120 s once, on a
# machine loaded beside the other workers.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("size", [(1280, 800), PHONE], ids=["desktop", "phone"])
async def test_every_page_passes_axe_and_fits_the_screen(
    server: ServerProcess, browser: Browser, size: tuple[int, int]
) -> None:
    width, height = size
    page = await new_page(browser, width, height, touch=size == PHONE)
    problems: dict[str, list[str]] = {}
    visited = []
    async for name in pages(server.url, page):
        visited.append(name)
        found = await serious(page, phone=size == PHONE)
        scroll = await page.evaluate("() => document.documentElement.scrollWidth")
        if scroll > width:
            found.append(f"{scroll} px wide on a {width} px screen")
        if found:
            problems[name] = found
    assert len(visited) == 22
    assert not problems, json.dumps(problems, indent=1)
    assert page_errors(page) == []
    await page.context.close()


# Every announcement made from now on, kept: one can be replaced by the next before a
# poll of the live region would have read it.
HEARD = """() => {
    window.__heard = [];
    new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes) window.__heard.push(n.textContent);
    }).observe(document.querySelector("#announce"), { childList: true });
}"""


async def test_the_board_plays_from_the_keyboard_and_says_what_happened(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=1, countdown=3))["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/play/{room}?sit=1")
    await page.wait_for_selector("#ready")
    await page.evaluate(HEARD)
    await page.click("#ready")
    # The countdown is spoken.
    await page.wait_for_function("() => window.__heard.some(t => /Starting in|Go!/.test(t))")
    await page.wait_for_selector("#board .card")
    game = core.new_game("shaula", SEED)
    # Tab reaches the board (one tab stop), then the arrows walk the piles: from c1,
    # down to t1, right to t2.
    await page.focus("#board .pile[tabindex='0']")
    focused = "() => document.activeElement.dataset.pile"
    assert await page.evaluate(focused) == "c1"
    name = await page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert name == "c1, cell, empty, takes any card"
    await page.keyboard.press("ArrowDown")
    assert await page.evaluate(focused) == "t1"
    await page.keyboard.press("ArrowRight")
    assert await page.evaluate(focused) == "t2"
    assert game.state()["piles"]["t2"] == ["AD", "7S", "QC", "5H", "QS", "TS"]
    name = await page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert name == (
        "t2, Forty Thieves pile, 6 cards, top: 10 of spades; under it: queen of spades, "
        "5 of hearts, queen of clubs, 7 of spades, ace of diamonds"
    )
    # Enter picks t2's top card up; over to t5 (a FreeCell pile) and Enter puts it there.
    await page.keyboard.press("Enter")
    assert "picked up: 1 card" in await page.evaluate(
        "() => document.activeElement.getAttribute('aria-label')"
    )
    for _ in range(3):
        await page.keyboard.press("ArrowRight")
    assert await page.evaluate(focused) == "t5"
    await page.keyboard.press("Enter")
    await wait_acks(page, 1)
    game.apply("t2 t5")
    assert await shown_board(page) == {
        pid: cards if pid.startswith("t") else cards[-1:]
        for pid, cards in game.state()["piles"].items()
    }
    await page.wait_for_function(
        "() => document.querySelector('#announce').textContent === '10 of spades, t2 to t5.'"
    )
    # `?` lists the shortcuts; Escape closes the list.
    await page.keyboard.press("?")
    await page.wait_for_selector("#shortcuts[open]")
    assert "arrow" in (await page.inner_text("#shortcuts")).lower() or "←" in (
        await page.inner_text("#shortcuts")
    )
    await page.keyboard.press("Escape")
    await page.wait_for_selector("#shortcuts:not([open])", state="attached")
    # The end is spoken too.
    await page.click("#resign")
    await page.click("#resign")
    await page.wait_for_function(
        "() => document.querySelector('#announce').textContent.startsWith('The race is over')"
    )
    assert page_errors(page) == []
    await page.context.close()


async def swipe(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A finger put down at `start`, moved to `end` and lifted (Chrome's own touch events,
    through the DevTools protocol: the page sees them as a phone's)."""
    session = await page.context.new_cdp_session(page)
    (x0, y0), (x1, y1) = start, end
    send = session.send
    await send(
        "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]}
    )
    for k in range(1, 6):
        point = {"x": x0 + (x1 - x0) * k / 5, "y": y0 + (y1 - y0) * k / 5}
        await send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
    await send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    await session.detach()


async def test_a_phone_plays_by_tapping_and_by_dragging_with_a_finger(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=1, countdown=0))["id"]
    page = await new_page(browser, *PHONE, touch=True)
    await page.goto(f"{base}/play/{room}?sit=1")
    await page.tap("#ready")
    await page.wait_for_selector("#board .card")
    game = core.new_game("shaula", SEED)
    # Tap t2's top card, then tap t5.
    await page.locator('#board .pile[data-pile="t2"] .card').last.tap()
    await page.locator('#board .pile[data-pile="t5"]').tap(position={"x": 10, "y": 10})
    await wait_acks(page, 1)
    game.apply("t2 t5")
    # Drag t2's next top card to c1 with a finger.
    await page.wait_for_function("() => !document.getAnimations().length")
    card = await page.locator('#board .pile[data-pile="t2"] .card').last.bounding_box()
    cell = await page.locator('#board .pile[data-pile="c1"]').bounding_box()
    assert card and cell
    # Every card shows at least a 24 px strip to tap, a covered one too.
    assert card["width"] >= 24
    start = (card["x"] + card["width"] / 2, card["y"] + 10)
    await swipe(page, start, (cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2))
    await wait_acks(page, 2)
    game.apply("t2 c1")
    assert await shown_board(page) == {
        pid: cards if pid.startswith("t") else cards[-1:]
        for pid, cards in game.state()["piles"].items()
    }
    strips = await page.eval_on_selector_all(
        "#board .pile.tableau",
        """piles => piles.map(p => { const cs = [...p.querySelectorAll('.card')];
            return cs.length > 1 ? cs[1].getBoundingClientRect().top
              - cs[0].getBoundingClientRect().top : 99; })""",
    )
    assert min(strips) >= 24  # the strip of a covered card: a finger's target
    assert page_errors(page) == []
    await page.context.close()


async def test_a_live_lobby_redraw_keeps_the_keyboard_focus(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="moojub", seats=2))["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/")
    await page.wait_for_selector(f'#rooms tr[data-room="{room}"]')
    await page.focus(f'#rooms tr[data-room="{room}"] a.watch')
    before = await page.evaluate("() => document.activeElement.outerHTML")
    await create_room(base, game="stalactites", seats=3)  # the list is drawn again
    await page.wait_for_function("() => document.querySelectorAll('#rooms tbody tr').length > 1")
    await page.wait_for_function(
        "room => document.activeElement.closest('tr')?.dataset.room === room", arg=room
    )
    assert await page.evaluate("() => document.activeElement.outerHTML") == before
    assert page_errors(page) == []
    await page.context.close()


async def test_a_live_standings_redraw_keeps_the_keyboard_focus(
    server: ServerProcess, browser: Browser
) -> None:
    """The standings' box, which a keyboard scrolls sideways on a phone, keeps the focus
    when a registration draws them again."""
    base = server.url
    created = await post_ok(base + "/tournaments", {"name": "Focus cup", "format": "rounds"})
    tid = created["tournament"]["id"]
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "ann"})
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_selector("#standings")
    await page.focus('[role="region"][aria-label="standings"]')
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "bo"})  # drawn again
    rows = "() => document.querySelectorAll('#standings tbody tr').length > 1"
    await page.wait_for_function(rows)
    label = "() => document.activeElement.getAttribute('aria-label')"
    assert await page.evaluate(label) == "standings"
    # The links above them, drawn again with every push, too.
    csv = f'a[href="/tournaments/{tid}/standings?format=csv"]'
    await page.focus(csv)
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "cy"})
    rows = "() => document.querySelectorAll('#standings tbody tr').length > 2"
    await page.wait_for_function(rows)
    href = "() => document.activeElement.getAttribute('href')"
    assert await page.evaluate(href) == f"/tournaments/{tid}/standings?format=csv"
    assert page_errors(page) == []
    await page.context.close()


async def test_a_friend_from_the_share_link_sees_the_room_before_taking_a_seat(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="stalactites", seats=2))["id"]
    host = await new_page(browser)
    await host.goto(f"{base}/play/{room}?sit=1")
    await host.wait_for_selector("#waiting h2")
    waiting = await host.inner_text("#waiting")
    assert "1 of 2 seats taken, 0 ready" in waiting and "Start now" in waiting
    link = await host.get_attribute("#share-link", "value")
    assert link == f"{base}/play/{room}"
    friend = await new_page(browser)
    await friend.goto(link)
    await friend.wait_for_selector("#take-seat")
    about = await friend.inner_text("#room-about")
    [seated] = room_view(base, room)["players"]  # type: ignore[misc]
    assert about == f"Stalactites, 1 of 2 seats taken. Seated: {seated['name']}."
    # The room's title heads the page, as it does once seated; no empty panel of a
    # race not joined (the waiting room, the players' side) is drawn under the form.
    titles = await friend.locator("#main h1").all_inner_texts()
    assert len(titles) == 1 and titles[0].startswith("Stalactites") and room in titles[0]
    for empty in ("#waiting", ".race .side"):
        assert not await friend.is_visible(empty), empty
    await friend.fill("#seat-name", "bo")
    await friend.click("#take-seat")
    await friend.wait_for_selector("#waiting h2")
    assert "Start now" not in await friend.inner_text("#waiting")  # not the host
    await host.wait_for_function(
        "() => document.querySelector('#waiting').textContent.includes('2 of 2 seats taken')"
    )
    assert page_errors(host, friend) == []
    for page in (host, friend):
        await page.context.close()


COUNT_CALLS = """() => {
    const s = (window.__calls = { animate: 0, audio: 0 });
    const animate = Element.prototype.animate;
    Element.prototype.animate = function (...args) {
        s.animate++;
        return animate.apply(this, args);
    };
    const Audio = window.AudioContext;
    window.AudioContext = class extends Audio { constructor() { super(); s.audio++; } };
}"""


async def test_cards_slide_unless_motion_is_reduced_and_sounds_wait_to_be_asked_for(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    line = ["t2 t5", "t2 c1", "t8 t2"]
    counts = []
    for reduced, sounds in ((False, False), (True, True)):
        room = (await create_room(base, game="shaula", seed=SEED, seats=1, countdown=0))["id"]
        page = await new_page(browser)
        await page.emulate_media(reduced_motion="reduce" if reduced else "no-preference")
        await page.goto(f"{base}/play/{room}?sit=1")
        await page.click("#ready")
        await page.wait_for_selector("#board .card")
        assert not await page.is_checked("#sounds")  # off until asked for
        if sounds:
            await page.check("#sounds")
        await page.evaluate(COUNT_CALLS)
        for i, move in enumerate(line):
            await page.fill("#move-input", move)
            await page.press("#move-input", "Enter")
            await wait_acks(page, i + 1)
        counts.append(await page.evaluate("() => window.__calls"))
        assert page_errors(page) == []
        await page.context.close()
    # Each move slid its card (three moves); under reduced motion nothing moved. No sound
    # was made until the switch was ticked; then one audio output for the moves.
    assert counts == [{"animate": 3, "audio": 0}, {"animate": 0, "audio": 1}]


async def test_each_page_has_a_title_of_its_own(server: ServerProcess, browser: Browser) -> None:
    """Every page but a profile was titled "solrace": several tabs of the site (a race, its
    watch page, a replay) could not be told apart, nor the pages in the history, and a
    screen reader named each tab alike. Each page's title now says what it is."""
    base = server.url
    room = (await create_room(base, game="shaula", seats=2))["id"]
    page = await new_page(browser)
    titles = {}
    for path in (
        "/",
        f"/play/{room}",
        f"/watch/{room}",
        f"/replay/{room}",
        "/tv",
        "/daily",
        "/daily/2026-01-02",
        "/rules",
        "/rules/moojub",
        "/top",
        "/top/stalactites",
        "/account",
        "/tour/abcd1234",
        "/no/such/page",
    ):
        await page.goto(base + path)
        await page.wait_for_function("() => document.title.endsWith(' · solrace')")
        titles[path] = await page.title()
    assert len(set(titles.values())) == len(titles), titles
    for path, words in (
        (f"/play/{room}", room),
        (f"/watch/{room}", room),
        (f"/replay/{room}", room),
        ("/rules/moojub", "Moojub"),
        ("/top/stalactites", "Stalactites"),
        ("/daily/2026-01-02", "2026-01-02"),
        ("/tour/abcd1234", "abcd1234"),
    ):
        assert words in titles[path], titles
    # Chrome's own word on what is not there (no such page, no replay of a room unraced).
    assert [e for e in page_errors(page) if "Failed to load resource" not in e] == []
