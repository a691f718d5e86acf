"""Moojub: four reserves fed from a face-down talon, 32 foundations in 8 columns of
4 rows, started in order under five rules and built up in suit (RULES.md section 6)."""

from __future__ import annotations

import itertools
from bisect import insort
from typing import Any

from core.cards import CARD_TEXT, RANK, SUIT
from core.game import DEAL_CODE, Game

__all__ = ["Moojub"]

_F = range(0, 32)
_R = range(32, 36)
_SUIT_NAMES = ("club", "diamond", "heart", "spade")
# The card that goes on each card in a foundation: same suit, one rank up, King to Ace.
_NEXT: tuple[int, ...] = tuple(c - c % 13 + (c % 13 + 1) % 13 for c in range(52))


class Moojub(Game):
    name = "moojub"
    title = "Moojub"
    pile_ids = (*(f"f{i}" for i in range(1, 33)), *(f"r{i}" for i in range(1, 5)))
    foundations = _F
    cells = _R
    tableau = range(36, 36)
    has_talon = True

    # Foundations f1..f(_started) hold cards, the rest are empty (they start in order).
    _started: int
    # For each card, the foundations (ascending) whose next card it is; full ones are left out.
    _want: list[list[int]]

    def _deal(self, stock: list[int]) -> None:
        for r in _R:
            self.piles[r].append(stock.pop())
        self.talon = stock
        self._started = 0
        self._want = [[] for _ in range(52)]

    def _load(self, data: dict[str, Any]) -> None:
        piles = self.piles
        self._started = sum(1 for f in _F if piles[f])
        self._want = [[] for _ in range(52)]
        for f in _F:
            pile = piles[f]
            if (f < self._started) != bool(pile):
                raise ValueError("foundations must be started in order: f1, f2, ...")
            if len(pile) > 13 or any(_NEXT[a] != b for a, b in itertools.pairwise(pile)):
                raise ValueError(f"{self.pile_ids[f]} must build up in suit, at most 13 cards")
            if 0 < len(pile) < 13:
                self._want[_NEXT[pile[-1]]].append(f)

    def _copy_extra(self, new: Game) -> None:
        assert isinstance(new, Moojub)
        new._started = self._started
        new._want = [w.copy() for w in self._want]

    def _state_extra(self, data: dict[str, Any], view: str) -> None:
        if view == "full":
            data["talon"] = [CARD_TEXT[c] for c in reversed(self.talon)]
        data["talon_count"] = len(self.talon)

    def _start_refusal(self, card: int, f: int) -> str | None:
        """Why ``card`` from a reserve cannot start the empty foundation ``f``, or None."""
        ids = self.pile_ids
        piles = self.piles
        if f != self._started:
            return (
                f"{ids[f]} cannot be started yet: foundations start in order,"
                f" {ids[self._started]} is next"
            )
        suit = SUIT[card]
        if f >= 4:
            left = piles[f - 4][0]
            if SUIT[left] != suit:
                return (
                    f"{ids[f]} must start with a {_SUIT_NAMES[SUIT[left]]},"
                    f" the suit of {ids[f - 4]}'s base card"
                )
        else:
            for g in range(f):
                if SUIT[piles[g][0]] == suit:
                    return f"column 1 already has a {_SUIT_NAMES[suit]} foundation ({ids[g]})"
        lower = [
            (RANK[p[-1]], r)
            for r in _R
            if (p := piles[r]) and SUIT[p[-1]] == suit and RANK[p[-1]] < RANK[card]
        ]
        if lower:
            r = min(lower)[1]
            return (
                f"{CARD_TEXT[piles[r][-1]]} on {ids[r]} is a lower {_SUIT_NAMES[suit]}:"
                " only the lowest visible card of a suit starts a foundation"
            )
        if self._want[card]:
            return (
                f"{CARD_TEXT[card]} goes on {ids[self._want[card][0]]},"
                " so it cannot start a new foundation"
            )
        return None

    def _gen(self) -> list[int]:
        piles = self.piles
        codes = self._codes
        want = self._want
        out: list[int] = []
        started = self._started
        for r in _R:
            pile = piles[r]
            if not pile:
                continue
            c = pile[-1]
            ws = want[c]
            if ws:
                row = codes[r]
                for f in ws:
                    out.append(row[f])
            elif started < 32 and self._start_refusal(c, started) is None:
                out.append(codes[r][started])
        if self.talon:
            out.append(DEAL_CODE)
        return out

    def _play(self, code: int) -> int:
        piles = self.piles
        if code == DEAL_CODE:
            talon = self.talon
            dealt = 0
            for r in _R:
                if talon:
                    piles[r].append(talon.pop())
                    dealt += 1
            return dealt
        s, d, _ = self._decode[code]
        c = piles[s].pop()
        dst = piles[d]
        if dst:
            self._want[c].remove(d)
        else:
            self._started += 1
        dst.append(c)
        if len(dst) < 13:
            insort(self._want[_NEXT[c]], d)
        return 0

    def _unplay(self, code: int, aux: int) -> None:
        piles = self.piles
        if code == DEAL_CODE:
            for r in reversed(_R[:aux]):
                self.talon.append(piles[r].pop())
            return
        s, d, _ = self._decode[code]
        dst = piles[d]
        c = dst.pop()
        if len(dst) < 12:
            self._want[_NEXT[c]].remove(d)
        if dst:
            insort(self._want[c], d)
        else:
            self._started -= 1
        piles[s].append(c)

    def _why(self, src: int, dst: int, n: int) -> str:
        ids = self.pile_ids
        if dst >= 32:
            return "cards never move onto a reserve except by deal"
        card = self.piles[src][-1]
        target = self.piles[dst]
        if not target:
            return self._start_refusal(card, dst) or "that foundation cannot be started now"
        if len(target) >= 13:
            return f"{ids[dst]} is full: a foundation holds 13 cards"
        c, t = CARD_TEXT[card], CARD_TEXT[target[-1]]
        if SUIT[card] != SUIT[target[-1]]:
            return f"{c} does not go on {t} in {ids[dst]}: same suit needed"
        return f"{c} does not go on {t} in {ids[dst]}: one rank higher needed (King to Ace wraps)"

    def _why_not_deal(self) -> str:
        return "the talon is empty"
