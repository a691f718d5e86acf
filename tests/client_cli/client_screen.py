"""Shared test helpers: the screen of a headless app as text."""

from __future__ import annotations

from typing import Any

from textual.app import App

__all__ = ["screen_text"]


def screen_text(app: App[Any]) -> str:
    """What the (headless) terminal shows, one line per row, colours dropped."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
