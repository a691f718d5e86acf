"""core against the naive engine of bench/engine.py, a direct reading of RULES.md:
both must list the same moves, in the same order, at every position of random games."""

from __future__ import annotations

import importlib.util
import pathlib
import random
import sys
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

import core

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_engine", ROOT / "bench" / "engine.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_engine"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


BENCH = load_bench()


@settings(max_examples=150)
@given(st.sampled_from(core.GAMES), st.integers(1, 2**63 - 1), st.integers(0, 2**32))
def test_core_lists_what_a_direct_reading_of_the_rules_lists(
    name: str, seed: int, rnd: int
) -> None:
    rng = random.Random(rnd)
    game = core.new_game(name, seed)
    naive = BENCH.NaiveGame.start(name, seed)
    for _ in range(100):
        moves = game.legal_moves()
        assert moves == naive.legal_moves()
        if not moves:
            break
        # Prefer foundation moves now and then, to reach fuller foundations.
        to_found = [m for m in moves if " f" in m]
        move = rng.choice(to_found if to_found and rng.random() < 0.6 else moves)
        game.apply(move)
        naive.apply(move)
    assert game.state()["piles"] == naive.piles
