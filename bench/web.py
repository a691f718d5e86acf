"""The web client in the distribution's headless Chromium: weight, ack-to-draw, a busy watch page.

``python -m bench.web`` starts ``python -m server`` on its own redis-server (as
bench/load.py does) and Chromium (/usr/bin/chromium, through Playwright), then prints:

- **transfer**: the bytes each page loads (headers and bodies, as Chromium counts them),
  against the page budget of 200 KB;
- **ack to frame**: from an ``accepted`` arriving on the race page to the start of the
  next animation frame (the frame that shows the move: the page changes the DOM on
  arrival), over a whole solved Shaula deal played by typing; the baseline is a ``pong``
  to a ping sent with each move (same moment of the frame, draws nothing); and how much of
  a frame (16.7 ms) the drawing itself takes;
- **watch page**: the frame intervals of a watch page showing ``--boards`` boards while
  that many solver bots race at ``--pace`` (0.05 s, the bots' fastest), against the same
  page idle before the start and against a page that draws nothing during the same race
  (the baseline: what the loaded machine allows any page); the time each redraw takes.

The timings are read through bench.browser's PROBE, run in each page before its own
scripts: the web client carries no measuring code. It records and prints, ending each
part with a ``GOAL`` line (the goal, the figure, met or not); it asserts
nothing. Chromium here has no GPU and shares two cores
with the server, Redis and the bots, so absolute figures are pessimistic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Browser, Page, async_playwright

import core
from bench.browser import CHROMIUM, bot_command, launch_chromium, probe
from bench.load import solrace
from bench.loadgen import percentile
from bench.server import ROOT

__all__ = ["main"]

BUDGET = 200 * 1024  # bytes a page may load
FRAME = 1000 / 60  # ms


def create_room(base: str, **body: Any) -> str:
    request = urllib.request.Request(
        f"{base}/rooms", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return str(json.load(answer)["room"]["id"])


async def new_page(browser: Browser) -> Page:
    context = await probe(await browser.new_context(viewport={"width": 1280, "height": 860}))
    context.set_default_timeout(30_000)
    return await context.new_page()


async def transfer(browser: Browser, base: str, path: str, ready: str) -> tuple[int, int]:
    """(requests, bytes) to load `path` in a fresh context (nothing cached)."""
    page = await new_page(browser)
    finished: list[Any] = []
    page.on("requestfinished", lambda request: finished.append(request))
    await page.goto(base + path)
    await page.wait_for_selector(ready)
    await page.wait_for_load_state("networkidle")
    total = 0
    for request in finished:
        sizes = await request.sizes()
        total += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        total += sizes["requestBodySize"] + sizes["requestHeadersSize"]
    await page.context.close()
    return len(finished), total


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return (
        f"p50 {statistics.median(values):6.2f}  p99 {percentile(sorted(values), 0.99):6.2f}  "
        f"max {max(values):6.2f}"
    )


def share(values: list[float], limit: float) -> float:
    """The fraction of `values` at or below `limit`."""
    return sum(1 for x in values if x <= limit) / len(values) if values else float("nan")


async def bench_transfer(browser: Browser, base: str) -> list[str]:
    room = create_room(base, game="moojub", seats=2)
    pages = {
        "/ (lobby)": ("/", "#rooms[data-feed=live]"),
        "/play/ROOM": (f"/play/{room}", "#take-seat"),
        "/watch/ROOM": (f"/watch/{room}", "#delay"),
        "/tv": ("/tv", "#tv-idle"),
        "/rules/shaula": ("/rules/shaula", "#rules h2"),
    }
    lines = [f"{'page':<16} {'requests':>8} {'bytes':>8}  of budget"]
    largest = 0
    for name, (path, ready) in pages.items():
        count, size = await transfer(browser, base, path, ready)
        largest = max(largest, size)
        lines.append(f"{name:<16} {count:>8} {size:>8}  {size / BUDGET:5.1%} of 200 KB")
    verdict = "met" if largest < BUDGET else "NOT met"
    lines.append(
        f"GOAL page transfer under 200 KB: {verdict} (the largest page {largest} bytes, "
        f"{largest / BUDGET:.0%} of it)"
    )
    return lines


async def bench_ack(browser: Browser, base: str) -> list[str]:
    room = create_room(base, game="shaula", seed=617, seats=1)
    line = core.solve(core.new_game("shaula", 617), shorten=True).moves
    page = await new_page(browser)
    await page.goto(f"{base}/play/{room}?sit=1")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    # The baseline: a ping sent in the same task as each move (the move form's submit), so
    # that its pong arrives at the same moment of the frame as the move's `accepted` (input
    # is handled at the start of a frame: the phase matters) and draws nothing.
    await page.evaluate(
        """() => {
            const s = window.__probe;
            document.addEventListener('submit', () => s.ping(), true);
        }"""
    )
    for i, move in enumerate(line):
        await page.fill("#move-input", move)
        await page.press("#move-input", "Enter")
        await page.wait_for_function(
            "n => window.__probe.ackToFrame.length >= n", arg=i + 1, polling=10
        )
    stats = await page.evaluate("() => window.__probe")
    await page.context.close()
    ack, start, work = stats["ackToFrame"], stats["ackToFrameStart"], stats["ackDrawMs"]
    pong, pong_start = stats["pongToFrame"], stats["pongToFrameStart"]
    within, base_within = share(start, FRAME), share(pong_start, FRAME)
    ratio = statistics.median(ack) / statistics.median(pong) if pong else float("nan")
    return [
        f"accepted -> next frame begins ({len(start)} moves)  {spread(start)} ms; "
        f"{within:.0%} within one frame",
        f"  pong sent with each move ({len(pong_start)})    {spread(pong_start)} ms; "
        f"{base_within:.0%} within one frame (baseline: draws nothing)",
        f"accepted -> the page's callback in that frame {spread(ack)} ms",
        f"  pong sent with each move                  {spread(pong)} ms",
        f"drawing a move (on arrival, before that frame) {spread(work)} ms",
        f"ratio ack/pong (p50, callback)  {ratio:.2f}",
        f"GOAL a move's acknowledgement drawn within one frame of its arrival: drawn in the "
        f"DOM on arrival (p50 {statistics.median(work):.2f} ms of work), so the next frame "
        f"shows it; that frame began within {FRAME:.1f} ms of the arrival for {within:.0%} of "
        f"moves (a message that draws nothing, arriving with them: {base_within:.0%})",
    ]


async def frames(page: Page, seconds: float) -> list[float]:
    """Intervals (ms) between animation frames over `seconds`."""
    result: list[float] = await page.evaluate(
        """seconds => new Promise(done => {
            const times = []; const end = performance.now() + seconds * 1000;
            const step = (t) => { times.push(t); if (t < end) requestAnimationFrame(step);
              else done(times.slice(1).map((x, i) => x - times[i])); };
            requestAnimationFrame(step); })""",
        seconds,
    )
    return result


async def bench_watch(browser: Browser, base: str, boards: int, pace: float) -> list[str]:
    room = create_room(base, game="shaula", seed=617, seats=boards, countdown=2)
    page = await new_page(browser)
    await page.goto(f"{base}/watch/{room}")
    await page.wait_for_selector("#delay")
    idle = await frames(page, 2.0)
    other = await new_page(browser)
    await other.goto(f"{base}/rules/shaula")
    await other.wait_for_selector("#rules h2")
    # Each bot is a player of its own (its own key file: one player holds one seat), with a
    # name of its own (a name is one player's for good).
    state = tempfile.TemporaryDirectory(prefix="solrace-bench-bots-")
    bots = [
        await asyncio.create_subprocess_exec(
            *bot_command(base, room, pace, f"bot{i}-{room[:6]}"),
            cwd=ROOT,
            env={**os.environ, "XDG_STATE_HOME": f"{state.name}/bot{i}"},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for i in range(boards)
    ]
    try:
        await page.wait_for_selector(f".watched:nth-child({boards}) .card", timeout=60_000)
        # Tasks over 50 ms on each page's main thread (the page's own script, style,
        # layout, paint): long frames without long tasks come from elsewhere (raster and
        # compositing, which have no GPU here, or a machine that gave Chromium no CPU).
        for each in (page, other):
            await each.evaluate(
                """() => { const s = window.__probe; s.longTasks = [];
                    new PerformanceObserver(list => { for (const e of list.getEntries())
                      s.longTasks.push(e.duration); }).observe({type: 'longtask'}); }"""
            )
        await page.evaluate(
            "() => { window.__probe.drawMs = []; window.__probe.timeDraws = true; }"
        )
        started = time.monotonic()
        busy: list[float] = []
        loaded: list[float] = []  # a page that draws nothing, during the same race
        while not await page.locator("#results-table").count():
            watched, blank = await asyncio.gather(frames(page, 1.0), frames(other, 1.0))
            busy += watched
            loaded += blank
            if time.monotonic() - started > 120:
                break
        elapsed = time.monotonic() - started
        draws = await page.evaluate("() => window.__probe.drawMs")
        tasks = await page.evaluate("() => window.__probe.longTasks")
        blank_tasks = await other.evaluate("() => window.__probe.longTasks")
        events = await page.evaluate(
            "() => [...document.querySelectorAll('#players .num')]"
            ".map(n => parseInt(n.textContent))"
        )
    finally:
        for bot in bots:
            if bot.returncode is None:
                bot.kill()
            await bot.wait()
        state.cleanup()
    await page.context.close()
    await other.context.close()
    long = sum(1 for x in busy if x > 50)
    long_blank = sum(1 for x in loaded if x > 50)
    ratio = statistics.median(busy) / statistics.median(loaded)
    # Smooth: frames at 60 a second like a page that draws nothing (median), and no more
    # long frames (over 50 ms) than that page has on the same machine meanwhile, plus 1%.
    smooth = statistics.median(busy) <= FRAME * 1.05 and long / len(busy) <= (
        long_blank / len(loaded) + 0.01
    )
    return [
        f"{boards} boards, bots at {pace} s/move: {elapsed:.1f} s of racing, "
        f"{sum(events)} cards put up, {len(draws)} redraws",
        f"frame interval, idle      {spread(idle)} ms",
        f"frame interval, racing    {spread(busy)} ms; {long} frames over 50 ms of {len(busy)}",
        f"  a blank page meanwhile  {spread(loaded)} ms (the machine's load, baseline)",
        f"one redraw (all boards)   {spread(draws)} ms",
        f"main-thread tasks over 50 ms: {len(tasks)} ({sum(tasks):.0f} ms in all); "
        f"blank page {len(blank_tasks)} ({sum(blank_tasks):.0f} ms)",
        f"ratio watch page / blank page (p50 frame interval) {ratio:.2f}",
        f"GOAL a watch page with {boards} boards stays smooth at the fastest bot pace: "
        f"{'met' if smooth else 'NOT met'} (median frame {statistics.median(busy):.1f} ms, "
        f"blank page {statistics.median(loaded):.1f} ms; frames over 50 ms "
        f"{long / len(busy):.1%}, blank page {long_blank / len(loaded):.1%})",
    ]


async def run(args: argparse.Namespace) -> None:
    options = argparse.Namespace(
        load_cpu=None, server_cpu=None, redis_cpu=None, server_env={"SOLRACE_DRAIN": "0"}
    )
    async with solrace(options) as server, async_playwright() as pw:
        base = f"http://127.0.0.1:{server.port}"
        browser = await launch_chromium(pw, args.chromium)
        try:
            parts: dict[str, tuple[str, Callable[[], Awaitable[list[str]]]]] = {
                "transfer": ("transfer (fresh cache)", lambda: bench_transfer(browser, base)),
                "ack": ("ack to frame, race page", lambda: bench_ack(browser, base)),
                "watch": (
                    "watch page",
                    lambda: bench_watch(browser, base, args.boards, args.pace),
                ),
            }
            for part in args.parts.split(","):
                title, measure = parts[part]
                lines = await measure()
                print(f"\n== {title}")
                print("\n".join(lines))
        finally:
            await browser.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.web", description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=8, help="boards on the watch page (8)")
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between bot moves")
    parser.add_argument("--chromium", default=CHROMIUM, help="the Chromium binary")
    parser.add_argument(
        "--parts", default="transfer,ack,watch", help="which parts, in order (all three)"
    )
    asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
