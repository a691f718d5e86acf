"""Every page on a phone-sized screen (375 px wide, and 360 px: the narrowest made for):
nothing wider than the screen, so the page never scrolls sideways; at 360 px no table
scrolls sideways in a box of its own either (its minor columns fold under the player's
name, or its rows stack), and the results tables (the replay's, the race's, the daily
boards') have headers that do not run into each other."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from playwright.async_api import Browser, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout
from support.finished import archived_alone, archived_replay, finish_identified_race
from support.http import create_room, post_ok
from support.players import call, new_player
from support.server_processes import ServerProcess
from support.tour_bots import FINISH, Plan, TourBot, always, create, register
from support.web import new_page, page_errors, start_race, take_seat
from support.wsclient import WsClient, finished_pair

import core
import protocol as p

WIDTH = 375
SEED = 617

# The page's overflow past the screen, and what sticks out (for the failure's message): an
# element whose right edge passes the screen, not inside a box that scrolls sideways.
OVERFLOW = """() => {
  const root = document.documentElement;
  const scrolls = (el) => {
    for (let up = el.parentElement; up && up !== root; up = up.parentElement) {
      const x = getComputedStyle(up).overflowX;
      if (x === "auto" || x === "scroll" || x === "hidden") return true;
    }
    return false;
  };
  const out = [...document.querySelectorAll("body *")]
    .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 0.5 && !scrolls(el))
    .slice(0, 8)
    .map((el) => {
      const classes = typeof el.className === "string" && el.className
        ? "." + el.className.split(" ").join(".") : "";
      const id = el.id ? "#" + el.id : "";
      const right = Math.round(el.getBoundingClientRect().right);
      return `${el.tagName.toLowerCase()}${id}${classes} (right ${right})`;
    });
  return [root.scrollWidth - root.clientWidth, out];
}"""


async def too_wide(page: Page, what: str) -> list[str]:
    """What makes the page wider than the screen, if anything."""
    overflow, sticking_out = await page.evaluate(OVERFLOW)
    return [f"{what}: {overflow} px too wide: {sticking_out}"] if overflow > 0 else []


async def assert_fits(page: Page, what: str) -> None:
    assert await too_wide(page, what) == []


async def phone(browser: Browser) -> Page:
    return await new_page(browser, width=WIDTH, height=740)


async def a_players_race(base: str) -> str:
    """A player's finished race (a few moves, then resigned): the player's name."""
    key, player = await new_player(base)
    await archived_alone(base, key, 20, SEED)  # on the player's page once archived
    return str(player["name"])


async def test_a_players_page_fits_a_phone(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    name = await a_players_race(base)
    page = await phone(browser)
    await page.goto(f"{base}/p/{name}")
    await page.wait_for_selector("table.races tbody tr")
    await assert_fits(page, "the player's page")
    # Still readable: the races table's first cells are in sight, not cut to nothing.
    cell = await page.locator("table.races tbody tr td").first.bounding_box()
    assert cell is not None and cell["x"] >= 0 and cell["width"] > 40
    assert page_errors(page) == []


# Each header's text against its cell and the next header's text (the text's own box, not
# its cell's: a word wider than a fixed-width cell spills over its neighbour).
CLASHES = """ths => {
  const boxes = ths.map((th) => {
    const range = document.createRange();
    range.selectNodeContents(th);
    const text = range.getBoundingClientRect();
    return { name: th.textContent, text, cell: th.getBoundingClientRect() };
  }).filter((b) => b.name);
  const out = [];
  boxes.forEach((b, i) => {
    const spills = b.text.right > b.cell.right + 0.5 || b.text.left < b.cell.left - 0.5;
    if (spills) out.push(`${b.name} spills out of its cell`);
    const next = boxes[i + 1];
    if (next && b.text.right > next.text.left + 0.5) out.push(`${b.name} runs into ${next.name}`);
  });
  return out;
}"""


async def header_clashes(page: Page, table: str) -> list[str]:
    clashes: list[str] = await page.eval_on_selector_all(f"{table} thead th", CLASHES)
    return [f"{table}: {c}" for c in clashes]


async def test_results_headers_do_not_overlap_on_a_phone(
    quiet_server: ServerProcess, browser: Browser
) -> None:
    base = quiet_server.url
    room = str((await create_room(base, game="shaula", seed=SEED, seats=2, countdown=0))["id"])
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await finished_pair(room, ann, bo)
    page = await phone(browser)
    await page.goto(f"{base}/replay/{room}")
    await page.wait_for_selector("#replay-results td")
    await assert_fits(page, "the replay page")
    # The replay's results stack on a phone, each racer's values under their names.
    clashes = await unreadable_cells(page, "#replay-results")
    # The race page's results, and the daily boards: tables of the same kind.
    racer = await phone(browser)
    one = (await create_room(base, game="shaula", seed=SEED, seats=1))["id"]
    await racer.goto(f"{base}/play/{one}?sit=1")
    await racer.click("#ready")
    await racer.wait_for_selector("#board .card")
    await racer.click("#resign")
    await racer.click("#resign")  # the second click confirms
    await racer.wait_for_selector("#results-table th")
    await assert_fits(racer, "a finished race")
    clashes += await header_clashes(racer, "#results-table")
    await racer.goto(f"{base}/daily")
    await racer.wait_for_selector(".daily-board th")
    clashes += await header_clashes(racer, '.daily-game[data-game="shaula"] .daily-board')
    assert clashes == [], clashes
    assert page_errors(page, racer) == []


async def test_the_main_pages_fit_a_phone(server: ServerProcess, browser: Browser) -> None:
    base = server.url
    name = await a_players_race(base)
    room = (await create_room(base, game="shaula", seed=SEED, seats=2))["id"]
    created = await post_ok(base + "/tournaments", {"name": "Phone cup", "games": ["shaula"]})
    tid = created["tournament"]["id"]
    for n in ("ann", "bo"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": n})
    page = await phone(browser)
    wide = []
    checks = {
        "/": "#rooms table",
        f"/play/{room}": "#take-seat",
        f"/watch/{room}": "#delay",
        "/tv": "#tv-idle, #tv .watched",
        "/daily": ".daily-game button.daily-start",
        f"/tour/{tid}": "#standings tbody tr",
        "/top/shaula": "#board p, #board table",
        "/rules/shaula": "#rules h2",
        "/rules/stalactites": "#rules h2",
        "/rules/moojub": "#rules h2",
        f"/p/{name}": "table.races tbody tr",
        "/account": "main form, main h1",
    }
    for path, selector in checks.items():
        await page.goto(base + path)
        await page.wait_for_selector(selector)
        wide += await too_wide(page, path)
    # A race under way: the board and its side fit too.
    racer = await phone(browser)
    one = (await create_room(base, game="moojub", seed=SEED, seats=1))["id"]
    await racer.goto(f"{base}/play/{one}?sit=1")
    await racer.click("#ready")
    await racer.wait_for_selector("#board .card")
    wide += await too_wide(racer, "a moojub race")
    await page.goto(f"{base}/watch/{one}")
    await page.wait_for_selector(".watched .card")
    wide += await too_wide(page, "watching a moojub race")
    assert wide == []
    assert page_errors(page, racer) == []


# Each cell of a table's rows: where it is, how wide, and whether its text overflows it
# (a word wider than its cell).
CELLS = """table => [...table.querySelectorAll("tbody td")].map((td) => {
  const box = td.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(td);
  const text = range.getBoundingClientRect();
  const label = getComputedStyle(td, "::before");
  const named = label.content !== "none" && label.content !== '""';
  return { text: td.textContent, left: box.left, right: box.right, width: box.width,
           spills: td.scrollWidth > td.clientWidth + 1,
           // a name beside the cell's text runs into it, or out of its row
           clash: named && (text.left - box.left < parseFloat(label.width) - 0.5
                            || parseFloat(label.height) > box.height + 0.5) };
})"""


async def unreadable_cells(page: Page, table: str) -> list[str]:
    """The cells of `table` a phone's reader cannot read as the page stands: out of the
    screen (to be scrolled to, one row at a time), squeezed narrower than 3 characters, or
    overflowing their cell, or run into by its column's name."""
    width = await page.evaluate("document.documentElement.clientWidth")
    cells = await page.eval_on_selector(table, CELLS)
    return [
        f"{table}: {c['text']!r} ({c['left']:.0f}..{c['right']:.0f} of {width})"
        for c in cells
        if c["text"].strip()
        and (
            c["left"] < 0
            or c["right"] > width + 0.5
            or c["width"] < 30
            or c["spills"]
            or c["clash"]
        )
    ]


async def test_the_races_tables_read_whole_on_a_phone(
    server: ServerProcess, browser: Browser
) -> None:
    """A player's latest races and a tournament's races, on a 390 x 844 phone: each race
    reads whole on the screen (a stacked layout: a row's cells one under the other, each
    named), not cut at the screen's edge nor squeezed to a letter a line."""
    base = server.url
    key, player = await new_player(base, "annabelle_long")
    await archived_alone(base, key, 20, SEED)
    tid, organiser = await create(base, rounds=1, time_limit=60, countdown=1)
    names = ["annabelle_l2", "bo", "cy"]
    tokens = {n: await register(base, tid, n) for n in names}
    plans = {"annabelle_l2": always(FINISH), "bo": always(Plan(moves=4, resign=True))}
    bots = [TourBot([base], tid, n, tokens[n], plans.get(n, always(Plan(2, True)))) for n in names]
    running = [asyncio.create_task(bot.run(timeout=60)) for bot in bots]
    await post_ok(base + f"/tournaments/{tid}/start", {"organiser_token": organiser})
    await asyncio.gather(*running)
    page = await new_page(browser, width=390, height=844, touch=True)
    await page.goto(f"{base}/p/{player['name']}")
    await page.wait_for_selector("table.races tbody tr")
    bad = await unreadable_cells(page, "table.races")
    await assert_fits(page, "the player's page")
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_selector("#tour-races-table tbody tr")
    bad += await unreadable_cells(page, "#tour-races-table")
    await assert_fits(page, "the tournament's page")
    assert bad == [], bad
    # Each cell says what it is (the header row is not in sight above every row).
    assert (
        await page.eval_on_selector(
            '#tour-races-table td[data-label="Results"]',
            "td => getComputedStyle(td, '::before').content",
        )
        == '"Results"'
    )
    assert page_errors(page) == []


@pytest.mark.parametrize(("width", "height"), [(390, 844), (844, 390)])
async def test_the_progress_bars_stay_in_sight_while_racing_on_a_phone(
    server: ServerProcess, browser: Browser, width: int, height: int
) -> None:
    """On a phone (upright, or on its side: the board is then taller than the screen),
    scrolled down to the foot of the board, the racer still sees every player's progress,
    pinned at the top."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=2, countdown=0))["id"]
    other = await new_page(browser, width=width, height=height, touch=True)
    await other.goto(f"{base}/play/{room}")
    await other.fill("#seat-name", "zed")
    await other.click("#take-seat")
    await other.click("#ready")
    page = await new_page(browser, width=width, height=height, touch=True)
    await page.goto(f"{base}/play/{room}")
    await page.fill("#seat-name", "me")
    await page.click("#take-seat")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    await page.wait_for_selector('#players .bar[data-seat="1"]')
    # Down to the foot of the board's piles, as a player scrolls to play there.
    await page.locator('#board .pile[data-pile="t1"] .card').last.scroll_into_view_if_needed()
    await page.evaluate("window.scrollBy(0, 200)")
    await page.wait_for_timeout(100)
    await page.screenshot(path=f"/tmp/webp-pinned-{width}.png")
    board = await page.locator("#board").bounding_box()
    assert board is not None
    if width > height:
        assert board["y"] < 0  # the board is taller than the screen: scrolled past its top
    bars = await page.eval_on_selector_all(
        "#players .bar",
        "bars => bars.map((b) => { const r = b.getBoundingClientRect();"
        " return [r.top, r.bottom]; })",
    )
    assert len(bars) == 2
    assert all(top >= 0 and bottom <= height for top, bottom in bars), (bars, height)
    # They cover no more than a third of the screen (the board is what is played).
    players = await page.locator("#players").bounding_box()
    assert players is not None and players["height"] <= height / 3
    await assert_fits(page, "a race on a phone")
    assert page_errors(page, other) == []


async def test_ones_own_bar_is_in_sight_first_in_a_full_room_on_a_phone(
    server: ServerProcess, browser: Browser
) -> None:
    """On a phone the bars are a strip of a third of the screen, a full room's scrolling
    inside it: the racer in the last seat had their own bar below the others, out of
    sight unless they scrolled the strip mid-race. Their own bar comes first there."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=8, countdown=0))["id"]
    async with contextlib.AsyncExitStack() as stack:
        others = [await stack.enter_async_context(WsClient.connect(base)) for _ in range(7)]
        for i, other in enumerate(others):
            await other.join(room, f"racer{i}")
            await other.send(p.Ready())
        page = await new_page(browser, width=WIDTH, height=667, touch=True)
        await start_race(page, base, room, "me")
        await page.wait_for_selector('#players .bar[data-seat="7"]')
        strip = await page.locator("#players").bounding_box()
        mine = await page.locator("#players .bar.me").bounding_box()
        assert strip is not None and mine is not None
        assert strip["y"] <= mine["y"]
        assert mine["y"] + mine["height"] <= strip["y"] + strip["height"]
        for other in others:  # read what came, or their close waits behind it
            await other.quiet(0.05)
    assert page_errors(page) == []


# The narrowest phone the client is made for, and a name as long as a name can be, of wide
# letters.
NARROW = 360
LONG = "Maximiliana_WWWWWWWW"
BIG = 9_000_000_000_000_000_001  # a deal's number as long as one is (19 digits)

# What scrolls sideways at the page's width: the page itself, or a box inside it (a table
# in a box that scrolls is no better read on a phone: a row is seen a piece at a time).
SIDEWAYS = """width => {
  const named = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (typeof el.className === "string" && el.className ? "." + el.className.split(" ")[0] : "");
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > width) out.push(`the page: ${root.scrollWidth} px wide`);
  for (const el of document.querySelectorAll("body *")) {
    const x = getComputedStyle(el).overflowX;
    if ((x === "auto" || x === "scroll") && el.scrollWidth > el.clientWidth + 1) {
      out.push(`${named(el)}: ${el.scrollWidth} px in ${el.clientWidth}`);
    }
  }
  return out;
}"""


async def sideways(page: Page, what: str, width: int = NARROW) -> list[str]:
    found: list[str] = await page.evaluate(SIDEWAYS, width)
    return [f"{what}: {f}" for f in found]


async def headers_shown(page: Page, table: str) -> list[str]:
    """The names of the columns `table` shows (not those of hidden columns)."""
    shown: list[str] = await page.eval_on_selector_all(
        f"{table} thead th", "ths => ths.filter((th) => th.offsetWidth).map((th) => th.textContent)"
    )
    return shown


async def narrow_phone(browser: Browser) -> Page:
    return await new_page(browser, width=NARROW, height=740, touch=True)


async def keeping(page: Page, key: str, value: object) -> None:
    """The page's browser keeps `value` under `key` in its localStorage before any page of
    it runs (the client's pages make a guest player at once when they find none)."""
    entry = json.dumps([key, json.dumps(value)])
    await page.context.add_init_script(f"localStorage.setItem(...{entry})")


async def as_organiser(page: Page, tid: str, token: str) -> None:
    """The page is the browser that created tournament `tid` (it keeps its token)."""
    await keeping(page, f"solrace.tour.{tid}", {"organiser": token})


async def test_a_tournaments_standings_and_bracket_read_whole_on_a_narrow_phone(
    server: ServerProcess, browser: Browser
) -> None:
    """At 360 px, a tournament's standings (each format's, the organiser's too, with its
    remove buttons) and a knockout's bracket fit the screen, nothing scrolling sideways: the
    main columns stay, the others fold under the player's name, a long name is cut short
    with the whole of it in its title (and a tap shows it whole). At 1280 px every column is
    there as before."""
    base = server.url
    tid, organiser = await create(base, rounds=1, time_limit=60, countdown=1)
    names = [LONG, "bo", "cy"]
    tokens = {n: await register(base, tid, n) for n in names}
    plans = {LONG: always(FINISH), "bo": always(Plan(moves=4, resign=True))}
    bots = [TourBot([base], tid, n, tokens[n], plans.get(n, always(Plan(2, True)))) for n in names]
    running = [asyncio.create_task(bot.run(timeout=60)) for bot in bots]
    await post_ok(base + f"/tournaments/{tid}/start", {"organiser_token": organiser})
    await asyncio.gather(*running)
    arena = await post_ok(base + "/tournaments", {"name": "Arena", "format": "arena"})
    aid = arena["tournament"]["id"]
    for name in (LONG, "bo", "cy"):
        await post_ok(base + f"/tournaments/{aid}/players", {"name": name})
    knockout = await post_ok(
        base + "/tournaments",
        {"name": "Knockout", "format": "knockout", "grace": 0.5, "countdown": 0.2, "pause": 0.2},
    )
    kid = knockout["tournament"]["id"]
    for name in (LONG, "bo", "cy", "di", "ed", "fay", "gus", "hal"):
        await post_ok(base + f"/tournaments/{kid}/players", {"name": name})
    await post_ok(
        base + f"/tournaments/{kid}/start", {"organiser_token": knockout["organiser_token"]}
    )
    page = await narrow_phone(browser)
    await as_organiser(page, aid, arena["organiser_token"])
    wide: list[str] = []
    for path in (f"/tour/{tid}", f"/tour/{aid}"):
        await page.goto(base + path)
        await page.wait_for_selector("#standings tbody tr")
        wide += await sideways(page, path)
    await page.goto(f"{base}/tour/{kid}")
    await page.wait_for_function(
        "() => document.querySelectorAll('#bracket .bracket-round').length === 3", timeout=30_000
    )
    wide += await sideways(page, "a knockout's bracket")
    assert wide == [], wide
    # The arena's organiser: score and the remove button in sight, the rest folded, the
    # long name cut short but whole in its title; a tap shows it whole.
    await page.goto(f"{base}/tour/{aid}")
    row = page.locator("#standings tbody tr", has_text="Maximiliana")
    await row.wait_for()
    shown = await headers_shown(page, "#standings")
    assert shown == ["#", "Player", "Score", ""], shown
    name = row.locator(".name")
    assert await name.get_attribute("title") == LONG
    assert await name.evaluate("el => el.scrollWidth > el.clientWidth")  # cut short
    assert "Heat wins 0" in await row.locator(".folded").inner_text()
    assert await row.locator("button[data-remove]").is_visible()
    await name.click()
    assert await name.evaluate("el => el.scrollWidth <= el.clientWidth")  # whole
    # On a desktop: every column, nothing folded.
    desk = await new_page(browser)
    await as_organiser(desk, aid, arena["organiser_token"])
    await desk.goto(f"{base}/tour/{aid}")
    await desk.wait_for_selector("#standings tbody tr")
    shown = await headers_shown(desk, "#standings")
    assert shown == ["#", "Player", "Score", "Heat wins", "Heats", "Streak", "Cards", "Rating", ""]
    assert not await desk.locator("#standings .folded").first.is_visible()
    assert page_errors(page, desk) == []


async def won(
    base: str,
    key: str,
    room: str,
    seed: int | None = None,
    token: str | None = None,
    game: str = "shaula",
) -> None:
    """The player whose key this is wins `room` of `game` alone, dealt `seed` (the solver's line):
    taking the seat, or by the seat's token (a daily attempt, under way once opened, whose
    number is kept back: the line solved from the board its snapshot gives)."""
    async with WsClient.connect(base) as ws:
        if token is not None:
            await ws.join(room, token=token)
            board = (await ws.expect(p.Snapshot)).board
            assert board is not None
            start = core.from_state(board)
        else:
            await ws.identify(key)
            await ws.join(room)
            await ws.send(p.Start())
            await ws.expect(p.RaceStarted)
            assert seed is not None
            start = core.new_game(game, seed)
        await ws.play(list(core.solve(start).moves))
        await ws.expect(p.RaceFinished)


async def as_player(page: Page, key: str, player: dict[str, object]) -> None:
    """The page's browser plays as this player (it keeps the key)."""
    kept = {"key": key, "id": player["id"], "name": player["name"], "bot": False}
    await keeping(page, "solrace.player", kept)


async def shown(page: Page, url: str, selector: str) -> None:
    """The page at `url` once it shows `selector` (a race is on the boards once archived,
    a moment after its end: the page is read again until it is)."""
    async with asyncio.timeout(30):
        while True:
            await page.goto(url)
            with contextlib.suppress(PlaywrightTimeout):
                await page.wait_for_selector(selector, timeout=2_000)
                return


async def test_the_results_boards_and_a_profile_read_whole_on_a_narrow_phone(
    server: ServerProcess, browser: Browser
) -> None:
    """At 360 px, with a name as long as a name can be: the daily board, a deal's best times,
    a player's ratings and a replay's results fit the screen, nothing scrolling sideways
    (what does not fit folds under the name). At 1280 px every column is there."""
    base = server.url
    key, player = await new_player(base, LONG)
    other, _ = await new_player(base)
    status, daily, _ = await call(base, "POST", "/daily/shaula", {}, key)
    assert status == 201, daily
    await won(base, key, daily["room"]["id"], token=daily["token"])
    room = str((await create_room(base, game="shaula", seed=SEED, seats=1, countdown=0))["id"])
    await won(base, key, room, SEED)
    await finish_identified_race([base], [key, other], [3, 5])  # rated: a rating to show
    await archived_replay(base, f"{room}.1")
    pages = {
        "/daily": '.daily-game[data-game="shaula"] .daily-board tbody a',
        f"/top/shaula?by=time&seed={SEED}": "table.leaderboard tbody tr",
        f"/p/{LONG}": "table.ratings tbody tr",
        f"/replay/{room}": "#replay-results tbody tr",
    }
    page = await narrow_phone(browser)
    await as_player(page, key, player)  # its daily attempt's replay shows
    wide: list[str] = []
    for path, selector in pages.items():
        await shown(page, base + path, selector)
        wide += await sideways(page, path)
    assert wide == [], wide
    # Whole in the title where it is cut short.
    await page.goto(f"{base}/top/shaula?by=time&seed={SEED}")
    assert await page.get_attribute("table.leaderboard tbody .name", "title") == LONG
    # A desktop: every column of each.
    desk = await new_page(browser)
    await as_player(desk, key, player)
    columns = {}
    for path, selector in pages.items():
        await shown(desk, base + path, selector)
        table = selector.split(" tbody")[0]
        columns[path] = await headers_shown(desk, table)
        # ... and nothing scrolls sideways there either (the daily page's three boards side
        # by side each have a third of the width).
        wide += await sideways(desk, path, 1280)
    assert wide == [], wide
    assert columns == {
        "/daily": ["#", "Player", "Time", "Moves", ""],
        f"/top/shaula?by=time&seed={SEED}": ["#", "Player", "Time", "Replay"],
        f"/p/{LONG}": ["game", "rating", "races", "history"],
        f"/replay/{room}": ["Player", "Result", "Cards", "Moves", "Splits", ""],
    }
    assert page_errors(page, desk) == []


async def test_a_best_time_on_a_deal_of_nineteen_digits_fits_a_narrow_phone(
    server: ServerProcess, browser: Browser
) -> None:
    """A deal dealt at random has a number of up to 19 digits, written whole in a profile's
    best times: at 360 px that table (beside "Stalactites") was 366 px wide in its box of
    344, which scrolled sideways (617, the deal of the other profiles here, is short). The
    number breaks where it must now."""
    base = server.url
    key, _ = await new_player(base, LONG)
    room = await create_room(base, game="stalactites", seed=BIG, seats=1, countdown=0)
    await won(base, key, str(room["id"]), BIG, game="stalactites")
    page = await narrow_phone(browser)
    await shown(page, f"{base}/p/{LONG}", '[aria-label="best times"] tbody tr')
    assert str(BIG) in await page.inner_text('[aria-label="best times"]')
    assert await sideways(page, "a profile") == []
    assert page_errors(page) == []


# Each pile's box, and the strip of each covered card a finger can touch (to the next card).
TARGETS = """board => {
  const piles = [...board.querySelectorAll(".pile")].map((p) => p.getBoundingClientRect());
  const strips = [...board.querySelectorAll(".pile.tableau")].flatMap((p) => {
    const cards = [...p.querySelectorAll(".card")].map((c) => c.getBoundingClientRect());
    return cards.slice(1).map((c, i) => c.top - cards[i].top);
  });
  const least = (key) => Math.min(...piles.map((r) => r[key]));
  return { left: least("left"), right: Math.max(...piles.map((r) => r.right)),
           width: least("width"), height: least("height"), strip: Math.min(...strips) };
}"""


@pytest.mark.parametrize(("width", "height", "least"), [(360, 740, 36), (390, 844, 40)])
async def test_the_board_takes_the_phones_width_in_cards_a_finger_can_pick(
    server: ServerProcess, browser: Browser, width: int, height: int, least: int
) -> None:
    """On a phone's touch screen each game's board fits the screen's width, its piles as wide
    as the width allows (8 columns: 36 px on a 360 px phone, 40 px from 390 px on, as on a
    tablet), a covered card showing a strip of at least 24 px to pick it by."""
    base = server.url
    page = await new_page(browser, width=width, height=height, touch=True)
    found = {}
    for game in ("shaula", "stalactites", "moojub"):
        room = (await create_room(base, game=game, seed=SEED, seats=1))["id"]
        await page.goto(f"{base}/play/{room}?sit=1")
        await page.click("#ready")
        await page.wait_for_selector("#board .card")
        found[game] = await page.eval_on_selector("#board", TARGETS)
    for game, box in found.items():
        assert box["left"] >= 0 and box["right"] <= width, (game, box)
        assert box["width"] >= least and box["height"] >= least * 1.4, (game, box)
        if game != "moojub":  # no tableau: its piles show one card each
            assert box["strip"] >= 24, (game, box)
    assert page_errors(page) == []


async def test_a_racers_tags_stay_in_sight_on_a_narrow_phone(
    server: ServerProcess, browser: Browser
) -> None:
    """At 360 px, two racers' bars side by side: a long name does not cut off what its tags
    say (who is you, who resigned, who won): the name and its tags wrap instead."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=2, countdown=0))["id"]
    other = await narrow_phone(browser)
    await take_seat(other, base, room, "zed_the_other_one")
    await other.click("#ready")
    page = await narrow_phone(browser)
    await start_race(page, base, room, "annabelle_zz")
    for racer in (other, page):
        await racer.click("#resign")
        await racer.click("#resign")  # "sure?"
    await page.wait_for_selector("#results-table")
    await page.wait_for_selector("#players .bar .tag")
    hidden = await page.eval_on_selector_all(
        "#players .bar .tag",
        """tags => tags.filter((tag) => {
          const who = tag.closest(".who").getBoundingClientRect();
          const box = tag.getBoundingClientRect();
          return box.right > who.right + 0.5 || box.bottom > who.bottom + 0.5;
        }).map((tag) => tag.closest(".bar").textContent)""",
    )
    assert hidden == []
    assert "(you)" in await page.inner_text("#players .bar.me .who")
    # A name the results cut short is whole in its title, as in every other table.
    titles = await page.eval_on_selector_all(
        "#results-table td.who .name", "names => names.map((n) => n.title)"
    )
    assert sorted(titles) == ["annabelle_zz", "zed_the_other_one"]
    titles = await page.eval_on_selector_all(
        "#players .bar .who", "bars => bars.map((b) => b.title)"
    )
    assert sorted(titles) == ["annabelle_zz", "zed_the_other_one"]
    await assert_fits(page, "a finished race")
    assert page_errors(page, other) == []
