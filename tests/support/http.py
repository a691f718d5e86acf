"""HTTP calls of the tests: JSON in and out over aiohttp, and creating a room."""

from __future__ import annotations

from typing import Any

import aiohttp

__all__ = ["ROOM_DEFAULTS", "create_room", "get_json", "get_text", "post_json"]

# What a test's room is unless it says otherwise: a short countdown keeps races quick.
ROOM_DEFAULTS: dict[str, Any] = {"game": "shaula", "countdown": 0.2}


async def post_json(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST `body` as JSON; the status and the JSON answer."""
    async with aiohttp.ClientSession() as http, http.post(url, json=body, headers=headers) as r:
        return r.status, await r.json()


async def post_ok(url: str, body: Any) -> dict[str, Any]:
    """POST `body` as JSON; the answer, which must be a success (200 or 201)."""
    status, answer = await post_json(url, body)
    assert status in (200, 201), (url, status, answer)
    return dict(answer)


async def get_json(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return r.status, await r.json()


async def get_text(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return r.status, await r.text()


async def create_room(server_url: str, **body: Any) -> dict[str, Any]:
    """POST /rooms with ROOM_DEFAULTS under `body`; the new room (201 asserted)."""
    status, answer = await post_json(f"{server_url}/rooms", {**ROOM_DEFAULTS, **body})
    assert status == 201, answer
    room: dict[str, Any] = answer["room"]
    return room
