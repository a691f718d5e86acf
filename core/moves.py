"""The move value type and the engine's errors.

Errors (both are ``ValueError``s, so a caller can catch either)::

    ValueError
    └── IllegalMove          a readable move that breaks a rule; the message names the rule
        └── UnreadableMove   text that is not a move at all; the message says so

A move's canonical text is ``SRC DST`` (one card), ``SRC DST N`` (a group of N >= 2
cards) or ``deal``; :meth:`Move.parse` reads that back and also the input forms of
RULES.md section 2: a bare ``f`` destination, an explicit count of 1, any case,
extra spaces.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["DEAL", "IllegalMove", "Move", "UnreadableMove"]


class IllegalMove(ValueError):
    """A move the rules refuse (or an undo that cannot be done); the message says why."""


class UnreadableMove(IllegalMove):
    """Text that could not be read as a move."""


_PILE = re.compile(r"[a-z]+[0-9]+|talon")
_COUNT = re.compile(r"[0-9]+")


class Move(NamedTuple):
    """A move: ``n`` cards from pile ``src`` to pile ``dst``, or the Moojub deal.

    ``src``/``dst`` are pile ids (``"t5"``, ``"c1"``); ``dst`` may be the bare
    ``"f"`` of player input (the first foundation that takes the card). The deal
    is ``Move("deal", "", 0)`` (:data:`DEAL`). ``str(move)`` is the canonical text.
    """

    src: str
    dst: str
    n: int = 1

    def __str__(self) -> str:
        if self.src == "deal":
            return "deal"
        if self.n == 1:
            return f"{self.src} {self.dst}"
        return f"{self.src} {self.dst} {self.n}"

    @property
    def is_deal(self) -> bool:
        return self.src == "deal"

    @classmethod
    def parse(cls, text: str) -> Move:
        """Read a move; raise :class:`UnreadableMove` if the text is not one."""
        if not isinstance(text, str):
            raise UnreadableMove(f"could not read move {text!r}: expected text")
        words = text.lower().split()
        if words == ["deal"]:
            return DEAL
        if len(words) not in (2, 3):
            raise UnreadableMove(
                f"could not read move {text!r}: expected 'SRC DST', 'SRC DST N' or 'deal'"
            )
        src, dst = words[0], words[1]
        if not _PILE.fullmatch(src):
            raise UnreadableMove(f"could not read move {text!r}: {src!r} is not a pile id")
        if dst != "f" and not _PILE.fullmatch(dst):
            raise UnreadableMove(f"could not read move {text!r}: {dst!r} is not a pile id")
        n = 1
        if len(words) == 3:
            if not _COUNT.fullmatch(words[2]) or int(words[2]) < 1:
                raise UnreadableMove(
                    f"could not read move {text!r}: the count must be a whole number from 1"
                )
            n = int(words[2])
        # Normalise "t05" to "t5" so that equal moves compare equal.
        return cls(_norm(src), _norm(dst), n)


def _norm(pile: str) -> str:
    if pile in ("f", "talon"):
        return pile
    letters = pile.rstrip("0123456789")
    return f"{letters}{int(pile[len(letters) :])}"


DEAL = Move("deal", "", 0)
