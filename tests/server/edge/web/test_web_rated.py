"""The lobby's create form: rated by default, casual when unticked, and never rated with a
deal picked by its number (the box is then unticked and off)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Browser
from support.server_processes import ServerProcess
from support.web import new_page, page_errors, room_view


async def _create(
    server: ServerProcess, browser: Browser, name: str, casual: bool, number: bool
) -> dict[str, Any]:
    page = await new_page(browser)
    await page.goto(server.url)
    await page.fill("#name", name)
    await page.fill("input[name=seats]", "1")
    if casual:
        await page.uncheck("input[name=rated]")
    if number:
        await page.click("#more-settings summary")
        await page.select_option("select[name=seed_mode]", "number")
        assert await page.is_disabled("input[name=rated]")
        assert not await page.is_checked("input[name=rated]")
        await page.fill("input[name=seed]", "617")
    await page.click("#create button[type=submit]")
    await page.wait_for_selector("#ready, #create-error:not(:empty)")
    assert await page.locator("#create-error:not(:empty)").count() == 0
    assert page_errors(page) == []
    room = page.url.split("/play/")[1].split("?")[0]
    return room_view(server.url, room)


async def test_a_room_is_rated_unless_made_casual_or_dealt_by_number(
    server: ServerProcess, browser: Browser
) -> None:
    assert (await _create(server, browser, "ann", casual=False, number=False))["rated"] is True
    assert (await _create(server, browser, "bob", casual=True, number=False))["rated"] is False
    assert (await _create(server, browser, "cyd", casual=False, number=True))["rated"] is False
