"""Deal numbers go up to 2^63-1, past what a JavaScript number holds exactly (2^53): the
pages must show, and send, the very number the server has (a player who copies a deal
number must get that deal)."""

from __future__ import annotations

from playwright.async_api import Browser
from support.server_processes import ServerProcess
from support.web import new_page, page_errors, room_view

BIG = 2**63 - 25  # as a JavaScript number: 9223372036854775808


async def test_a_deal_number_past_2_53_is_sent_and_shown_exactly(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.fill("#name", "ann")
    await page.click("#more-settings summary")
    await page.select_option("select[name=seed_mode]", "number")
    await page.fill("input[name=seed]", str(BIG))
    await page.fill("input[name=seats]", "1")
    await page.click("#create button[type=submit]")
    await page.wait_for_selector("#ready, #create-error:not(:empty)")
    assert await page.locator("#create-error:not(:empty)").count() == 0, await page.inner_text(
        "#create-error"
    )
    room = page.url.split("/play/")[1].split("?")[0]
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    assert room_view(base, room)["seed"] == BIG  # the deal asked for, not a rounded one
    assert f"#{BIG}" in await page.inner_text("h1.room-title")
    spectator = await new_page(browser)
    await spectator.goto(f"{base}/watch/{room}")
    await spectator.wait_for_selector("h1.room-title")
    await spectator.wait_for_function(
        "seed => document.querySelector('h1.room-title').textContent.includes('#' + seed)",
        arg=str(BIG),
    )
    assert page_errors(page, spectator) == []
