"""The browser tests' own harness (tests/support/web.py): what a page reported is that
page's alone."""

from __future__ import annotations

import asyncio
import gc

import pytest
from playwright.async_api import Browser
from support.web import new_page, page_errors, seen

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the module's Chromium


async def test_a_new_page_starts_with_nothing_reported(browser: Browser) -> None:
    """What a page reported was kept under its Python object's id(): a page made after an
    earlier one was collected could get its id, and with it the earlier page's console
    errors (a test saw a 409 no request of its own had met)."""
    for _ in range(20):
        page = await new_page(browser)
        assert page_errors(page) == [] and seen(page).requests == []
        seen(page).errors.append("console error: an earlier page's")
        seen(page).requests.append("http://earlier/")
        await page.context.close()
        del page
        await asyncio.sleep(0.1)  # Playwright lets the closed page's object go
        gc.collect()
