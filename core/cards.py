"""Cards as small ints, and their two-character text form.

A card is an int 0..51: ``suit * 13 + rank - 1`` with suits in the order
clubs, diamonds, hearts, spades (``C D H S``) and ranks 1 (Ace) .. 13 (King).
Ints keep the engine's inner loops cheap; :class:`Card` converts to and from
text (``AS``, ``TD``; parsing also accepts ``10`` and lower case).
"""

from __future__ import annotations

__all__ = [
    "CARD_TEXT",
    "DECK",
    "RANK",
    "RANK_CHARS",
    "RED",
    "SUIT",
    "SUIT_CHARS",
    "Card",
    "card_of",
]

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"

DECK: tuple[int, ...] = tuple(range(52))
RANK: tuple[int, ...] = tuple(c % 13 + 1 for c in DECK)
SUIT: tuple[int, ...] = tuple(c // 13 for c in DECK)
# Diamonds and hearts are red; clubs and spades black.
RED: tuple[bool, ...] = tuple(SUIT_CHARS[s] in "DH" for s in SUIT)
CARD_TEXT: tuple[str, ...] = tuple(RANK_CHARS[RANK[c] - 1] + SUIT_CHARS[SUIT[c]] for c in DECK)


def card_of(rank: int, suit: int) -> int:
    """The card int of a rank (1..13) and a suit index (0..3, order ``C D H S``)."""
    return suit * 13 + rank - 1


_PARSE: dict[str, int] = {}
for _c in DECK:
    _PARSE[CARD_TEXT[_c]] = _c
    if RANK[_c] == 10:
        _PARSE["10" + SUIT_CHARS[SUIT[_c]]] = _c


class Card:
    """Parse and format helpers for card ints (a namespace: cards stay plain ints)."""

    @staticmethod
    def parse(text: str) -> int:
        """``"AS"``, ``"td"``, ``"10H"`` -> card int; ValueError if it is not a card."""
        card = _PARSE.get(text.strip().upper()) if isinstance(text, str) else None
        if card is None:
            raise ValueError(f"not a card: {text!r} (expected e.g. AS, TD, 10H)")
        return card

    @staticmethod
    def text(card: int) -> str:
        """The canonical two-character form of a card int: ``"AS"``, ``"TD"``."""
        return CARD_TEXT[card]
