"""bench/records.py ends rated races, archives them and times moves beside the archive,
printing a row per step and its verdict line (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT

from bench.records import STEPS


def test_every_step_is_timed_and_the_ratios_printed() -> None:
    small = ["--races", "2", "--seats", "2", "--moves", "10", "--path-moves", "100"]
    small += ["--rounds", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "bench.records", *small],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {
        cells[0]: float(cells[1].strip("*"))
        for line in done.stdout.splitlines()
        if line.startswith("| ") and not line.startswith(("| step", "| moves"))
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    assert set(STEPS) <= set(rows)
    assert all(rows[step] > 0 for step in STEPS)
    # 100 moves are five races of 2 seats x 10 moves
    assert rows["alone (baseline)"] > 0 and rows["while 5 races are archived"] > 0
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("perf_verdict records: a race's end adds ")
    assert "x the moves alone" in last
