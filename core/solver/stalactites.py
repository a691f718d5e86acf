"""Stalactites as a search problem (RULES.md 5).

Suits never matter in Stalactites, so the search keeps ranks only (0 = Ace).
Only tableau tops move, and nothing is ever placed on the tableau, so the
tableau is fully described by its pile heights. Given the heights, the step
and how many cards each foundation holds, the cards in the cells are fixed
too (they are the cards that left the tableau and are not on a foundation),
so the key is just (heights, foundation counts, step).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from core.cards import Card

__all__ = ["StalactitesProblem"]


def rank_of(card: str) -> int:
    """0 for an Ace up to 12 for a King."""
    return Card.parse(card) % 13


# A move: (kind, source index, destination index).
TABLEAU_TO_FOUNDATION = 0
TABLEAU_TO_CELL = 1
CELL_TO_FOUNDATION = 2
Move = tuple[int, int, int]

FULL = 13  # a foundation holds 13 cards, its base card included
COUNTS = 48  # where the foundation counts start in the packed key
ALL_FULL = sum(FULL << (4 * f) for f in range(4))  # the packed counts of a won game
EMPTY = -1


class StalactitesProblem:
    """``prefer``: the step (1 or 2) whose first builds are tried first;
    ``builds_first``: every build before any cell move (else mixed by score);
    ``steps``: the steps the first build may fix (while none is fixed yet).

    Searching with ``steps=(1,)`` and with ``steps=(2,)`` splits the game in
    two: every winning line builds, and its first build fixes one step, so
    it is a line of one of the two. Each half is searched (and proved lost)
    on its own; the deal is unwinnable only when both halves are. Why split:
    one step's half is often a large lost space that a plain depth-first
    search must exhaust before it tries the other step's easy win (deal 216).
    Every rule below (forced builds, dead ends, cell moves) is argued for a
    game whose builds follow the allowed steps, so it holds in each half.
    """

    def __init__(
        self,
        state: Mapping[str, Any],
        *,
        prefer: int = 1,
        builds_first: bool = False,
        steps: tuple[int, ...] = (1, 2),
    ) -> None:
        self._prefer = prefer
        self._allowed = steps
        self._park = 100 if builds_first else 0
        piles = state["piles"]
        self.tableau = [[rank_of(c) for c in piles[f"t{i}"]] for i in range(1, 9)]
        self.cells = [rank_of(piles[f"c{i}"][0]) if piles[f"c{i}"] else EMPTY for i in (1, 2)]
        foundations = [piles[f"f{i}"] for i in range(1, 5)]
        self.base = [rank_of(f[0]) for f in foundations]
        self.top = [rank_of(f[-1]) for f in foundations]
        self.count = [len(f) for f in foundations]
        self.step: int = state.get("step") or 0  # 0: not fixed yet
        # Cards of each rank not yet on a foundation: when one is left, exactly
        # one foundation still needs that rank (each foundation takes every rank once).
        self.loose = [0] * 13
        for pile in self.tableau:
            for r in pile:
                self.loose[r] += 1
        for r in self.cells:
            if r != EMPTY:
                self.loose[r] += 1
        # Foundations with the same base rank are interchangeable: their counts
        # are sorted within each such group in the key.
        groups: dict[int, list[int]] = {}
        for i, b in enumerate(self.base):
            groups.setdefault(b, []).append(i)
        self._twin_groups = [g for g in groups.values() if len(g) > 1]
        self._history: list[tuple[Move, int]] = []
        # Pile heights (6 bits each) and foundation counts (4 bits each) in one
        # int, kept up to date by play/undo: the key without a loop.
        self._packed = sum(len(p) << (6 * i) for i, p in enumerate(self.tableau))
        self._packed += sum(c << (COUNTS + 4 * f) for f, c in enumerate(self.count))
        self._tables: dict[int, tuple[list[list[int]], list[int]]] = {}
        self._forced_ranks: dict[int, dict[int, int]] = {}

    # --- the search protocol -------------------------------------------------

    def key(self) -> Hashable:
        if not self._twin_groups:
            return self._packed | (self.step << 64)
        return self._sort_twins(self._packed) | (self.step << 64)

    def is_won(self) -> bool:
        return self._packed >> COUNTS == ALL_FULL

    def forced(self) -> Move | None:
        """A build no winning line can regret; RULES.md 7's autoplay is the case k = 1.

        Once the step is fixed, every foundation takes each rank exactly once,
        so the k cards of rank r still loose meet exactly k foundations that
        still need r. When all k cards can be played (pile tops or cells) and
        all k foundations take r right now, build one of them. Why it is safe:
        in any winning line each of those foundations takes nothing until it
        gets a card of rank r, and cards of one rank are interchangeable on
        the foundations; so playing the k builds first, in any pairing, leaves
        the line's other moves legal (a card gone from a pile top or a cell
        only frees a cell or uncovers a card), and after the line's last
        rank-r build both positions are the same.
        """
        if not self.step:
            return None
        # Which ranks can be forced depends on the foundations alone: cached.
        state = (self._packed >> COUNTS) | (self.step << 16)
        candidates = self._forced_ranks.get(state)
        if candidates is None:
            candidates = self._forced_ranks[state] = self._forced_table()
        if not candidates:
            return None
        cells = self.cells
        tops = [p[-1] if p else EMPTY for p in self.tableau]
        loose = self.loose
        ready = [r for r in candidates if cells.count(r) + tops.count(r) == loose[r]]
        if not ready:
            return None
        # The first source (cells, then piles) holding a ready rank.
        for i, r in enumerate(cells):
            if r in ready:
                return (CELL_TO_FOUNDATION, i, candidates[r])
        for i, r in enumerate(tops):
            if r in ready:
                return (TABLEAU_TO_FOUNDATION, i, candidates[r])
        return None  # not reached: a ready rank is on some source

    def moves(self) -> list[Move]:
        """Cell cards up first, then builds and cell moves by how soon the card
        they uncover (and, for a cell move, the card parked) can go up."""
        takers, distance = self._foundation_tables()
        cells, tableau = self.cells, self.tableau
        builds: list[Move] = []
        for i, r in enumerate(cells):
            # Two cells holding the same rank are interchangeable sources.
            if r != EMPTY and takers[r] and not (i and cells[0] == r):
                for f in takers[r]:
                    builds.append((CELL_TO_FOUNDATION, i, f))
        scored: list[tuple[int, Move]] = []
        for i, pile in enumerate(tableau):
            if pile:
                fs = takers[pile[-1]]
                if fs:
                    under = distance[pile[-2]] if len(pile) > 1 else 0
                    for f in fs:
                        scored.append((under, (TABLEAU_TO_FOUNDATION, i, f)))
        free_cells = cells.count(EMPTY)
        if free_cells and (builds or scored or not self._buried_too_deep(takers, free_cells)):
            # A card never goes from cell to cell (cells are interchangeable),
            # and into the first empty cell only (any other is the same). The
            # last card of a pile never goes to a cell: it uncovers nothing, and
            # a pile top is exactly as playable as a cell card (both go only to
            # a foundation), so any line doing it wins as well without it.
            free = cells.index(EMPTY)
            park = self._park
            for i, pile in enumerate(tableau):
                if len(pile) > 1:
                    score = park + distance[pile[-1]] + distance[pile[-2]]
                    scored.append((score, (TABLEAU_TO_CELL, i, free)))
        if self.step:
            scored.sort(key=lambda item: item[0])
        else:
            # The first build fixes the step: the preferred step's builds first.
            scored.sort(key=lambda item: (self._fixes_other_step(item[1]), item[0]))
            builds.sort(key=self._fixes_other_step)
        return builds + [move for _, move in scored]

    def child_key(self, move: Move) -> Hashable | None:
        """The packed key after `move`, without playing it."""
        kind, src, dst = move
        packed = self._packed
        step = self.step
        if kind != CELL_TO_FOUNDATION:
            packed -= 1 << (6 * src)
        if kind != TABLEAU_TO_CELL:
            packed += 1 << (COUNTS + 4 * dst)
            if not step:
                r = self.tableau[src][-1] if kind == TABLEAU_TO_FOUNDATION else self.cells[src]
                step = (r - self.top[dst]) % 13
        if self._twin_groups:
            packed = self._sort_twins(packed)
        return packed | (step << 64)

    def play(self, move: Move) -> None:
        kind, src, dst = move
        step = self.step
        if kind == TABLEAU_TO_CELL:
            self.cells[dst] = self.tableau[src].pop()
            self._packed -= 1 << (6 * src)
        else:
            if kind == TABLEAU_TO_FOUNDATION:
                r = self.tableau[src].pop()
                self._packed -= 1 << (6 * src)
            else:
                r = self.cells[src]
                self.cells[src] = EMPTY
            if not step:
                self.step = (r - self.top[dst]) % 13
            self.top[dst] = r
            self.count[dst] += 1
            self._packed += 1 << (COUNTS + 4 * dst)
            self.loose[r] -= 1
        self._history.append((move, step))

    def undo(self) -> None:
        (kind, src, dst), step = self._history.pop()
        if kind == TABLEAU_TO_CELL:
            self.tableau[src].append(self.cells[dst])
            self._packed += 1 << (6 * src)
            self.cells[dst] = EMPTY
            return
        r = self.top[dst]
        self.loose[r] += 1
        self.count[dst] -= 1
        self._packed -= 1 << (COUNTS + 4 * dst)
        self.top[dst] = (r - (self.step or 1)) % 13
        self.step = step
        if kind == TABLEAU_TO_FOUNDATION:
            self.tableau[src].append(r)
            self._packed += 1 << (6 * src)
        else:
            self.cells[src] = r

    def name(self, move: Move) -> str:
        kind, src, dst = move
        if kind == TABLEAU_TO_FOUNDATION:
            return f"t{src + 1} f{dst + 1}"
        if kind == TABLEAU_TO_CELL:
            return f"t{src + 1} c{dst + 1}"
        return f"c{src + 1} f{dst + 1}"

    # --- helpers ---------------------------------------------------------------

    def _sort_twins(self, packed: int) -> int:
        """`packed` with the counts of each group of twin foundations (same
        base rank) in ascending order: twins differ only in how far they got."""
        for group in self._twin_groups:
            shifts = [COUNTS + 4 * f for f in group]
            counts = sorted((packed >> shift) & 15 for shift in shifts)
            for shift, c in zip(shifts, counts, strict=True):
                packed += (c - ((packed >> shift) & 15)) << shift
        return packed

    def _steps(self) -> tuple[int, ...]:
        return (self.step,) if self.step else self._allowed

    def _fixes_other_step(self, move: Move) -> bool:
        kind, src, dst = move
        if kind == TABLEAU_TO_CELL:
            return False
        r = self.tableau[src][-1] if kind == TABLEAU_TO_FOUNDATION else self.cells[src]
        return (r - self.top[dst]) % 13 != self._prefer

    def _foundation_tables(self) -> tuple[list[list[int]], list[int]]:
        """`_taker_table` and `_distances`, which depend on the foundations alone:
        cached by foundation counts and step (the tops follow from them)."""
        state = (self._packed >> COUNTS) | (self.step << 16)
        tables = self._tables.get(state)
        if tables is None:
            tables = self._tables[state] = (self._taker_table(), self._distances())
        return tables

    def _forced_table(self) -> dict[int, int]:
        """The ranks whose loose cards are all wanted by foundations right now
        (as many takers as cards left), each with one such foundation. `loose`
        follows from the foundations too (a rank's cards not yet built)."""
        takers = [0] * 13
        taker = [0] * 13
        for f in range(4):
            if self.count[f] < FULL:
                r = (self.top[f] + self.step) % 13
                takers[r] += 1
                taker[r] = f
        return {r: taker[r] for r in range(13) if takers[r] and takers[r] == self.loose[r]}

    def _taker_table(self) -> list[list[int]]:
        """For each rank, the foundations that take it now, one per interchangeable twin."""
        table: list[list[int]] = [[] for _ in range(13)]
        seen: set[tuple[int, int]] = set()
        for f in range(4):
            if self.count[f] < FULL:
                twin = (self.base[f], self.count[f])
                if twin in seen:
                    continue
                seen.add(twin)
                for step in self._steps():
                    table[(self.top[f] + step) % 13].append(f)
        return table

    def _buried_too_deep(self, takers: list[list[int]], free_cells: int) -> bool:
        """No build now, and no card a foundation takes can be dug out: a dead end.

        Why it is sound: until some build happens, the ranks the foundations
        take stay the same and the only moves are tableau to cell, each filling
        a cell. No cell card and no pile top is of a rank taken (no build now),
        so a build first needs such a card dug out of a pile: one cell move per
        card above it. With fewer free cells than that in every pile, no build
        ever comes, and the game is lost from here.
        """
        for pile in self.tableau:
            for above in range(min(free_cells + 1, len(pile))):
                if takers[pile[-1 - above]]:
                    return False
        return True

    def _distances(self) -> list[int]:
        """For each rank, how many builds the nearest foundation needs before it takes it."""
        best = [13] * 13
        for step in self._steps():
            for f in range(4):
                if self.count[f] < FULL:
                    r = self.top[f]
                    for d in range(13 - self.count[f]):
                        r = (r + step) % 13
                        if d < best[r]:
                            best[r] = d
        return best
