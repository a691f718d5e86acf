"""Whether a request to /ws is a WebSocket upgrade this server can take (RFC 6455 section
4.2.1), and if not, what its client should send instead. aiohttp checks the same before it
upgrades, in words such as "Handshake error: None"; this check comes first, so that the
author of an outside client reads what to fix, and a version other than 13 is answered
426 with the version this server speaks (section 4.2.2), not taken (aiohttp took the
drafts 7 and 8)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from aiohttp import web

__all__ = ["VERSION", "upgrade_refusal"]

VERSION = "13"


def upgrade_refusal(headers: Mapping[str, str]) -> web.HTTPException | None:
    """The answer to a request to open a WebSocket with these headers (None: take it)."""
    if headers.get("Upgrade", "").strip().lower() != "websocket":
        return web.HTTPBadRequest(
            text="/ws opens a WebSocket: send the upgrade (Upgrade: websocket, "
            "Connection: Upgrade, Sec-WebSocket-Version: 13, Sec-WebSocket-Key)"
        )
    if headers.get("Sec-WebSocket-Version", "").strip() != VERSION:
        return web.HTTPUpgradeRequired(
            text="this server speaks WebSocket version 13 (RFC 6455): "
            "send Sec-WebSocket-Version: 13",
            headers={"Sec-WebSocket-Version": VERSION},
        )
    try:
        key = base64.b64decode(headers.get("Sec-WebSocket-Key", ""), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != 16:
        return web.HTTPBadRequest(
            text="the upgrade needs a Sec-WebSocket-Key: 16 random bytes in base64 "
            "(RFC 6455 section 4.1)"
        )
    return None
