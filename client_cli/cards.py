"""How one card looks on screen: coloured suit symbols, or plain letters as a fallback."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from rich.text import Text

__all__ = ["CARD_WIDTH", "FACE_DOWN", "CardStyle", "card_text", "cards_in_text", "style_from_env"]

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
RED_SUITS = frozenset("DH")
# "10" reads better than the notation's "T" on a card; three columns fit every card.
RANK_LABELS = {"T": "10"}
CARD_WIDTH = 3
FACE_DOWN = "##"


@dataclass(frozen=True)
class CardStyle:
    """`symbols`: ♠♥♦♣ (else the letters S H D C); `color`: red and black suits in colour."""

    symbols: bool = True
    color: bool = True


def style_from_env(ascii_only: bool = False, no_color: bool | None = None) -> CardStyle:
    """The style asked for: `--ascii` gives letters, NO_COLOR (no-color.org) no colour."""
    if no_color is None:
        no_color = bool(os.environ.get("NO_COLOR"))
    return CardStyle(symbols=not ascii_only, color=not no_color)


def card_text(card: str, style: CardStyle, width: int = CARD_WIDTH) -> Text:
    """A card such as `TH` drawn as `10♥` in red (or `10H` without symbols), `width` wide.

    The colour is a span, not the Text's base style, so padding after it stays plain.
    """
    if card[-1:] not in SUIT_SYMBOLS:
        # A card a spectator may not see yet (the protocol's "??": not dealt to every
        # racer still racing): drawn face down.
        return Text(FACE_DOWN.ljust(width), style="dim")
    rank, suit = card[:-1], card[-1]
    label = RANK_LABELS.get(rank, rank) + (SUIT_SYMBOLS[suit] if style.symbols else suit)
    # A wider face (when there is room) keeps the label one column in, like a card's corner.
    label = label.ljust(CARD_WIDTH) if width <= CARD_WIDTH else (" " + label).ljust(width)
    if not style.color:
        return Text(label)
    colour = "bold red" if suit in RED_SUITS else "bold black"
    text = Text()
    text.append(label, style=f"{colour} on white")
    return text


# A card's code; or a quoted stretch, what the player typed quoted back ("could not read move
# 'QD JH'"), which stays as typed (an apostrophe within a word, "f1's", opens no quote).
CARD_WORD = re.compile(r"(?<![A-Za-z0-9])'[^']*'(?![A-Za-z0-9])|\b([A2-9TJQK])([CDHS])\b")


def cards_in_text(text: str, style: CardStyle, base: str = "") -> Text:
    """A sentence with its cards (the engine's `JD`, `TS`) drawn as on the board."""
    out = Text(style=base)
    last = 0
    for match in CARD_WORD.finditer(text):
        if match.group(1) is None:
            continue  # quoted: as typed
        out.append(text[last : match.start()])
        card = card_text(match.group(0), style)
        card.rstrip()
        out.append_text(card)
        last = match.end()
    out.append(text[last:])
    return out
