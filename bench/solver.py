"""Classify a range of deals with the solver and print a table.

    python bench/solver.py stalactites --seeds 1..1000 [--time-limit 10] [--budget N]

Each deal gets at most ``--time-limit`` seconds (and ``--budget`` positions);
what is neither won nor proved unwinnable by then is "unknown". The table gives
the counts, the median and 95th percentile of time and positions per deal, and
positions per second. The baseline, measured in the same run on the same deals,
is the engine's bare fast path (generate, push, pop on a random walk): the
solver's positions per second divided by it shows what the search's own
bookkeeping (keys, ordering, forced moves) costs per position.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass

import core
from core.solver import solve

__all__ = ["main"]


@dataclass(frozen=True)
class Row:
    seed: int
    result: str
    positions: int
    seconds: float


def seed_range(text: str) -> range:
    first, _, last = text.partition("..")
    return range(int(first), int(last or first) + 1)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def progress(done: int, total: int, counts: dict[str, int], started: float) -> None:
    width = 30
    filled = width * done // total
    tally = " ".join(f"{k} {v}" for k, v in counts.items())
    bar = "#" * filled + "." * (width - filled)
    elapsed = time.monotonic() - started
    sys.stderr.write(f"\r[{bar}] {done}/{total}  {tally}  {elapsed:.0f} s ")
    sys.stderr.flush()


def bare_positions_per_second(name: str, seeds: range, steps: int = 2000) -> float:
    """The engine alone: list moves, play one at random, sometimes take one back."""
    rng = random.Random(0)
    total = 0
    start = time.perf_counter()
    for seed in seeds[:50]:
        game = core.new_game(name, seed)
        for _ in range(steps):
            moves = game.generate()
            total += 1
            if moves and (rng.random() < 0.7 or not game.history):
                game.push(rng.choice(moves))
            elif game.history:
                game.pop()
    return total / (time.perf_counter() - start)


def run(name: str, seeds: range, time_limit: float, budget: int | None) -> list[Row]:
    rows = []
    counts = {"won": 0, "unwinnable": 0, "unknown": 0}
    started = time.monotonic()
    for i, seed in enumerate(seeds):
        found = solve(
            core.new_game(name, seed), budget=budget, clock=time.monotonic, time_limit=time_limit
        )
        rows.append(Row(seed, found.result, found.positions, found.seconds))
        counts[found.result] += 1
        progress(i + 1, len(seeds), counts, started)
    sys.stderr.write("\n")
    return rows


def table(name: str, seeds: range, rows: list[Row], bare: float) -> str:
    times = [r.seconds for r in rows]
    positions = [float(r.positions) for r in rows]
    rate = sum(positions) / sum(times) if sum(times) else 0.0
    count = {k: sum(r.result == k for r in rows) for k in ("won", "unwinnable", "unknown")}
    lines = [
        "| game | deals | won | unwinnable | unknown | median time | p95 time | max time"
        " | median positions | p95 positions | positions/s | bare engine positions/s | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {name} | {seeds.start}..{seeds.stop - 1} | {count['won']} | {count['unwinnable']}"
        f" | {count['unknown']} | {statistics.median(times) * 1000:.1f} ms"
        f" | {percentile(times, 0.95) * 1000:.1f} ms | {max(times):.2f} s"
        f" | {statistics.median(positions):.0f} | {percentile(positions, 0.95):.0f}"
        f" | {rate:,.0f} | {bare:,.0f} | {rate / bare:.2f} |",
    ]
    for verdict in ("unwinnable", "unknown"):
        seeds_of = [r.seed for r in rows if r.result == verdict]
        if seeds_of:
            lines.append(f"\n{verdict}: {', '.join(map(str, seeds_of))}")
    slowest = sorted(rows, key=lambda r: -r.seconds)[:5]
    lines.append(
        "\nslowest: "
        + ", ".join(f"{r.seed} ({r.result}, {r.seconds:.2f} s, {r.positions})" for r in slowest)
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", choices=core.GAMES)
    parser.add_argument("--seeds", type=seed_range, default=seed_range("1..100"))
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per deal")
    parser.add_argument("--budget", type=int, default=None, help="positions per deal")
    args = parser.parse_args(argv)
    bare = bare_positions_per_second(args.game, args.seeds)
    rows = run(args.game, args.seeds, args.time_limit, args.budget)
    print(table(args.game, args.seeds, rows, bare))
    return 0


if __name__ == "__main__":
    sys.exit(main())
