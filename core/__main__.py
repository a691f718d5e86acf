"""The engine's command line: ``python -m core deal GAME SEED``, ``legal GAME SEED [MOVE ...]``,
``solve`` and ``replay FILE``.

Each subcommand is a small ``add_*`` function that registers its parser and sets
``run``: a function taking the parsed arguments, printing its result and returning
the exit status. Bad input prints ``error: ...`` and exits 1, with no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import core
from core.replay import verify
from core.solver.cli import add_solve

__all__ = [
    "add_deal",
    "add_legal",
    "add_replay",
    "build_parser",
    "format_state",
    "main",
    "parse_seed",
]


def parse_seed(text: str) -> int:
    """A command-line seed: a whole number from 1 to 2**63-1 (ValueError otherwise)."""
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(
            f"seed must be a whole number from 1 to {core.MAX_SEED}, got {text!r}"
        ) from None
    return core.check_seed(seed)


def format_state(state: dict[str, Any]) -> str:
    """JSON with one pile per line: readable by people, parsed by any JSON reader."""
    lines = ["{"]
    items = list(state.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, dict):
            lines.append(f"  {json.dumps(key)}: {{")
            inner = list(value.items())
            for j, (k, v) in enumerate(inner):
                c = "," if j < len(inner) - 1 else ""
                lines.append(f"    {json.dumps(k)}: {json.dumps(v)}{c}")
            lines.append(f"  }}{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines)


def _game_and_seed(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("game", help=f"one of {', '.join(core.GAMES)}")
    sub.add_argument("seed", help="the deal number, 1 to 2**63-1 (PySolFC's game number)")


def _run_deal(args: argparse.Namespace) -> int:
    game = core.new_game(args.game, parse_seed(args.seed))
    print(format_state(game.state()))
    return 0


def add_deal(subparsers: Any) -> None:
    sub = subparsers.add_parser("deal", help="print the starting state of a deal as JSON")
    _game_and_seed(sub)
    sub.set_defaults(run=_run_deal)


def _run_legal(args: argparse.Namespace) -> int:
    game = core.new_game(args.game, parse_seed(args.seed))
    for i, move in enumerate(args.moves, 1):
        try:
            game.apply(move)
        except core.IllegalMove as exc:
            raise ValueError(f"move {i} ({move!r}): {exc}") from None
    for move in game.legal_moves():
        print(move)
    return 0


def add_legal(subparsers: Any) -> None:
    sub = subparsers.add_parser(
        "legal", help="apply moves to a deal, then print the legal moves, one a line"
    )
    _game_and_seed(sub)
    sub.add_argument("moves", nargs="*", metavar="MOVE", help="a move each, quoted: 't5 t2 3'")
    sub.set_defaults(run=_run_legal)


def _run_replay(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ValueError(f"cannot read {args.file}: {exc.strerror}") from None
    checked = verify(text)
    head = checked.header
    print(f"{head['game']} #{head['seed']}: {len(checked.moves)} moves, every one legal")
    columns = ("time", "progress", "reached", "moves")
    print(f"{'seat':>4}  {'name':<20} {'won':<5} " + " ".join(f"{c:>8}" for c in columns))
    for r in checked.results:
        time = "" if r["time"] is None else f"{r['time']:.3f}"
        won = "yes" if r["won"] else "no"
        print(
            f"{r['seat']:>4}  {r['name'][:20]:<20} {won:<5} {time:>8} "
            f"{r['progress']:>8} {r['reached']:>8.3f} {r['moves']:>8}"
        )
    return 0


def add_replay(subparsers: Any) -> None:
    sub = subparsers.add_parser(
        "replay", help="check a replay (NDJSON) with the engine and print its results"
    )
    sub.add_argument("file", help="a replay file, as served at /rooms/ROOM/replay")
    sub.set_defaults(run=_run_replay)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="solrace's rules engine")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_deal(subparsers)
    add_legal(subparsers)
    add_solve(subparsers)
    add_replay(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
        sys.stdout.flush()
    except ValueError as exc:  # IllegalMove is a ValueError too
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader stopped early (`| head`): nothing more to say. Standard output goes
        # to /dev/null so that Python's own flush at exit fails no more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
