"""bench/load.py in a tiny configuration: every scenario runs end to end through its client
processes and real servers, every message is answered, and the verdict lines come out.
No timing is asserted (tests never assert timings); the verdicts' arithmetic is checked on
figures given by hand."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT

from bench.load import Scenario, median_scenarios, verdicts

TINY = [
    "--rooms", "3", "--room-size", "3", "--spectators", "2", "--clients", "2",
    "--crowd", "12", "--crowd-duration", "1", "--idle", "150", "--idle-per-room", "40",
    "--idle-settle", "0.2", "--warmup", "0.5", "--duration", "1", "--rate", "4",
    "--crowd-rate", "4", "--leavers", "6", "--exodus-grace", "0.5", "--exodus-tail", "1",
]  # fmt: skip


def rows(out: str) -> dict[tuple[str, str], list[str]]:
    found = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 9 and cells[0] != "scenario":
            found[(cells[0], cells[1])] = cells[2:]
    return found


def test_every_scenario_runs_through_its_client_processes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", *TINY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    table = rows(done.stdout)
    own = "racer: own move answered"
    expected = {
        ("rooms", own): 9,
        ("rooms", "racer: others' progress"): 9,
        ("rooms", "spectator: progress"): 6,
        ("crowd", f"{own}, unwatched"): 3,
        ("crowd", f"{own}, 12 watching"): 3,
        ("crowd", "spectator: progress"): 12,
        ("crowd, bare relay", f"{own}, unwatched"): 3,
        ("crowd, bare relay", f"{own}, 12 watching"): 3,
        ("crowd, bare relay", "spectator: progress"): 12,
        ("idle", "spectator of a quiet room"): 150,
        ("exodus", "stayer: own move answered, before the drop"): 9,
        ("exodus", "stayer: own move answered, 6 others dropped"): 9,
    }
    assert set(table) == set(expected), done.stdout
    for key, connections in expected.items():
        cells = table[key]
        assert int(cells[0].replace(",", "")) == connections, (key, cells)
        assert cells[5] == "0", (key, cells)  # no errors, refusals or unanswered moves
        if key[0] != "idle":
            assert float(cells[1].replace(",", "")) > 0, (key, cells)  # messages flowed
    assert "KiB/connection" in table[("idle", "spectator of a quiet room")][6]
    # The verdict lines, by what they begin with: a busy machine adds one ("crowd:
    # spectators received ... NOT all delivered in time") between them.
    verdict = {}
    for line in done.stdout.strip().splitlines():
        for start in (
            "rooms:",
            "perf_verdict crowd: racers' p99",
            "spectator cost",
            "idle:",
            "exodus:",
        ):
            if line.startswith(start):
                verdict[start] = line
    assert len(verdict) == 5, done.stdout[-2000:]
    assert verdict["rooms:"].startswith("rooms: 15 connections")
    assert verdict["rooms:"].endswith("-> ok")
    assert verdict["spectator cost"].startswith("spectator cost per delivered event: solrace")
    # 150 connections are far from the descriptor limit: the idle goal is not shown.
    idle = verdict["idle:"]
    assert idle.startswith("idle: 150 connections (NOT up to the descriptor limit")
    assert idle.endswith("NOT met")
    assert "6 racers dropped at once" in verdict["exodus:"]


def crowd(quiet: float, watched: float, errors: float = 0) -> Scenario:
    return Scenario(
        "crowd",
        figures={
            "p99_quiet_ms": quiet,
            "p99_watched_ms": watched,
            "p50_quiet_ms": 1.0,
            "p50_watched_ms": 1.0,
            "delivered_per_s": 8000,
            "expected_per_s": 8000,
            "us_per_delivery": 6.0,
            "errors": errors,
        },
    )


def idle(connections: int, kib: float, at_limit: bool) -> Scenario:
    return Scenario(
        "idle",
        figures={
            "connections": connections,
            "limit": 20000,
            "at_limit": 1.0 if at_limit else 0.0,
            "kib_per_connection": kib,
            "errors": 0,
        },
    )


def test_the_crowd_verdict_is_the_rise_of_the_racers_p99() -> None:
    line = verdicts([crowd(10.0, 11.9)])[0]
    assert line.startswith("perf_verdict crowd: racers' p99 (from sending a move to its accepted)")
    assert line.endswith("+19% (goal: under +20%; p50 1.00 -> 1.00 ms) -> met")
    assert verdicts([crowd(10.0, 12.1)])[0].endswith("-> NOT met")
    assert verdicts([crowd(10.0, 9.0, errors=1)])[0].endswith("-> NOT met")
    relay = Scenario("crowd, bare relay", figures={"us_per_delivery": 4.0})
    assert verdicts([crowd(1, 1), relay])[1] == (
        "spectator cost per delivered event: solrace 6.0 µs of server CPU, bare relay 4.0 µs "
        "(1.50x the relay's)"
    )


def test_the_idle_verdict_needs_the_descriptor_limit_and_20_kib() -> None:
    assert verdicts([idle(19800, 16.0, True)])[0].endswith("-> met")
    assert verdicts([idle(19800, 21.0, True)])[0].endswith("-> NOT met")
    assert verdicts([idle(500, 16.0, False)])[0].endswith("-> NOT met")


def test_repeated_runs_are_judged_by_their_median_scenario() -> None:
    runs = [[crowd(1, watched)] for watched in (5.0, 1.0, 3.0)]
    assert median_scenarios(runs)[0].figures["p99_watched_ms"] == 3.0
    # The crowd's median run is the one with the median rise, its goal's figure: here
    # +30%, -14% and +1%, whose median is the third run's, not the first run's (the
    # median watched p99).
    runs = [
        [crowd(quiet, watched)] for quiet, watched in ((1.46, 1.89), (2.79, 2.41), (1.55, 1.56))
    ]
    chosen = median_scenarios(runs)[0].figures
    assert (chosen["p99_quiet_ms"], chosen["p99_watched_ms"]) == (1.55, 1.56)
    assert verdicts([median_scenarios(runs)[0]])[0].endswith("-> met")
