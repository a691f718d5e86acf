"""A ghost race in Chromium, as its racer and its spectators see it: the ghost's "ghost" tag
in its own bar, and no board drawn for the ghost (it has none: only its progress moves)."""

from __future__ import annotations

from playwright.async_api import Browser
from support.http import create_room, post_json
from support.server_processes import ServerProcess
from support.web import new_page, page_errors
from support.wsclient import WsClient, race_alone

import core
import protocol as p


async def recorded_run(base: str, game: str, seed: int, count: int) -> str:
    """A finished one-seat race: `count` moves of the solver's line, then resigned."""
    room = str((await create_room(base, game=game, seed=seed, seats=1, countdown=0))["id"])
    async with WsClient.connect(base) as ann:
        await race_alone(ann, room)
        await ann.play(core.solve(core.new_game(game, seed)).moves[:count])
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
    return room


async def ghost_room(base: str, recorded: str) -> str:
    status, answer = await post_json(f"{base}/rooms", {"ghost": recorded})
    assert status == 201, answer
    return str(answer["room"]["id"])


async def test_the_ghost_tag_stands_in_the_ghost_s_bar(
    server: ServerProcess, browser: Browser
) -> None:
    # The tag's class once was the dragged cards' too, which are fixed at the window's corner.
    base = server.url
    room = await ghost_room(base, await recorded_run(base, "shaula", 617, 10))
    page = await new_page(browser)
    await page.goto(f"{base}/watch/{room}")
    tag = page.locator('#players .bar[data-seat="1"] .tag.ghost')
    await tag.wait_for()
    bar = await page.locator('#players .bar[data-seat="1"]').bounding_box()
    box = await tag.bounding_box()
    assert bar is not None and box is not None
    assert bar["x"] <= box["x"] and box["x"] + box["width"] <= bar["x"] + bar["width"], (bar, box)
    assert bar["y"] <= box["y"] and box["y"] + box["height"] <= bar["y"] + bar["height"], (bar, box)
    assert await tag.evaluate("el => getComputedStyle(el).position") != "fixed"
    assert page_errors(page) == []


async def test_watching_a_moojub_ghost_race_draws_no_board_for_the_ghost(
    server: ServerProcess, browser: Browser
) -> None:
    # Moojub's `started` carries the deal's board for every seat; the ghost has none to
    # follow (its progress comes without moves), so a board of it would stay at the deal.
    base = server.url
    seed = 845
    room = await ghost_room(base, await recorded_run(base, "moojub", seed, 16))
    page = await new_page(browser)
    await page.goto(f"{base}/watch/{room}")
    await page.wait_for_selector('#players .bar[data-seat="1"]')
    async with WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await bo.send(p.Ready())
        await bo.expect(p.RaceStarted)
        await page.wait_for_selector('.watched[data-seat="0"] .board .card')
        await page.wait_for_function(
            """() => !document.querySelector('#players .bar[data-seat="1"] .num')
                  .textContent.startsWith('0/')"""
        )
        assert await page.locator('.watched[data-seat="1"]').count() == 0
        assert await page.locator(".watched").count() == 1
    assert page_errors(page) == []
