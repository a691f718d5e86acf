"""Helpers of the browser tests: a race server process, Chromium pages that record errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.request
import weakref
from dataclasses import dataclass, field

from playwright.async_api import Browser, ConsoleMessage, Page, Request, WebSocket

import protocol as p
from bench.browser import bot_command, probe
from support.http import create_room
from support.paths import ROOT
from support.wsclient import WsClient

__all__ = [
    "acks",
    "click_move",
    "drag_move",
    "expected_board",
    "new_page",
    "open_tournament_form",
    "page_errors",
    "pile",
    "resigned_with",
    "room_view",
    "seen",
    "shown_board",
    "solo_race",
    "start_bot",
    "start_race",
    "take_seat",
    "typed_move",
    "until_sent",
    "wait_acks",
]


@dataclass
class Seen:
    """What a page reported: console errors, uncaught errors, requests (URLs, and those
    of its POSTs apart), WebSockets (URLs) and the frames it sent on them (their text)."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    posts: list[str] = field(default_factory=list)
    sockets: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)

    def sent(self, text: str) -> list[str]:
        """The frames sent that hold `text` (such as '"type":"join"')."""
        return [frame for frame in self.frames if text in frame]


# By the page itself, not its id(): a page made after an earlier one was collected could
# get the earlier one's id, and with it what that page reported.
SEEN: weakref.WeakKeyDictionary[Page, Seen] = weakref.WeakKeyDictionary()


def room_view(base: str, room: str) -> dict[str, object]:
    """The room as GET /rooms/{room} shows it."""
    with urllib.request.urlopen(f"{base}/rooms/{room}", timeout=5) as answer:
        return dict(json.load(answer)["room"])


async def new_page(
    browser: Browser,
    width: int = 1280,
    height: int = 860,
    beside: Page | None = None,
    touch: bool = False,
) -> Page:
    """A page in a fresh context, or `beside` another page (same context: same
    localStorage, so the same seat tokens: a second window of one player). `touch`: a
    phone's context (a touch screen, a mobile viewport)."""
    if beside is not None:
        context = beside.context
    else:
        context = await probe(
            await browser.new_context(
                viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch
            )
        )
        context.set_default_timeout(15_000)
    page = await context.new_page()
    seen = SEEN[page] = Seen()

    def console(msg: ConsoleMessage) -> None:
        if msg.type not in ("error", "warning"):
            return
        # Chrome's "Failed to load resource: ... status of 409" names no URL; its
        # location is the resource refused.
        where = msg.location.get("url", "") if "Failed to load" in msg.text else ""
        seen.errors.append(f"console {msg.type}: {msg.text}" + (f" ({where})" if where else ""))

    page.on("console", console)
    page.on("pageerror", lambda exc: seen.errors.append(f"page error: {exc}"))

    def request(request: Request) -> None:
        seen.requests.append(request.url)
        if request.method == "POST":
            seen.posts.append(request.url)

    def socket(socket: WebSocket) -> None:
        seen.sockets.append(socket.url)
        socket.on("framesent", lambda frame: seen.frames.append(str(frame)))

    page.on("request", request)
    page.on("websocket", socket)
    return page


def seen(page: Page) -> Seen:
    return SEEN[page]


async def until_sent(page: Page, text: str, timeout: float = 5.0) -> list[str]:
    """The frames the page sent that hold `text`, once there is one (within `timeout`)."""
    async with asyncio.timeout(timeout):
        while not seen(page).sent(text):
            await asyncio.sleep(0.05)
    return seen(page).sent(text)


def page_errors(*pages: Page) -> list[str]:
    return [error for page in pages for error in seen(page).errors]


def start_bot(base: str, room: str, pace: float, name: str = "bot") -> subprocess.Popen[bytes]:
    """The solver bot (`solrace bot`) in its own process."""
    return subprocess.Popen(
        bot_command(base, room, pace, name),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def open_tournament_form(page: Page, base: str) -> None:
    """The lobby, its form to organise a tournament opened. The rooms come in over the
    socket after the page is drawn and push the form's summary down: it is clicked once
    they are in, or the click can land beside it."""
    await page.goto(f"{base}/")
    await page.wait_for_function(
        "() => !(document.getElementById('rooms')?.textContent ?? 'Loading').includes('Loading')"
    )
    await page.click("#tournaments ~ details summary")
    await page.wait_for_selector("input[name=tour_name]", state="visible")


async def take_seat(page: Page, base: str, room: str, name: str) -> None:
    await page.goto(f"{base}/play/{room}")
    await page.fill("#seat-name", name)
    await page.click("#take-seat")
    await page.wait_for_selector("#ready")


async def start_race(page: Page, base: str, room: str, name: str = "ann") -> None:
    """Take a seat in `room` as `name`, say ready, and wait for the board: in a room
    whose every seat is then ready, the race has begun."""
    await take_seat(page, base, room, name)
    await page.click("#ready")
    await page.wait_for_selector("#board .card")


async def resigned_with(page: Page, base: str, room: str, bo: WsClient) -> None:
    """The page (as "ann") and bo race in `room` and both resign: the page shows the
    results."""
    await bo.join(room, "bo")
    await bo.send(p.Ready())
    await start_race(page, base, room)
    await bo.send(p.Resign())
    await page.click("#resign")
    await page.click("#resign")  # "sure?"
    await page.wait_for_selector("#results-table")


async def solo_race(browser: Browser, base: str, **body: object) -> tuple[str, Page]:
    """A one-seat room (POST /rooms with `body`) and a new page racing in it as "ann"."""
    room = str((await create_room(base, seats=1, **body))["id"])
    page = await new_page(browser)
    await start_race(page, base, room)
    return room, page


async def acks(page: Page) -> int:
    return int(await page.evaluate("window.__probe.ackToFrame.length"))


async def wait_acks(page: Page, count: int, timeout: float | None = None) -> None:
    # A function, not an expression: the page's CSP forbids eval.
    await page.wait_for_function(
        "n => window.__probe.ackToFrame.length >= n", arg=count, polling=20, timeout=timeout
    )


def pile(page: Page, pile_id: str, board: str = "#board") -> str:
    return f'{board} .pile[data-pile="{pile_id}"]'


async def click_move(page: Page, move: str) -> None:
    """Play `move` ("src dst" or "src dst n") by clicking its card, then the target pile."""
    src, dst, *rest = move.split()
    n = int(rest[0]) if rest else 1
    # Near the top edge: the only part of a covered card that shows.
    await page.locator(f"{pile(page, src)} .card").nth(-n).click(position={"x": 30, "y": 8})
    await page.locator(pile(page, dst)).click(position={"x": 20, "y": 20})


async def drag_move(page: Page, move: str) -> None:
    """Play `move` by dragging its card (and those on it) onto the target pile."""
    src, dst, *rest = move.split()
    n = int(rest[0]) if rest else 1
    # Where the cards are once the last move's slide has ended (as a player sees them).
    await page.wait_for_function("() => !document.getAnimations().length", polling=20)
    card = await page.locator(f"{pile(page, src)} .card").nth(-n).bounding_box()
    target = await page.locator(pile(page, dst)).bounding_box()
    assert card is not None and target is not None
    await page.mouse.move(card["x"] + card["width"] / 2, card["y"] + 10)
    await page.mouse.down()
    await page.mouse.move(target["x"] + target["width"] / 2, target["y"] + 30, steps=4)
    # The page may have moved the pile meanwhile (an opponent's news above the board, on
    # a loaded machine a while ago): let go where it is now, as a player's hand follows it.
    target = await page.locator(pile(page, dst)).bounding_box()
    assert target is not None
    await page.mouse.move(target["x"] + target["width"] / 2, target["y"] + 30)
    await page.mouse.up()


async def typed_move(page: Page, move: str) -> None:
    await page.fill("#move-input", move)
    await page.press("#move-input", "Enter")


async def shown_board(page: Page, board: str = "#board") -> dict[str, list[str]]:
    """The cards drawn in each pile: every card of a tableau pile, the top of the others."""
    shown: dict[str, list[str]] = await page.eval_on_selector_all(
        f"{board} .pile[data-pile]",
        """piles => Object.fromEntries(piles.map(p => [p.dataset.pile,
            [...p.querySelectorAll('.card[data-card]')].map(c => c.dataset.card)]))""",
    )
    shown.pop("talon", None)
    return shown


def expected_board(state: dict[str, list[str]] | object) -> dict[str, list[str]]:
    """`shown_board`'s view of an engine state's piles."""
    assert isinstance(state, dict)
    piles: dict[str, list[str]] = state["piles"]
    return {pid: cards if pid.startswith("t") else cards[-1:] for pid, cards in piles.items()}
