"""A solver for the three games: a winning line, a proof of "unwinnable", or "unknown".

Pure Python, no I/O and no clock of its own: pass ``clock`` (e.g.
``time.monotonic``) with ``time_limit`` for a time budget::

    from core.solver import solve, hint, winnable_seed
    result = solve(game, budget=200_000)         # Solution(result="won", moves=[...], ...)
    hint(game)                                   # "t3 c1", or None when no move is left
    winnable_seed("stalactites", random.Random())

How it searches (see `search` and the per-game modules): depth first from
the game's current position, with a transposition table on a canonical key
(interchangeable cells and piles sorted, foundations keyed by what they take),
safe moves played without branching, moves that cannot help left out, and the
rest ordered most promising first. Each pruning rule has its soundness
argument beside it: "unwinnable" is a proof that no line wins. Every winning
line is replayed through the engine (`Game.apply`) before it is returned.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import core
from core.deals import MAX_SEED
from core.game import Game
from core.solver.moojub import MoojubProblem
from core.solver.search import Outcome, Problem, Verdict, depth_first
from core.solver.shaula import ShaulaProblem
from core.solver.stalactites import StalactitesProblem

__all__ = [
    "DEFAULT_BUDGET",
    "HINT_BUDGET",
    "Solution",
    "SolverError",
    "Verdict",
    "hint",
    "solve",
    "winnable_seed",
]

# Positions a plain solve() may expand: enough to decide nearly every deal.
DEFAULT_BUDGET = 2_000_000
# A hint must come back while the player waits.
HINT_BUDGET = 20_000
# Positions for the first turn of each move order (see `_orders`).
FIRST_TURN = 300


class SolverError(RuntimeError):
    """A winning line that the engine refused on replay: a solver bug, never returned."""


@dataclass(frozen=True)
class Solution:
    """What `solve` found: ``result`` is "won" (``moves`` wins), "unwinnable" or "unknown"."""

    result: Verdict
    moves: list[str] = field(default_factory=list)
    positions: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "moves": list(self.moves),
            "positions": self.positions,
            "seconds": round(self.seconds, 6),
        }


def _orders(game: Game) -> tuple[list[Problem[Any]], bool, list[int]]:
    """The game as search problems that differ only in move order, whether
    its moves can never lead back to an earlier position (see `depth_first`),
    and the part of the game each problem searches (one part but for
    Stalactites before its step is fixed, split by step: see
    `StalactitesProblem`). The game is lost only when every part is.

    Where one order gets lost in a deal another often wins at once (Moojub:
    starting foundations before dealing or after; Stalactites: trying builds
    by ones or by twos first; Shaula: two weightings of what a move uncovers),
    so `solve` takes turns between them. Without sharing proofs (Shaula can
    go back to a position), a turn repeats some work; turns grow fourfold, so
    that is a bounded fraction.
    """
    if game.name == "shaula":
        state = game.state("full")
        return [ShaulaProblem(state), ShaulaProblem(state, wait=2, park=8)], False, [0, 0]
    if game.name == "stalactites":
        state = game.state("full")
        split = not state.get("step")
        orders: list[Problem[Any]] = [
            StalactitesProblem(
                state, prefer=step, builds_first=first, steps=(step,) if split else (1, 2)
            )
            for first in (False, True)
            for step in (1, 2)
        ]
        return orders, True, [1, 2, 1, 2] if split else [0, 0, 0, 0]
    if game.name == "moojub":
        return [MoojubProblem(game, deal_first=False), MoojubProblem(game)], True, [0, 0]
    raise ValueError(f"no solver for {game.name!r}")


def _named(problem: Problem[Any], line: list[Any]) -> list[str]:
    """The line in engine text; each name depends on the position it is played in."""
    names = []
    for move in line:
        names.append(problem.name(move))
        problem.play(move)
    for _ in line:
        problem.undo()
    return names


def _check(game: Game, moves: list[str]) -> None:
    """Replay a winning line through the engine's checked path, on a copy."""
    replay = game.copy()
    for i, move in enumerate(moves):
        try:
            replay.apply(move)
        except ValueError as exc:
            raise SolverError(f"move {i + 1} ({move}) of the line was refused: {exc}") from exc
    if not replay.won:
        raise SolverError(f"the line of {len(moves)} moves does not win")


def _shorten(game: Game, moves: list[str]) -> list[str]:
    """Cut detours out of a winning line: from each position on it, take the
    move that lands furthest ahead on the same line (exact positions only)."""
    replay = game.copy()
    ahead = {replay.key(): 0}
    for i, move in enumerate(moves, 1):
        replay.apply(move)
        ahead[replay.key()] = i
    here = game.copy()
    short: list[str] = []
    i = 0
    while i < len(moves):
        best, landing = moves[i], i + 1
        for option in here.generate():
            here.push(option)
            j = ahead.get(here.key(), -1)
            here.pop()
            if j > landing:
                best, landing = str(option), j
        here.apply(best)
        short.append(best)
        i = landing
    return short


def solve(
    game: Game,
    *,
    budget: int | None = DEFAULT_BUDGET,
    clock: Callable[[], float] | None = None,
    time_limit: float | None = None,
    shorten: bool = False,
    avoid: frozenset[Hashable] = frozenset(),
) -> Solution:
    """Solve ``game`` from its current position; the game itself is not changed.

    ``budget`` caps the positions expanded (None: no cap); ``time_limit`` is in
    the units of ``clock`` and needs one. Either running out gives "unknown".
    ``shorten`` cuts detours out of a winning line (it is not made minimal;
    it costs some tens of milliseconds in Shaula). ``avoid`` holds the search's keys
    of positions the line must not pass through (`_been`).
    """
    start = clock() if clock is not None else 0.0
    deadline = start + time_limit if clock is not None and time_limit is not None else None
    orders, acyclic, parts = _orders(game)
    # Positions proved lost, shared by the turns of one part: no turn searches
    # them again. Parts keep their own (a position lost in one part, before
    # the step is fixed, need not be lost in the whole game).
    lost: dict[int, set[Hashable]] = {part: set() for part in parts}
    active = list(range(len(orders)))
    positions = 0
    verdict: Verdict = "unknown"
    moves: list[str] = []
    for turn in itertools.count():
        left = None if budget is None else budget - positions
        if left is not None and left <= 0:
            break
        if len(orders) > 1:
            # Turns grow fourfold each round: little is searched twice.
            cap = FIRST_TURN * 4 ** (turn // len(orders))
            left = cap if left is None else min(cap, left)
        index = turn % len(orders)
        if index not in active:
            continue
        problem, part = orders[index], parts[index]
        outcome: Outcome[Any] = depth_first(
            problem,
            budget=left,
            clock=clock,
            deadline=deadline,
            lost=lost[part] if acyclic else None,
            avoid=avoid,
        )
        positions += outcome.positions
        if outcome.verdict == "won":
            moves = _named(problem, outcome.line)
            if shorten:
                moves = _shorten(game, moves)
            _check(game, moves)
            verdict = "won"
            break
        if outcome.verdict == "unwinnable":
            active = [i for i in active if parts[i] != part]
            if not active:
                verdict = "unwinnable"
                break
        if len(orders) == 1 or (clock is not None and deadline is not None and clock() >= deadline):
            break
    seconds = clock() - start if clock is not None else 0.0
    return Solution(verdict, moves, positions, seconds)


def hint(
    game: Game,
    *,
    budget: int = HINT_BUDGET,
    clock: Callable[[], float] | None = None,
    time_limit: float | None = None,
    peek: bool = False,
) -> str | None:
    """The next move of a winning line, else the solver's favourite move; None if none.

    Only a move comes back, never a card. In Moojub the talon's order is
    secret, and a hint computed from it would tell the player about it (when
    to deal, which start pays off). So unless ``peek`` is set, a Moojub hint
    sees only what the player sees: it solves a few talon orders drawn from
    the unseen cards (with a generator seeded by the visible position alone)
    and suggests the first move that wins most of them. Two positions that
    differ only in the talon's order get the same hint.
    """
    if game.won:
        return None
    if game.has_talon and not peek:
        return _blind_hint(game, budget, clock, time_limit)
    been = _been(game)
    found = solve(game, budget=budget, clock=clock, time_limit=time_limit, avoid=been)
    if not found.moves and been and found.result == "unwinnable":
        # Every win goes back through a position the player left: one of those, then.
        found = solve(game, budget=budget, clock=clock, time_limit=time_limit)
    if found.moves:
        return found.moves[0]
    return _favourite(game)


def _been(game: Game) -> frozenset[Hashable]:
    """The search's keys of the positions `game` was in before this one, for a hint to
    avoid. In Shaula a move can be taken back by another, so a line found afresh after
    a hint may begin by taking it back: followed hint by hint, the hints went back and
    forth for ever. (Stalactites and Moojub never come back to a position.)"""
    if game.name != "shaula":
        return frozenset()
    back = game.copy()
    now = ShaulaProblem(back.state("full")).key()
    keys = set()
    for _ in range(len(back.history)):
        back.pop()
        keys.add(ShaulaProblem(back.state("full")).key())
    keys.discard(now)
    return frozenset(keys)


def _favourite(game: Game) -> str | None:
    """The solver's first choice without a search (only the visible position counts:
    Moojub's forced builds and order look at which cards are unseen, not their order)."""
    problem = _orders(game)[0][0]
    forced = problem.forced()
    if forced is not None:
        return problem.name(forced)
    moves = problem.moves()
    if moves:
        return problem.name(moves[0])
    legal = game.legal_moves()
    return legal[0] if legal else None


# Talon orders a blind hint solves.
BLIND_SAMPLES = 5


def _blind_hint(
    game: Game,
    budget: int,
    clock: Callable[[], float] | None,
    time_limit: float | None,
) -> str | None:
    state = game.state("full")
    unseen = sorted(state["talon"])
    # Seeded by what the player sees, so the true order cannot leak in.
    visible = json.dumps([state["piles"], unseen], sort_keys=True)
    rng = random.Random(visible)
    votes: Counter[str] = Counter()
    share = None if time_limit is None else time_limit / BLIND_SAMPLES
    for _ in range(BLIND_SAMPLES):
        order = list(unseen)
        rng.shuffle(order)
        sample = core.from_state({**state, "talon": order})
        found = solve(sample, budget=budget // BLIND_SAMPLES, clock=clock, time_limit=share)
        if found.moves:
            votes[found.moves[0]] += 1
    if not votes:
        return _favourite(game)
    best = max(votes.values())
    ranked = [move for move in game.legal_moves() if votes[move] == best]
    return ranked[0] if ranked else votes.most_common(1)[0][0]


def winnable_seed(
    name: str,
    rng: random.Random,
    *,
    budget: int = 200_000,
    tries: int = 100,
    seeds: tuple[int, int] = (1, MAX_SEED),
    clock: Callable[[], float] | None = None,
    time_limit: float | None = None,
) -> int:
    """Draw seeds from ``seeds`` (inclusive) with ``rng`` until one is proved winnable.

    ``budget`` and ``time_limit`` apply to each draw. RuntimeError if none of
    ``tries`` draws is proved winnable.
    """
    for _ in range(tries):
        seed = rng.randint(*seeds)
        game = core.new_game(name, seed)
        if solve(game, budget=budget, clock=clock, time_limit=time_limit).result == "won":
            return seed
    raise RuntimeError(f"no winnable {name} deal found in {tries} draws")
