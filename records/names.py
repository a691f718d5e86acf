"""Display names: what a player may be called, and the key that makes names unique.

A name is 2 to 20 characters: ASCII letters and digits, `_` and `-`, beginning with a
letter or a digit (it appears in URLs, `/p/NAME`, and in every other player's terminal,
so nothing that needs quoting or could draw on a screen). Names are unique whatever
their case: `Ann` and `ann` are one name, and its key (`name_key`) is what the records
keep unique and look players up by. Names beginning `Guest-` are given to anonymous
players and `Bot-` to new bots only (`guest_name`), so that neither ever looks like a
chosen name (nor a person like a bot).
"""

from __future__ import annotations

import random
import re

__all__ = [
    "BOT_PREFIX",
    "GUEST_PREFIX",
    "NAME_MAX",
    "NAME_MIN",
    "BadName",
    "check_name",
    "guest_name",
    "name_key",
]

NAME_MIN = 2
NAME_MAX = 20
GUEST_PREFIX = "Guest-"
BOT_PREFIX = "Bot-"
_RESERVED = (GUEST_PREFIX.casefold(), BOT_PREFIX.casefold())
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{{NAME_MIN - 1},{NAME_MAX - 1}}}")


class BadName(ValueError):
    """A name that breaks the rules; the message says which rule, to show to the player."""


def name_key(name: str) -> str:
    """The key of a name: names equal but for case have the same key."""
    return name.casefold()


def check_name(name: object) -> str:
    """`name` if a player may choose it, else BadName saying why."""
    if not isinstance(name, str):
        raise BadName("a name is a string")
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise BadName(f"a name has {NAME_MIN} to {NAME_MAX} characters")
    if not _NAME.fullmatch(name):
        raise BadName(
            "a name has letters (A-Z), digits, '_' and '-' only, and begins with a letter "
            "or a digit"
        )
    if name_key(name).startswith(_RESERVED):
        raise BadName(
            f"names beginning {GUEST_PREFIX!r} or {BOT_PREFIX!r} are given to new players only"
        )
    return name


def guest_name(rng: random.Random, attempt: int = 0, *, bot: bool = False) -> str:
    """A name for a new player: `Guest-4821` (`Bot-4821` for a bot), longer after each
    collision (`attempt` counts the names already found taken), so retries end quickly."""
    digits = 4 + attempt
    prefix = BOT_PREFIX if bot else GUEST_PREFIX
    return f"{prefix}{rng.randrange(10 ** (digits - 1), 10**digits)}"
