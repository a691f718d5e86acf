"""Players over HTTP for tests: make one, act as one (its key as a Bearer header)."""

from __future__ import annotations

from typing import Any

import aiohttp

__all__ = ["call", "new_player"]


async def call(
    server_url: str,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    key: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, dict[str, str]]:
    """(status, JSON answer, headers) of one request, acting as `key` when given."""
    sent = dict(headers or {})
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, f"{server_url}{path}", json=body, headers=sent) as r,
    ):
        return r.status, await r.json(), dict(r.headers)


async def new_player(
    server_url: str, name: str | None = None, *, bot: bool = False
) -> tuple[str, dict[str, Any]]:
    """A new player (named `name` when given): its key and its PLAYER object."""
    status, body, _ = await call(server_url, "POST", "/players", {"bot": bot})
    assert status == 201, body
    key, player = body["key"], body["player"]
    if name is not None:
        status, body, _ = await call(server_url, "POST", "/me/name", {"name": name}, key)
        assert status == 200, body
        player = body["player"]
    return key, player
