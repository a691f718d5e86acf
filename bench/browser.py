"""What the web bench (bench/web.py) and the browser tests (tests/server/edge/web/) both start: the
distribution's Chromium under Playwright (Playwright cannot download its own browser
here) with the flags a headless run in a container needs, and the solver bot that races
against the page."""

from __future__ import annotations

import os
import shutil
import sys

from playwright.async_api import Browser, Playwright

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "bot_command", "launch_chromium"]

CHROMIUM = os.environ.get("SOLRACE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


async def launch_chromium(pw: Playwright, executable: str = CHROMIUM) -> Browser:
    return await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


def bot_command(base: str, room: str, pace: float, name: str) -> list[str]:
    """The solver bot (`solrace bot`) joining `room` on the server at `base`."""
    return [
        sys.executable,
        *("-m", "client_cli", "--server", base, "bot", room),
        *("--pace", str(pace), "--name", name),
    ]
