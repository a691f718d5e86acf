"""Shaula: four Forty Thieves piles, four FreeCell piles, four cells (RULES.md section 4)."""

from __future__ import annotations

from typing import Any

from core.cards import CARD_TEXT, RANK, RED, SUIT
from core.game import Game

__all__ = ["Shaula"]

_F = range(0, 4)
_C = range(4, 8)
_T = range(8, 16)
_FT = range(8, 12)  # Forty Thieves piles t1-t4: build down in suit
_FC = range(12, 16)  # FreeCell piles t5-t8: build down in alternating colours
_KING = 13
# Per top card: the cards it takes on a Forty Thieves pile (same suit, one rank lower)
# and on a FreeCell pile (other colour, one rank lower).
_WANT_FT = tuple((c - 1,) if RANK[c] > 1 else () for c in range(52))
_WANT_FC = tuple(
    tuple(o * 13 + RANK[c] - 2 for o in range(4) if RED[o * 13] != RED[c]) if RANK[c] > 1 else ()
    for c in range(52)
)


def _run_length(pile: list[int], in_suit: bool) -> int:
    """How many top cards of a tableau pile form a sequence by that pile's rule."""
    n = len(pile)
    if n == 0:
        return 0
    k = 1
    above = pile[-1]
    while k < n:
        below = pile[-k - 1]
        if RANK[below] != RANK[above] + 1:
            break
        if in_suit:
            if SUIT[below] != SUIT[above]:
                break
        elif RED[below] == RED[above]:
            break
        above = below
        k += 1
    return k


class Shaula(Game):
    name = "shaula"
    title = "Shaula"
    pile_ids = (
        *(f"f{i}" for i in range(1, 5)),
        *(f"c{i}" for i in range(1, 5)),
        *(f"t{i}" for i in range(1, 9)),
    )
    foundations = _F
    cells = _C
    tableau = _T
    max_group = 13

    # Foundation index holding each suit's Ace (-1: none yet); kept in step by _play/_unplay.
    _suit_found: list[int]

    def _deal(self, stock: list[int]) -> None:
        piles = self.piles
        for _ in range(6):
            for t in _T:
                piles[t].append(stock.pop())
        for t in _FC:
            piles[t].append(stock.pop())
        self._suit_found = [-1, -1, -1, -1]

    def _load(self, data: dict[str, Any]) -> None:
        self._suit_found = [-1, -1, -1, -1]
        for f in _F:
            pile = self.piles[f]
            for i, c in enumerate(pile):
                if RANK[c] != i + 1 or SUIT[c] != SUIT[pile[0]]:
                    raise ValueError(f"{self.pile_ids[f]} must build up in suit from the Ace")
            if pile:
                self._suit_found[SUIT[pile[0]]] = f
        for c in _C:
            if len(self.piles[c]) > 1:
                raise ValueError(f"{self.pile_ids[c]} holds more than one card")

    def _copy_extra(self, new: Game) -> None:
        assert isinstance(new, Shaula)
        new._suit_found = self._suit_found.copy()

    def _legal_from(self, src: int) -> list[int]:
        return self._gen(range(src, src + 1))

    def _allows(self, src: int, dst: int, n: int) -> bool:
        # The rules of _gen for one move, without listing the others.
        piles = self.piles
        pile = piles[src]
        c = pile[-1]
        r = RANK[c]
        if dst < 8:  # a foundation or a cell: the top card alone
            if n != 1:
                return False
            if dst >= 4:
                return not piles[dst]
            if r == 1:
                return not piles[dst]
            return self._suit_found[SUIT[c]] == dst and len(piles[dst]) == r - 1
        run = 1 if src < 8 else _run_length(pile, src < 12)
        if not 1 <= n <= run:
            return False
        target = piles[dst]
        if not target:  # a Forty Thieves pile takes a run headed by a King, FreeCell any
            return dst >= 12 or n == _KING + 1 - r
        top = target[-1]
        if n != RANK[top] - r:  # the group's head must be one rank below the top card
            return False
        head = pile[-n]
        return SUIT[head] == SUIT[top] if dst < 12 else RED[head] != RED[top]

    def _has_move(self) -> bool:
        # The servers ask `stuck` after every move: stop at the first legal move, by the
        # same rules as _gen (a differential test keeps the two in step).
        piles = self.piles
        # Any card may go to an empty cell, or alone to an empty FreeCell pile.
        if not (
            piles[4] and piles[5] and piles[6] and piles[7]  # the cells (_C)
            and piles[12] and piles[13] and piles[14] and piles[15]  # FreeCell piles (_FC)
        ):  # fmt: skip
            return any(piles[4:16])
        suit_found = self._suit_found
        empty_ft = False  # an empty Forty Thieves pile takes a run headed by a King
        wanted: set[int] = set()  # the cards some tableau pile's top card takes
        for t in _T:
            p = piles[t]
            if p:
                wanted.update((_WANT_FT if t < 12 else _WANT_FC)[p[-1]])
            else:
                empty_ft = True
        for s in range(4, 16):
            pile = piles[s]
            if not pile:
                continue
            c = pile[-1]
            r = RANK[c]
            if r == 1:
                if not all(piles[f] for f in _F):
                    return True
            else:
                f = suit_found[SUIT[c]]
                if f >= 0 and len(piles[f]) == r - 1:
                    return True
            if c in wanted:
                return True
            if s >= 8:
                # A group headed by a wanted card moves (a pile never takes its own cards:
                # they all rank above what its top card takes).
                run = _run_length(pile, s < 12)
                if empty_ft and _KING + 1 - r <= run:
                    return True
                for k in range(2, run + 1):
                    if pile[-k] in wanted:
                        return True
            elif empty_ft and r == _KING:
                return True
        return False

    def _gen(self, sources: range = range(4, 16)) -> list[int]:
        piles = self.piles
        codes = self._codes
        out: list[int] = []
        empty_f = [f for f in _F if not piles[f]]
        empty_c = [c for c in _C if not piles[c]]
        suit_found = self._suit_found
        # Per destination pile: (index, Forty Thieves?, top rank or 0 when empty, suit, red).
        dests = []
        for t in _T:
            p = piles[t]
            if p:
                d = p[-1]
                dests.append((t, t < 12, RANK[d], SUIT[d], RED[d]))
            else:
                dests.append((t, t < 12, 0, 0, False))
        for s in sources:
            pile = piles[s]
            if not pile:
                continue
            row = codes[s]
            c = pile[-1]
            r = RANK[c]
            if r == 1:
                for f in empty_f:
                    out.append(row[f])
            else:
                f = suit_found[SUIT[c]]
                if f >= 0 and len(piles[f]) == r - 1:
                    out.append(row[f])
            for e in empty_c:
                out.append(row[e])
            # Group size: a cell moves one card; a tableau pile its run by its own rule.
            run = 1 if s < 8 else _run_length(pile, s < 12)
            for t, ft, dr, ds, dred in dests:
                if t == s:
                    continue
                base = row[t] - 1
                if dr == 0:
                    if ft:
                        k = _KING + 1 - r  # the King, if the run reaches one
                        if k <= run:
                            out.append(base + k)
                    else:
                        for k in range(1, run + 1):
                            out.append(base + k)
                else:
                    k = dr - r  # the card one rank below the top sits k cards down
                    if 1 <= k <= run:
                        h = pile[-k]
                        if (SUIT[h] == ds) if ft else (RED[h] != dred):
                            out.append(base + k)
        return out

    def _play(self, code: int) -> int:
        s, d, n = self._decode[code]
        piles = self.piles
        src = piles[s]
        dst = piles[d]
        if n == 1:
            c = src.pop()
            dst.append(c)
            if d < 4 and len(dst) == 1:
                self._suit_found[SUIT[c]] = d
        else:
            dst += src[-n:]
            del src[-n:]
        return 0

    def _unplay(self, code: int, aux: int) -> None:
        s, d, n = self._decode[code]
        piles = self.piles
        src = piles[s]
        dst = piles[d]
        if n == 1:
            c = dst.pop()
            src.append(c)
            if d < 4 and not dst:
                self._suit_found[SUIT[c]] = -1
        else:
            src += dst[-n:]
            del dst[-n:]

    def _safe_move(self) -> int | None:
        piles = self.piles
        suit_found = self._suit_found
        for code in self._gen():
            s, d, _ = self._decode[code]
            if d >= 4:
                continue
            r = RANK[piles[s][-1]]
            if r <= 2:
                return code
            # Both cards of the other colour one rank lower must be on foundations.
            red = RED[piles[s][-1]]
            if all(
                suit_found[o] >= 0 and len(piles[suit_found[o]]) >= r - 1
                for o in range(4)
                if RED[o * 13] != red
            ):
                return code
        return None

    def _why(self, src: int, dst: int, n: int) -> str:
        ids = self.pile_ids
        pile = self.piles[src]
        head = pile[-n]
        if n > 1:
            in_suit = src < 12
            if _run_length(pile, in_suit) < n:
                rule = "down in suit" if in_suit else "down in alternating colours"
                return f"the top {n} cards of {ids[src]} are not a sequence {rule}"
        h = CARD_TEXT[head]
        target = self.piles[dst]
        if dst < 4:
            if not target:
                return "an empty foundation takes only an Ace"
            top = target[-1]
            if RANK[head] == 1:
                return f"{ids[dst]} is not empty: an Ace starts an empty foundation"
            if SUIT[head] != SUIT[top]:
                return f"{h} does not go on {CARD_TEXT[top]} in a foundation: same suit needed"
            return f"{h} does not go on {CARD_TEXT[top]} in a foundation: one rank higher needed"
        if dst < 8:
            return f"{ids[dst]} is not empty: a cell holds one card"
        kind = "a Forty Thieves pile" if dst < 12 else "a FreeCell pile"
        if not target:
            return "an empty Forty Thieves pile takes only a King or a group headed by a King"
        top = target[-1]
        t = CARD_TEXT[top]
        if dst < 12 and SUIT[head] != SUIT[top]:
            return f"{h} does not go on {t} in {kind}: same suit needed"
        if dst >= 12 and RED[head] == RED[top]:
            return f"{h} does not go on {t} in {kind}: other colour needed"
        return f"{h} does not go on {t} in {kind}: one rank lower needed"
