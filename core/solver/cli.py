"""``python -m core solve GAME SEED [--budget N] [--time-limit S] [--shorten] [--json]``.

Registered by ``core.__main__`` like the engine's own subcommands. The clock
lives here, at the edge: the search itself only gets ``time.monotonic`` passed in.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import core
from core.solver import DEFAULT_BUDGET, Solution, solve

__all__ = ["add_solve", "format_solution"]


def format_solution(found: Solution) -> str:
    """The verdict on one line, then the winning line, one move a line."""
    head = f"{found.result}: {found.positions} positions, {found.seconds:.3f} s"
    if found.result == "won":
        head = (
            f"won in {len(found.moves)} moves: {found.positions} positions, {found.seconds:.3f} s"
        )
    return "\n".join([head, *found.moves])


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a whole number from 1")
    return value


def _seed(text: str) -> int:
    try:
        return core.check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number from 1 to {core.MAX_SEED}") from None


def _run_solve(args: argparse.Namespace) -> int:
    game = core.new_game(args.game, args.seed)
    found = solve(
        game,
        budget=args.budget,
        clock=time.monotonic,
        time_limit=args.time_limit,
        shorten=args.shorten,
    )
    print(json.dumps(found.to_json()) if args.json else format_solution(found))
    return 0


def add_solve(subparsers: Any) -> None:
    sub = subparsers.add_parser(
        "solve", help="solve a deal: a winning line, unwinnable, or unknown when the budget ends"
    )
    sub.add_argument("game", help=f"one of {', '.join(core.GAMES)}")
    sub.add_argument(
        "seed", type=_seed, help="the deal number, 1 to 2**63-1 (PySolFC's game number)"
    )
    sub.add_argument(
        "--budget",
        type=_positive,
        default=DEFAULT_BUDGET,
        help=f"most positions to expand (default {DEFAULT_BUDGET})",
    )
    sub.add_argument("--time-limit", type=float, default=None, help="seconds to search at most")
    sub.add_argument("--shorten", action="store_true", help="cut detours out of a winning line")
    sub.add_argument("--json", action="store_true", help="print one JSON object")
    sub.set_defaults(run=_run_solve)
