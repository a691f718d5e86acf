"""`identify`: from now on this socket acts as the player whose key it sent."""

from __future__ import annotations

import time

import protocol as p
from protocol import ErrorCode
from records.keys import hash_secret
from server.handlers.context import Context
from server.identity.accounts import IdentityError, player_ref
from server.live.connection import Connection
from server.room.race import RaceError

__all__ = ["Identify"]


class Identify:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def on_identify(self, conn: Connection, msg: p.Identify) -> None:
        accounts = self.ctx.accounts
        if accounts is None:
            raise RaceError(ErrorCode.BAD_KEY, "this server keeps no players")
        if conn.room is not None or conn.quick is not None:
            # A seat or a ticket taken anonymously (or as another player) stays as it was.
            raise RaceError(ErrorCode.ALREADY_JOINED, "identify first, then join")
        # Until the key is checked, the socket is nobody: a `join` sent right behind this
        # `identify` must not seat the player anonymously when an outage stops the check.
        conn.unidentified = True
        try:
            player = await accounts.who(msg.key, time.time())
        except IdentityError as err:
            conn.unidentified = False  # checked: no player's key, the socket stays as it was
            raise RaceError(err.code, err.message) from None
        conn.player, conn.key_hash = player.id, hash_secret(msg.key)
        conn.unidentified = False
        conn.send(p.Identified(player=player_ref(player)))
