"""Helpers of the browser tests: a race server process, Chromium pages that record errors."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Page
from tests_support import free_port

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "ServerProcess", "new_page", "page_errors", "seen"]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("SOLRACE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@dataclass
class ServerProcess:
    redis_url: str
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        assert self.log is not None
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server",
                "--port",
                str(self.port),
                "--redis-url",
                self.redis_url,
                "--countdown",
                "1",
                "--log-level",
                "WARNING",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        out.close()
        for _ in range(200):
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log.read_text()[-2000:]}")
            try:
                await asyncio.to_thread(urllib.request.urlopen, f"{self.url}/healthz", None, 1)
                return
            except OSError:
                await asyncio.sleep(0.05)
        raise RuntimeError("the server did not answer /healthz in 10 s")

    async def stop(self, kill: bool = False) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        await asyncio.to_thread(self.proc.wait, 10)

    async def restart(self, kill: bool = True) -> None:
        await self.stop(kill)
        await self.start()


@dataclass
class Seen:
    """What a page reported: console errors, uncaught errors, requests (URLs)."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


SEEN: dict[int, Seen] = {}


async def new_page(browser: Browser, width: int = 1280, height: int = 860) -> Page:
    context = await browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(15_000)
    page = await context.new_page()
    seen = SEEN.setdefault(id(page), Seen())
    page.on(
        "console",
        lambda msg: (
            seen.errors.append(f"console {msg.type}: {msg.text}")
            if msg.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda exc: seen.errors.append(f"page error: {exc}"))
    page.on("request", lambda request: seen.requests.append(request.url))
    return page


def seen(page: Page) -> Seen:
    return SEEN[id(page)]


def page_errors(*pages: Page) -> list[str]:
    return [error for page in pages for error in seen(page).errors]


async def create_room(base: str, **body: object) -> str:
    """POST /rooms; the new room's id."""
    import json

    def post() -> str:
        request = urllib.request.Request(
            f"{base}/rooms",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return str(json.load(answer)["room"]["id"])

    return await asyncio.to_thread(post)


def start_bot(base: str, room: str, pace: float, name: str = "bot") -> subprocess.Popen[bytes]:
    """The solver bot (`solrace bot`) in its own process."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "client_cli",
            "--server",
            base,
            "bot",
            room,
            "--pace",
            str(pace),
            "--name",
            name,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def take_seat(page: Page, base: str, room: str, name: str) -> None:
    await page.goto(f"{base}/play/{room}")
    await page.fill("#seat-name", name)
    await page.click("#take-seat")
    await page.wait_for_selector("#ready")


async def acks(page: Page) -> int:
    return int(await page.evaluate("window.__solrace.ackToFrame.length"))


async def wait_acks(page: Page, count: int) -> None:
    # A function, not an expression: the page's CSP forbids eval.
    await page.wait_for_function(
        "n => window.__solrace.ackToFrame.length >= n", arg=count, polling=20
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
    card = await page.locator(f"{pile(page, src)} .card").nth(-n).bounding_box()
    target = await page.locator(pile(page, dst)).bounding_box()
    assert card is not None and target is not None
    await page.mouse.move(card["x"] + card["width"] / 2, card["y"] + 10)
    await page.mouse.down()
    await page.mouse.move(target["x"] + target["width"] / 2, target["y"] + 30, steps=4)
    await page.mouse.up()


async def typed_move(page: Page, move: str) -> None:
    await page.fill("#move-input", move)
    await page.press("#move-input", "Enter")
