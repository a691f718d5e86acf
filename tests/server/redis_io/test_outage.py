"""The outage state machine: when a process is cut off from Redis and when it is back."""

from __future__ import annotations

from server.redis_io.outage import Change, Outage


def test_failures_in_a_row_for_the_cutoff_cut_the_process_off_once() -> None:
    outage = Outage(cutoff=6.0)
    assert outage.observe(None, 100.0) is None and outage.problem is None
    assert outage.observe("no answer", 101.0) is None
    assert (outage.problem, outage.failing_since, outage.cut_off) == ("no answer", 101.0, False)
    assert outage.observe("refused", 106.9) is None  # 5.9 s: not yet
    assert outage.observe("refused", 107.0) is Change.CUT_OFF
    assert outage.observe("refused", 120.0) is None  # said once
    assert outage.cut_off and outage.problem == "refused"
    assert outage.observe(None, 121.0) is Change.BACK
    assert (outage.problem, outage.failing_since, outage.cut_off) == (None, None, False)
    assert outage.observe(None, 122.0) is None


def test_a_good_check_in_between_starts_the_count_again() -> None:
    outage = Outage(cutoff=6.0)
    outage.observe("down", 0.0)
    assert outage.observe(None, 5.0) is None  # back before the cutoff: nothing to say
    assert outage.observe("down", 6.0) is None
    assert outage.observe("down", 11.9) is None
    assert outage.observe("down", 12.0) is Change.CUT_OFF


def test_a_cutoff_of_zero_never_cuts_off() -> None:
    outage = Outage(cutoff=0.0)
    for now in range(100):
        assert outage.observe("down", float(now)) is None
    assert outage.problem == "down" and not outage.cut_off
