"""Ids, tokens, names and seeds: what a new room, seat or deal is given, and how a typed
room code or player name is cleaned before it is used."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets

import core

__all__ = [
    "NAME_MOST",
    "ROOM_ID",
    "clean_name",
    "draw_seed",
    "new_room_id",
    "new_token",
    "printable_name",
    "race_key",
    "random_seed",
    "room_key",
]

log = logging.getLogger(__name__)

ROOM_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def new_room_id() -> str:
    return secrets.token_hex(4)


def room_key(code: str) -> str:
    """The room a code names, in whatever case it was typed: ids are lower-case hex."""
    return code.lower()


def race_key(code: str) -> str:
    """The archived race an id names ("ROOM.ROUND"), in whatever case it was typed."""
    return code[:100].lower()


def new_token() -> str:
    return secrets.token_urlsafe(18)


NAME_MOST = 32  # characters of a player's name in a room


def printable_name(name: str) -> str:
    """A name fit to show: no control or format characters (an escape sequence in a name
    would reach every other player's terminal), no spaces around it; not cut."""
    return "".join(ch for ch in name if ch.isprintable()).strip()


def clean_name(name: str) -> str:
    """A player name fit to show, at most NAME_MOST characters."""
    return printable_name(name)[:NAME_MOST]


def random_seed() -> int:
    return 1 + secrets.randbelow(core.MAX_SEED)


async def draw_seed(game: str, mode: str) -> tuple[int, str]:
    """A seed for `mode` ("random" or "winnable") and the mode actually used."""
    if mode == "winnable":
        try:
            seed = await asyncio.to_thread(core.winnable_seed, game, secrets.SystemRandom())
            return seed, "winnable"
        except RuntimeError:
            log.warning("no winnable %s deal found: dealing a random one", game)
    return random_seed(), "random"
