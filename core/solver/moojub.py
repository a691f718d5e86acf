"""Moojub as a search problem (RULES.md 6), on the engine's own fast path.

The start rules are the subtle part of Moojub, so the search does not restate
them: it plays on a copy of the engine (`generate` / `push` / `pop`) and only
adds a canonical key, the dropping of equivalent moves and an order.

The search sees the talon: the server knows it, and the solver answers for
the full state. What leaves the solver is a move, never a talon card.

Key. Foundations start strictly in order and every foundation of a row has
the suit of that row's column-1 base, so the start rules only ever look at how
many foundations are started and at the column-1 suits, in row order. Building
looks at a foundation's top card and size, never at its place in the row. So
the started foundations are keyed as a multiset of (top card, size); full ones
(13 cards) take nothing more and are left out. The reserves and the talon are
kept exactly (deals go to r1..r4 in order, so reserves are not interchangeable).
"""

from __future__ import annotations

from collections.abc import Hashable

from core.game import Game
from core.moves import Move

__all__ = ["MoojubProblem"]

FOUNDATIONS = 32
RESERVES = range(32, 36)
FULL = 13


def _next(card: int) -> int:
    """The card built on ``card``: same suit, one rank up, King to Ace."""
    return card - card % 13 + (card % 13 + 1) % 13


NEXT = tuple(_next(c) for c in range(52))


class MoojubProblem:
    """``deal_first``: try a deal before starting a foundation (see moves())."""

    def __init__(self, game: Game, *, deal_first: bool = True) -> None:
        self.game = game.copy()
        self._index = self.game.index
        self._deal_first = deal_first
        # The engine's move values, by reserve and foundation.
        self._moves = {
            r: {f: Move(f"r{r - 31}", f"f{f + 1}", 1) for f in range(32)} for r in RESERVES
        }

    # --- the search protocol -------------------------------------------------

    def key(self) -> Hashable:
        """One small bytes object (card ints are below 52; 252..255 separate parts)."""
        piles = self.game.piles
        foundations = piles[:FOUNDATIONS]
        started = FOUNDATIONS - foundations.count([])
        tops = sorted([p[-1] * 16 + len(p) for p in foundations if 0 < len(p) < FULL])
        key = bytearray((len(self.game.talon), started))
        key.extend(p[0] // 13 for p in foundations[: min(started, 4)])
        key.append(255)
        for top in tops:
            key += bytes(divmod(top, 16))
        for r in RESERVES:
            key.append(254)
            key += bytes(piles[r])
        return bytes(key)

    def is_won(self) -> bool:
        """All 52 cards are on foundations: no card left in a reserve or the talon."""
        piles = self.game.piles
        return not self.game.talon and not any(piles[r] for r in RESERVES)

    def forced(self) -> Move | None:
        """A build that no winning line can regret (RULES.md 7 finds none in general).

        Cards are unique, so the one foundation F whose top is the card below X
        wants X until it gets it: X can never start a foundation (rule 5), and
        every winning line W builds X on F at some time t. Build it now instead;
        W's moves before t stay legal when nothing X's early build changes can
        matter to them:

        - F takes nothing but X, and no foundation but F could ever take X.
        - X leaves the reserve's top: one visible card fewer only loosens rule 4.
        - The card Y under X shows wherever W shows X. Y is never played before
          t in W (it is covered), but by rule 4 it could stop a start of a
          higher card of its suit. Harmless if Y is X's suit and higher (X
          stopped the same starts in W), or if every higher card of Y's suit is
          already on a foundation.
        - F now wants X's next card N, so by rule 5 N cannot start a
          foundation. Harmless if F is full with X, if N is on a foundation
          already, or if N lies under X (W cannot play it before t either).

        From t on the two positions are the same.
        """
        piles = self.game.piles
        wants = {NEXT[p[-1]]: f for f, p in enumerate(piles[:FOUNDATIONS]) if 0 < len(p) < FULL}
        loose: set[int] | None = None
        for r in RESERVES:
            stack = piles[r]
            if not stack or stack[-1] not in wants:
                continue
            card = stack[-1]
            f = wants[card]
            if loose is None:
                loose = set(self.game.talon)
                for q in RESERVES:
                    loose.update(piles[q])
            if len(stack) > 1:
                under = stack[-2]
                if not (under // 13 == card // 13 and under % 13 > card % 13) and any(
                    c in loose for c in range(under + 1, under - under % 13 + 13)
                ):
                    continue
            following = _next(card)
            if len(piles[f]) < FULL - 1 and following in loose and following not in stack:
                continue
            return self._moves[r][f]
        return None

    def moves(self) -> list[Move]:
        piles = self.game.piles
        index = self._index
        builds: list[Move] = []
        starts: list[Move] = []
        deal: list[Move] = []
        seen: set[tuple[str, int]] = set()
        for move in self.game.generate():
            if move.is_deal:
                deal.append(move)
                continue
            dst = piles[index[move.dst]]
            if not dst:
                starts.append(move)
                continue
            # Two foundations with the same top card and size are the same place.
            twin = (move.src, len(dst))
            if twin not in seen:
                seen.add(twin)
                builds.append(move)
        # Starting a foundation is the lasting choice; dealing first shows more
        # cards before making it. Greedy starting wins most deals at once, though.
        return builds + deal + starts if self._deal_first else builds + starts + deal

    def child_key(self, move: Move) -> Hashable | None:
        return None

    def play(self, move: Move) -> None:
        self.game.push(move)

    def undo(self) -> None:
        self.game.pop()

    def name(self, move: Move) -> str:
        return str(move)
