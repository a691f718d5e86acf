"""bench/engine.py runs, and its naive engine agrees with core move for move."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_bench_runs_and_the_naive_engine_agrees() -> None:
    out = subprocess.run(
        [sys.executable, "bench/engine.py", "--games", "6", "--max-moves", "60", "--seed", "7"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines[2:5]] == ["shaula", "stalactites", "moojub"]
    assert lines[-1] == "the naive engine listed the same moves at every position"
