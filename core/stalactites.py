"""Stalactites: eight tableau piles, two cells, four foundations with random base
cards built up regardless of suit by ones or by twos (RULES.md section 5)."""

from __future__ import annotations

import itertools
from typing import Any

from core.cards import CARD_TEXT, RANK
from core.game import Game

__all__ = ["Stalactites"]

_F = range(0, 4)
_C = range(4, 6)
_T = range(6, 14)


class Stalactites(Game):
    name = "stalactites"
    title = "Stalactites"
    pile_ids = (
        *(f"f{i}" for i in range(1, 5)),
        "c1",
        "c2",
        *(f"t{i}" for i in range(1, 9)),
    )
    foundations = _F
    cells = _C
    tableau = _T
    progress_base = 4  # the base cards are dealt, not played
    progress_total = 48

    # 0 until the first build fixes the step for the whole game, then 1 or 2.
    _step: int

    def _deal(self, stock: list[int]) -> None:
        piles = self.piles
        for _ in range(6):
            for t in _T:
                piles[t].append(stock.pop())
        for f in _F:
            piles[f].append(stock.pop())
        self._step = 0

    def _copy_extra(self, new: Game) -> None:
        assert isinstance(new, Stalactites)
        new._step = self._step

    def _load(self, data: dict[str, Any]) -> None:
        steps: set[int] = set()
        for f in _F:
            pile = self.piles[f]
            if not 1 <= len(pile) <= 13:
                raise ValueError(f"{self.pile_ids[f]} must hold its base card and at most 13")
            steps.update((RANK[b] - RANK[a]) % 13 for a, b in itertools.pairwise(pile))
        for c in _C:
            if len(self.piles[c]) > 1:
                raise ValueError(f"{self.pile_ids[c]} holds more than one card")
        step = data.get("step")
        if step not in (None, 1, 2):
            raise ValueError("step must be null, 1 or 2")
        if steps and (len(steps) > 1 or steps.isdisjoint((1, 2))):
            raise ValueError("the foundations must all build up by the same step, 1 or 2")
        if steps and step is not None and steps != {step}:
            raise ValueError(f"step {step} does not match the foundations")
        self._step = steps.pop() if steps else (step or 0)

    @property
    def step(self) -> int | None:
        """The building step: None until the first build, then 1 or 2."""
        return self._step or None

    def _key_extra(self) -> int:
        return self._step

    def _state_extra(self, data: dict[str, Any], view: str) -> None:
        data["step"] = self._step or None

    def _wants(self) -> list[tuple[int, int, int]]:
        """(foundation, a rank it takes, another rank it takes) for each foundation not full."""
        piles = self.piles
        step = self._step
        wants = []
        for f in _F:
            pile = piles[f]
            if len(pile) < 13:
                top = RANK[pile[-1]]
                one = top % 13 + 1
                two = (top + 1) % 13 + 1
                if step == 0:
                    wants.append((f, one, two))
                elif step == 1:
                    wants.append((f, one, one))
                else:
                    wants.append((f, two, two))
        return wants

    def _gen(self) -> list[int]:
        piles = self.piles
        codes = self._codes
        out: list[int] = []
        wants = self._wants()
        empty_c = [c for c in _C if not piles[c]]
        for s in range(4, 14):
            pile = piles[s]
            if not pile:
                continue
            row = codes[s]
            r = RANK[pile[-1]]
            for f, a, b in wants:
                if r in (a, b):
                    out.append(row[f])
            for e in empty_c:
                out.append(row[e])
        return out

    def _play(self, code: int) -> int:
        s, d, _ = self._decode[code]
        before = self._step
        dst = self.piles[d]
        c = self.piles[s].pop()
        dst.append(c)
        if d < 4 and before == 0:
            self._step = (RANK[c] - RANK[dst[-2]]) % 13
        return before

    def _unplay(self, code: int, aux: int) -> None:
        s, d, _ = self._decode[code]
        self.piles[s].append(self.piles[d].pop())
        self._step = aux

    def _safe_move(self) -> int | None:
        if self._step == 0:
            return None
        piles = self.piles
        placed = [0] * 14  # cards of each rank on foundations
        for f in _F:
            for c in piles[f]:
                placed[RANK[c]] += 1
        for code in self._gen():
            s, d, _ = self._decode[code]
            # The last card of its rank must go to a foundation in any winning line.
            if d < 4 and placed[RANK[piles[s][-1]]] == 3:
                return code
        return None

    def _why(self, src: int, dst: int, n: int) -> str:
        ids = self.pile_ids
        if dst >= 6:
            if src < 6:
                return "a card in a cell never goes back to the tableau"
            return "nothing is ever placed on a tableau pile in Stalactites"
        if dst >= 4:
            return f"{ids[dst]} is not empty: a cell holds one card"
        target = self.piles[dst]
        if len(target) >= 13:
            return f"{ids[dst]} is full: a foundation holds 13 cards"
        card = CARD_TEXT[self.piles[src][-1]]
        top = CARD_TEXT[target[-1]]
        if self._step:
            return (
                f"{card} does not go on {top}: foundations build up by {self._step} in this game"
                " (fixed by the first build), wrapping from King to Ace"
            )
        return (
            f"{card} does not go on {top}: foundations build up by 1 or 2,"
            " wrapping from King to Ace"
        )
