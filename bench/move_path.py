"""The Python work of one move, step by step, without any I/O.

    python -m bench.move_path [--game shaula] [--moves 500] [--rounds 5]

The server's own code on the path of an accepted move, called as the server calls it
(server/handlers/moves.py, server/storage/store.py, server/live/hub.py), on a legal random
walk (bench/racers.py): decoding the client's frame, the engine (apply, progress, stuck)
with the event it makes (`progress_event`), the store's write, encoding the move script's
call (server/storage/codec.py's `move_call`, server/redis_io/resp_encode.py), taking the
published event back in and framing it for the mover and the opponents
(server/room/view.py, server/live/frames.py), and framing the mover's answer. The
baseline, timed in the same run, is what any server of this protocol does with the same
maps: unpack the client's frame and pack the answer and the event once each (msgpack). It
prints µs per move for each step (the fastest of `--rounds` rounds: the machine's noise
only adds) and the ratio to the baseline.

What it leaves out, on purpose: sockets, the event loop, Redis. At an everyday rate the
server process spends several times this per move (`python -m bench.server`): the rest is
the I/O machinery (docs/performance.md, "What limits the design").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import msgpack

import protocol as p
from bench.racers import move_sequences
from core import new_game
from core.build import PURE_ENV, compiled, describe
from server.handlers.moves import progress_event
from server.live.frames import Outgoing
from server.redis_io.resp_encode import encode_fcall
from server.room.view import Viewer, view_event
from server.storage.codec import MoveWrite, answer_to, entry_body, move_call, parse_entry_wire
from server.storage.store import MOVE

__all__ = ["main", "measure"]

STEPS = ("decode", "engine and event", "write", "encode", "fan-out", "answer")


def measure(game: str, moves: list[str], seed: int) -> tuple[dict[str, float], float]:
    """Seconds per step over `moves` (one walk), and the baseline's seconds."""
    board = new_game(game, seed)
    spent = dict.fromkeys(STEPS, 0.0)
    baseline = 0.0
    clock: Callable[[], float] = time.perf_counter
    for seq, text in enumerate(moves, 1):
        data = p.pack_map({"type": "move", "v": 1, "seq": seq, "move": text})
        t0 = clock()
        msg = p.decode_msgpack(data)
        assert isinstance(msg, p.Move)
        t1 = clock()
        expected = board.moves
        board.apply(msg.move)
        played = board.history[-1]
        now = time.time()
        event = progress_event(board, 3, played, now)
        t2 = clock()
        write = MoveWrite("bench", 1, 3, seq, expected, played, now, event, None, "h" * 64)
        t3 = clock()
        encode_fcall(MOVE.function, *move_call(write, 512, 86_400.0))
        t4 = clock()
        entry = b"%d|%b" % (seq, entry_body(event))  # what Redis publishes: not timed
        t4b = clock()
        parsed = parse_entry_wire(entry)
        assert parsed is not None
        published, wire = parsed
        Outgoing(published, view_event(wire, Viewer.MOVER)).frame(True)
        Outgoing(published, view_event(wire, Viewer.OPPONENT)).frame(True)
        t5 = clock()
        answer = answer_to(seq, event, seq)
        assert answer is not None
        Outgoing(answer).frame(True)
        t6 = clock()
        starts = (t0, t1, t2, t3, t4b, t5)
        ends = (t1, t2, t3, t4, t5, t6)
        for step, start, end in zip(STEPS, starts, ends, strict=True):
            spent[step] += end - start
        b0 = clock()
        msgpack.unpackb(data)
        p.pack_map(p.to_wire(answer))
        p.pack_map(wire)
        baseline += clock() - b0
    return spent, baseline


GOAL_US = 20.0  # the compiled build's goal for the whole move path


def best_per_move(game: str, moves: int, rounds: int) -> tuple[dict[str, float], float]:
    """µs per move for each step and for the baseline: the fastest of `rounds` rounds."""
    seed, walk = next(iter(move_sequences(game, 1, moves).items()))
    best: dict[str, float] = {}
    base = float("inf")
    for _ in range(rounds):
        spent, baseline = measure(game, walk, seed)
        for step, seconds in spent.items():
            best[step] = min(best.get(step, float("inf")), seconds)
        base = min(base, baseline)
    return {s: v / len(walk) * 1e6 for s, v in best.items()}, base / len(walk) * 1e6


def _child(game: str, moves: int, pure: bool) -> tuple[dict[str, float], float]:
    """One round in a fresh interpreter on the pure-Python or the compiled build."""
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    argv = [sys.executable, "-m", "bench.move_path", "--game", game, "--moves", str(moves)]
    out = subprocess.run(
        [*argv, "--rounds", "1", "--json"], env=env, check=True, capture_output=True, text=True
    ).stdout
    data = json.loads(out)
    if data["compiled"] == pure:
        raise SystemExit("the compiled build is not there: run `make compiled` first")
    return data["steps"], data["baseline"]


def compare(game: str, moves: int, rounds: int) -> None:
    """Both builds, alternated round by round in fresh interpreters, fastest round each."""
    best: dict[bool, dict[str, float]] = {True: {}, False: {}}
    base: dict[bool, float] = {True: float("inf"), False: float("inf")}
    for _ in range(rounds):
        for pure in (True, False):
            steps, baseline = _child(game, moves, pure)
            for step, us in steps.items():
                best[pure][step] = min(best[pure].get(step, float("inf")), us)
            base[pure] = min(base[pure], baseline)
    print("| step | pure Python µs | compiled µs | compiled / pure |")
    print("|---|---:|---:|---:|")
    for step in STEPS:
        a, b = best[True][step], best[False][step]
        print(f"| {step} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
    total = {pure: sum(best[pure].values()) for pure in (True, False)}
    print(
        f"| **the move path** | **{total[True]:.1f}** | **{total[False]:.1f}** | "
        f"**{total[False] / total[True]:.2f}** |"
    )
    print(f"| baseline: bare msgpack of the same maps | {base[True]:.1f} | {base[False]:.1f} | |")
    met = "met" if total[False] <= GOAL_US else "NOT met"
    print(
        f"\nperf_verdict move_path: compiled {total[False]:.1f} µs per move against pure "
        f"{total[True]:.1f} ({total[False] / total[True]:.2f}x; goal <= {GOAL_US:g} µs): {met}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.move_path", description=__doc__)
    parser.add_argument("--game", default="shaula")
    parser.add_argument("--moves", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--builds", action="store_true", help="the pure-Python and the compiled build, alternated"
    )
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.builds:
        compare(args.game, args.moves, args.rounds)
        return
    per_move, base_us = best_per_move(args.game, args.moves, args.rounds)
    if args.json:
        print(json.dumps({"steps": per_move, "baseline": base_us, "compiled": compiled()}))
        return
    total = sum(per_move.values())
    print(describe())
    print("| step | µs per move |")
    print("|---|---:|")
    for step, us in per_move.items():
        print(f"| {step} | {us:.1f} |")
    print(f"| **all of the server's Python on the move path** | **{total:.1f}** |")
    print(f"| baseline: unpack the frame, pack the answer and the event | {base_us:.1f} |")
    print(
        f"\n{args.game}, {args.moves} moves: the move path's Python costs {total:.1f} µs per "
        f"move, {total / base_us:.1f}x the bare serialisation of the same maps ({base_us:.1f} µs)"
    )


if __name__ == "__main__":
    main()
