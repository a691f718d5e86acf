"""bench.gc_probe in a tiny configuration: the server's collector reported from inside a
real server process under load, with the thresholds asked for."""

from __future__ import annotations

import argparse
import gc

from bench.gc_probe import probe, report


def test_the_report_covers_each_generation() -> None:
    found = report()
    assert len(found["tracked"]) == 3 and found["threshold"] == list(gc.get_threshold())
    assert all(found[f"collect{g}_cpu_ms"] >= 0 for g in range(3))


async def test_a_loaded_server_reports_its_collector_with_the_thresholds_asked() -> None:
    args = argparse.Namespace(racers=8, rate=5.0, seconds=1.5, server_env=[])
    found = await probe(args, "12345,6,7")
    assert found["threshold"] == [12345, 6, 7]
    assert found["frozen"] > 0  # what was alive at startup, out of every collection
    assert sum(found["tracked"]) > 0
    assert found["run"]["lag_samples"] > 0  # the whole run's /metrics were read
    assert set(found["run"]["gc_per_1000_moves"]) == {"0", "1", "2"}
