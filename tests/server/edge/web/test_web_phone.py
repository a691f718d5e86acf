"""Every page on a phone-sized screen (375 px wide): nothing wider than the screen, so the
page never scrolls sideways (a wide table scrolls in its own box, or folds), and the
results tables (the replay's, the race's, the daily boards') have headers that do not run
into each other."""

from __future__ import annotations

from playwright.async_api import Browser, Page
from support.finished import archived_alone
from support.http import create_room, post_ok
from support.players import new_player
from support.server_processes import ServerProcess
from support.web import new_page, page_errors
from support.wsclient import WsClient, finished_pair

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
    await page.wait_for_selector("#replay-results th")
    await assert_fits(page, "the replay page")
    clashes = await header_clashes(page, "#replay-results")
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
