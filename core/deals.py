"""Seeds to shuffled decks, exactly as PySolFC does it (RULES.md section 3).

The layout of a seed must never change: saved races and replays depend on it.
"""

from __future__ import annotations

from pysol_cards.random import LCRandom31, MTRandom

from core.cards import card_of

__all__ = ["MAX_SEED", "check_seed", "shuffled_stock"]

MAX_SEED = 2**63 - 1
# PySolFC uses the Microsoft-compatible generator below this number, Mersenne Twister from it.
_FIRST_MT_SEED = 32000

# PySolFC builds its deck suit by suit: clubs, spades, hearts, diamonds, each Ace to King.
_PYSOL_SUITS = (0, 3, 2, 1)  # C S H D as indices in core.cards' C D H S order
_PYSOL_DECK: tuple[int, ...] = tuple(card_of(r, s) for s in _PYSOL_SUITS for r in range(1, 14))


def check_seed(seed: object) -> int:
    """Return ``seed`` if it is a valid deal number, else raise a clear ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(
            f"seed must be a whole number from 1 to {MAX_SEED}, got {type(seed).__name__} {seed!r}"
        )
    if not 1 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be a whole number from 1 to {MAX_SEED}, got {seed}")
    return seed


def shuffled_stock(seed: int) -> list[int]:
    """The shuffled face-down stock for ``seed``; its LAST card is dealt first."""
    seed = check_seed(seed)
    cards = list(_PYSOL_DECK)
    if seed < _FIRST_MT_SEED:
        # Microsoft order: rank by rank, each rank in the suit order C D H S.
        cards = [cards[i + j] for i in range(13) for j in (0, 39, 26, 13)]
        lc = LCRandom31(seed)
        for n in range(51, 0, -1):
            j = lc.random() % (n + 1)
            cards[n], cards[j] = cards[j], cards[n]
    else:
        mt = MTRandom(seed)
        for n in range(51, 0, -1):
            j = int(mt.random() * (n + 1))
            cards[n], cards[j] = cards[j], cards[n]
    return cards
