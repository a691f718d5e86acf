"""Shaula as a search problem (RULES.md 4).

Cards are the engine's ints (suit * 13 + rank - 1, see `core.cards`). The key treats the
four cells as one multiset, the four Forty Thieves piles as one multiset and
the four FreeCell piles as another (piles of one kind follow the same rules,
so swapping two of them changes nothing), and the foundations by suit (which
foundation pile an Ace went to changes nothing either).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from core.cards import Card

__all__ = ["ShaulaProblem"]

# Pile indices inside the search: tableau 0-7 (0-3 Forty Thieves, 4-7
# FreeCell), cells 8-11, and 12 for "the foundation of the card's suit".
CELL0 = 8
FOUNDATION = 12
EMPTY = -1
KING = 12

# A move: (source pile, destination pile, number of cards).
Move = tuple[int, int, int]


def _red(card: int) -> bool:
    return 13 <= card < 39  # diamonds and hearts


def _fits_suit(card: int, onto: int) -> bool:
    """Forty Thieves rule: down in suit."""
    return card + 1 == onto and card % 13 != KING


def _fits_colour(card: int, onto: int) -> bool:
    """FreeCell rule: down by one, the other colour."""
    return (card % 13) + 1 == onto % 13 and _red(card) != _red(onto)


class ShaulaProblem:
    """``wait`` and ``park`` tune the move order (see moves() and _dig())."""

    def __init__(self, state: Mapping[str, Any], *, wait: int = 3, park: int = 4) -> None:
        self._wait = wait
        self._park = park
        piles = state["piles"]
        self.tableau = [[Card.parse(c) for c in piles[f"t{i}"]] for i in range(1, 9)]
        self.cells = [
            Card.parse(piles[f"c{i}"][0]) if piles[f"c{i}"] else EMPTY for i in range(1, 5)
        ]
        # found[suit] = cards of that suit on its foundation; pile_of[suit] = the
        # engine's foundation index holding it (-1 until its Ace is played).
        self.found = [0, 0, 0, 0]
        self.pile_of = [-1, -1, -1, -1]
        for i in range(4):
            cards = piles[f"f{i + 1}"]
            if cards:
                suit = Card.parse(cards[0]) // 13
                self.found[suit] = len(cards)
                self.pile_of[suit] = i
        self._history: list[tuple[Move, int, int]] = []

    # --- the search protocol -------------------------------------------------

    def key(self) -> Hashable:
        t = self.tableau
        return (
            tuple(self.found),
            tuple(sorted(self.cells)),
            tuple(sorted(bytes(p) for p in t[:4])),
            tuple(sorted(bytes(p) for p in t[4:])),
        )

    def is_won(self) -> bool:
        return self.found == [13, 13, 13, 13]

    def forced(self) -> Move | None:
        """RULES.md 7: a card goes up when the other colour's cards one rank lower are up.

        Why it is safe: a card X of rank r is only ever wanted on the tableau as a
        place for another card: the same suit r-1 in a Forty Thieves pile (on
        its foundation already, since X can go up) or the other colour's r-1 in
        a FreeCell pile (both up by the condition; Aces always go up anyway, so
        Twos qualify too). So no winning line ever puts a card on X, and playing
        X up early only frees its place: drop X from every later group move.
        """
        found = self.found
        for i in range(12):
            if i < CELL0:
                card = self.tableau[i][-1] if self.tableau[i] else EMPTY
            else:
                card = self.cells[i - CELL0]
            if card == EMPTY:
                continue
            suit, rank = divmod(card, 13)
            if found[suit] != rank:
                continue
            if rank <= 1:
                return (i, FOUNDATION, 1)
            others = (1, 2) if suit in (0, 3) else (0, 3)
            if found[others[0]] >= rank and found[others[1]] >= rank:
                return (i, FOUNDATION, 1)
        return None

    def moves(self) -> list[Move]:
        """Foundation moves first, then the rest by how close they bring a card up.

        Left out, soundly, as the key would merge them anyway: moves to any but
        the first empty cell or empty pile of a kind, cell to cell, and a whole
        pile into an empty pile of its own kind.
        """
        tableau, cells, found = self.tableau, self.cells, self.found
        up: list[Move] = []
        scored: list[tuple[int, Move]] = []
        free_cell = cells.index(EMPTY) + CELL0 if EMPTY in cells else -1
        empty_thieves = next((i for i in range(4) if not tableau[i]), -1)
        empty_freecell = next((i for i in range(4, 8) if not tableau[i]), -1)

        # Every card that can move with the cards above it: card -> (pile, n).
        movable: dict[int, tuple[int, int]] = {}
        for s in range(8):
            pile = tableau[s]
            if not pile:
                continue
            top = pile[-1]
            if found[top // 13] == top % 13:
                up.append((s, FOUNDATION, 1))
            # The longest group that moves together by this pile's own rule.
            in_rule = _fits_suit if s < 4 else _fits_colour
            whole = len(pile)
            run = 1
            while run < whole and in_rule(pile[-run], pile[-run - 1]):
                run += 1
            for n in range(1, run + 1):
                movable[pile[-n]] = (s, n)
            if free_cell >= 0:
                scored.append((self._dig(pile, 1) + self._park, (s, free_cell, 1)))
            for n in range(1, run + 1):
                bottom = pile[-n]
                # A whole pile into an empty one of its own kind changes nothing.
                if empty_thieves >= 0 and bottom % 13 == KING and not (s < 4 and n == whole):
                    scored.append((self._dig(pile, n) + 2, (s, empty_thieves, n)))
                if empty_freecell >= 0 and not (s >= 4 and n == whole):
                    scored.append((self._dig(pile, n) + 3, (s, empty_freecell, n)))

        for c in range(4):
            card = cells[c]
            if card == EMPTY:
                continue
            src = CELL0 + c
            if found[card // 13] == card % 13:
                up.append((src, FOUNDATION, 1))
            movable[card] = (src, 1)
            if empty_thieves >= 0 and card % 13 == KING:
                scored.append((1, (src, empty_thieves, 1)))
            if empty_freecell >= 0:
                scored.append((4, (src, empty_freecell, 1)))

        # Builds, from what each pile top takes: one card each in a Forty
        # Thieves pile, two (the other colour's) in a FreeCell pile.
        for d in range(8):
            dst = tableau[d]
            if not dst:
                continue
            onto = dst[-1]
            rank = onto % 13
            if rank == 0:
                continue
            if d < 4:
                wanted: tuple[int, ...] = (onto - 1,)
            elif 13 <= onto < 39:  # red: a black card one lower
                wanted = (rank - 1, 39 + rank - 1)
            else:
                wanted = (13 + rank - 1, 26 + rank - 1)
            for card in wanted:
                where = movable.get(card)
                if where is None:
                    continue
                s, n = where
                if s >= CELL0:
                    scored.append((0, (s, d, 1)))
                elif s != d:
                    scored.append((self._dig(tableau[s], n), (s, d, n)))

        scored.sort(key=lambda item: item[0])
        return up + [m for _, m in scored]

    def _dig(self, pile: list[int], n: int) -> int:
        """How far the pile is, once its top n cards leave, from giving a card up:
        cards above each card plus ``wait`` per rank it waits for, at best."""
        found = self.found
        best = 40
        for above, i in enumerate(range(len(pile) - n - 1, -1, -1)):
            if above >= best:
                break
            card = pile[i]
            score = above + self._wait * ((card % 13) - found[card // 13])
            if score < best:
                best = score
        return best if n < len(pile) else -1

    def child_key(self, move: Move) -> Hashable | None:
        return None

    def play(self, move: Move) -> None:
        src, dst, n = move
        if src < CELL0:
            pile = self.tableau[src]
            cards = pile[-n:]
            del pile[-n:]
        else:
            cards = [self.cells[src - CELL0]]
            self.cells[src - CELL0] = EMPTY
        # Remember which suit got its foundation pile with this move, if any.
        opened = EMPTY
        if dst == FOUNDATION:
            suit = cards[0] // 13
            self.found[suit] += 1
            if self.pile_of[suit] < 0:
                opened = suit
                self.pile_of[suit] = self._first_free_foundation()
        elif dst >= CELL0:
            self.cells[dst - CELL0] = cards[0]
        else:
            self.tableau[dst].extend(cards)
        self._history.append((move, cards[0], opened))

    def undo(self) -> None:
        (src, dst, n), bottom, opened = self._history.pop()
        if dst == FOUNDATION:
            self.found[bottom // 13] -= 1
            if opened != EMPTY:
                self.pile_of[opened] = -1
            cards = [bottom]
        elif dst >= CELL0:
            cards = [bottom]
            self.cells[dst - CELL0] = EMPTY
        else:
            pile = self.tableau[dst]
            cards = pile[-n:]
            del pile[-n:]
        if src < CELL0:
            self.tableau[src].extend(cards)
        else:
            self.cells[src - CELL0] = bottom

    def name(self, move: Move) -> str:
        src, dst, n = move
        source = f"t{src + 1}" if src < CELL0 else f"c{src - CELL0 + 1}"
        if dst == FOUNDATION:
            card = self.tableau[src][-1] if src < CELL0 else self.cells[src - CELL0]
            suit = card // 13
            pile = self.pile_of[suit]
            if pile < 0:
                pile = self._first_free_foundation()
            return f"{source} f{pile + 1}"
        target = f"t{dst + 1}" if dst < CELL0 else f"c{dst - CELL0 + 1}"
        return f"{source} {target} {n}" if n > 1 else f"{source} {target}"

    # --- helpers ---------------------------------------------------------------

    def _first_free_foundation(self) -> int:
        """The engine's pick for an Ace: the first foundation pile, in id order, still empty."""
        return min(set(range(4)) - set(self.pile_of))
