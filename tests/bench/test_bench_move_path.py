"""bench/move_path.py runs the server's own move-path code on a legal walk and prints a
row per step and its verdict line (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT

from bench.move_path import STEPS


def test_every_step_is_timed_and_the_ratio_printed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.move_path", "--moves", "40", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {
        cells[0]: float(cells[1].strip("*"))
        for line in done.stdout.splitlines()
        if line.startswith("| ") and not line.startswith("| step")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    assert set(STEPS) <= set(rows)
    assert all(rows[step] > 0 for step in STEPS)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("shaula, 40 moves: the move path's Python costs")
    assert "x the bare serialisation of the same maps" in last
