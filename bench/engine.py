"""Engine speed: legal-move listings and applied moves per second, against a naive engine.

    python bench/engine.py [--games N] [--max-moves M] [--seed S]

Random games of each kind are recorded first, then replayed position by position:
``legal_moves()`` is timed at every position, and ``apply(move)`` + ``undo()`` for
every move (a Moojub deal, which cannot be undone, is applied untimed). The baseline
is a straightforward engine written here from RULES.md: it tries every source,
destination and group size, and copies the whole state before every move so that
undo can restore it. Both engines must list the very same moves at every position;
the script exits 1 if they ever disagree, so it doubles as a differential test.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import core

__all__ = ["NaiveGame", "main", "record_games"]

RANKS = "A23456789TJQK"


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def red(card: str) -> bool:
    return card[1] in "DH"


@dataclass
class NaiveGame:
    """A direct reading of RULES.md over the ``state()`` dict; copies it on every move."""

    name: str
    piles: dict[str, list[str]]
    talon: list[str] = field(default_factory=list)
    step: int | None = None
    saved: list[tuple[Any, ...]] = field(default_factory=list)

    @classmethod
    def start(cls, name: str, seed: int) -> NaiveGame:
        state = core.new_game(name, seed).state()
        return cls(name, state["piles"], state.get("talon", []), state.get("step"))

    def legal_moves(self) -> list[str]:
        out = []
        for src in self.piles:
            for dst in self.piles:
                for n in range(1, len(self.piles[src]) + 1):
                    if self.ok(src, dst, n):
                        out.append(f"{src} {dst}" if n == 1 else f"{src} {dst} {n}")
        if self.name == "moojub" and self.talon:
            out.append("deal")
        return out

    def ok(self, src: str, dst: str, n: int) -> bool:
        if src == dst or src[0] == "f":
            return False
        if self.name == "shaula":
            return self.ok_shaula(src, dst, n)
        if self.name == "stalactites":
            return self.ok_stalactites(src, dst, n)
        return self.ok_moojub(src, dst, n)

    def ok_shaula(self, src: str, dst: str, n: int) -> bool:
        pile = self.piles[src]
        if n > 1:
            if src[0] != "t" or dst[0] != "t":
                return False
            group = pile[-n:]
            for above, below in zip(group[1:], group[:-1], strict=True):
                if rank(below) != rank(above) + 1:
                    return False
                if int(src[1:]) <= 4 and below[1] != above[1]:
                    return False
                if int(src[1:]) > 4 and red(below) == red(above):
                    return False
        head = pile[-n]
        target = self.piles[dst]
        if dst[0] == "f":
            if not target:
                return rank(head) == 1
            return head[1] == target[-1][1] and rank(head) == rank(target[-1]) + 1
        if dst[0] == "c":
            return not target
        forty_thieves = int(dst[1:]) <= 4
        if not target:
            return rank(head) == 13 if forty_thieves else True
        top = target[-1]
        if rank(head) != rank(top) - 1:
            return False
        return head[1] == top[1] if forty_thieves else red(head) != red(top)

    def ok_stalactites(self, src: str, dst: str, n: int) -> bool:
        if n > 1 or dst[0] == "t":
            return False
        target = self.piles[dst]
        if dst[0] == "c":
            return not target
        if len(target) >= 13:
            return False
        diff = (rank(self.piles[src][-1]) - rank(target[-1])) % 13
        return diff in (1, 2) if self.step is None else diff == self.step

    def builds(self, card: str, target: list[str]) -> bool:
        return (
            0 < len(target) < 13
            and target[-1][1] == card[1]
            and rank(target[-1]) % 13 + 1 == rank(card)
        )

    def ok_moojub(self, src: str, dst: str, n: int) -> bool:
        if n > 1 or src[0] != "r" or dst[0] != "f":
            return False
        card = self.piles[src][-1]
        target = self.piles[dst]
        if target:
            return self.builds(card, target)
        k = int(dst[1:])
        if k > 1 and not self.piles[f"f{k - 1}"]:
            return False
        if k > 4 and self.piles[f"f{k - 4}"][0][1] != card[1]:
            return False
        if k <= 4 and any(
            self.piles[f"f{i}"][:1] and self.piles[f"f{i}"][0][1] == card[1] for i in range(1, 5)
        ):
            return False
        for r in ("r1", "r2", "r3", "r4"):
            top = self.piles[r][-1:]
            if top and top[0][1] == card[1] and rank(top[0]) < rank(card):
                return False
        return not any(self.builds(card, self.piles[f"f{i}"]) for i in range(1, 33))

    def apply(self, move: str) -> None:
        self.saved.append(copy.deepcopy((self.piles, self.talon, self.step)))
        if move == "deal":
            for r in ("r1", "r2", "r3", "r4"):
                if self.talon:
                    self.piles[r].append(self.talon.pop(0))
            return
        src, dst, *count = move.split()
        n = int(count[0]) if count else 1
        cards = self.piles[src][-n:]
        del self.piles[src][-n:]
        target = self.piles[dst]
        if self.name == "stalactites" and dst[0] == "f" and self.step is None:
            self.step = (rank(cards[0]) - rank(target[-1])) % 13
        target.extend(cards)

    def undo(self) -> None:
        self.piles, self.talon, self.step = self.saved.pop()


def record_games(name: str, games: int, max_moves: int, seed: int) -> list[tuple[int, list[str]]]:
    """Random games: (deal seed, moves played), the same for every run with the same seed."""
    rng = random.Random(seed)
    recorded = []
    for _ in range(games):
        deal = rng.randrange(1, core.MAX_SEED)
        game = core.new_game(name, deal)
        for _ in range(max_moves):
            moves = game.legal_moves()
            if not moves:
                break
            game.apply(rng.choice(moves))
        recorded.append((deal, list(game.history)))
    return recorded


@dataclass
class Figures:
    positions: int = 0
    legal_time: float = 0.0
    applied: int = 0
    apply_time: float = 0.0
    mismatches: int = 0


def time_engine(name: str, recorded: list[tuple[int, list[str]]]) -> tuple[Figures, float]:
    """The engine's figures, and its fast path (push + pop) in pairs per second."""
    fig = Figures()
    clock = time.perf_counter
    fast_pairs = 0
    fast_time = 0.0
    for deal, moves in recorded:
        game = core.new_game(name, deal)
        for move in moves:
            t = clock()
            game.legal_moves()
            fig.legal_time += clock() - t
            fig.positions += 1
            if move != "deal":
                t = clock()
                game.apply(move)
                game.undo()
                fig.apply_time += clock() - t
                fig.applied += 1
                m = core.Move.parse(move)
                t = clock()
                game.push(m)
                game.pop()
                fast_time += clock() - t
                fast_pairs += 1
            game.apply(move)
    return fig, fast_pairs / fast_time if fast_time else 0.0


def time_naive(name: str, recorded: list[tuple[int, list[str]]]) -> Figures:
    fig = Figures()
    clock = time.perf_counter
    for deal, moves in recorded:
        game = NaiveGame.start(name, deal)
        engine = core.new_game(name, deal)
        for move in moves:
            t = clock()
            listed = game.legal_moves()
            fig.legal_time += clock() - t
            fig.positions += 1
            if listed != engine.legal_moves():
                fig.mismatches += 1
            if move != "deal":
                t = clock()
                game.apply(move)
                game.undo()
                fig.apply_time += clock() - t
                fig.applied += 1
            game.apply(move)
            engine.apply(move)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=40, help="random games per kind")
    parser.add_argument("--max-moves", type=int, default=150, help="moves per game at most")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random play")
    args = parser.parse_args(argv)
    head = (
        f"{'game':<12} {'positions':>9} {'legal/s':>9} {'naive':>8} {'ratio':>6}"
        f" {'apply+undo/s':>12} {'naive':>8} {'ratio':>6} {'push+pop/s':>11}"
    )
    print(head)
    print("-" * len(head))
    bad = 0
    for name in core.GAMES:
        recorded = record_games(name, args.games, args.max_moves, args.seed)
        eng, fast = time_engine(name, recorded)
        naive = time_naive(name, recorded)
        bad += naive.mismatches
        legal = eng.positions / eng.legal_time
        naive_legal = naive.positions / naive.legal_time
        applied = eng.applied / eng.apply_time if eng.apply_time else 0.0
        naive_applied = naive.applied / naive.apply_time if naive.apply_time else 0.0
        print(
            f"{name:<12} {eng.positions:>9} {legal:>9,.0f} {naive_legal:>8,.0f}"
            f" {legal / naive_legal:>5.1f}x {applied:>12,.0f} {naive_applied:>8,.0f}"
            f" {applied / naive_applied if naive_applied else 0:>5.1f}x {fast:>11,.0f}"
        )
    if bad:
        print(f"MISMATCH: the naive engine listed other moves at {bad} positions", file=sys.stderr)
        return 1
    print("the naive engine listed the same moves at every position")
    return 0


if __name__ == "__main__":
    sys.exit(main())
