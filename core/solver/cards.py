"""Card text to the small integers the searches use (RULES.md 1)."""

from __future__ import annotations

__all__ = ["SUITS", "card_of", "rank_of", "suit_of"]

RANKS = "A23456789TJQK"
SUITS = "CDHS"


def rank_of(card: str) -> int:
    """0 for an Ace up to 12 for a King."""
    return RANKS.index(card[0])


def suit_of(card: str) -> int:
    return SUITS.index(card[1])


def card_of(card: str) -> int:
    """suit * 13 + rank: one small integer per card."""
    return suit_of(card) * 13 + rank_of(card)
