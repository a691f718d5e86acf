"""The sign-in limiter: a pure object on an injected clock."""

from __future__ import annotations

from server.identity.signin_limit import Budget, SignInLimit


def test_a_name_gets_its_burst_of_failures_then_one_per_interval() -> None:
    limit = SignInLimit(per_address=Budget(100, 1.0), per_name=Budget(3, 30.0))
    now = 1000.0
    for _ in range(3):
        assert limit.wait("1.2.3.4", "ann", now) == 0.0
        limit.attempted("1.2.3.4", "ann", False, now)
    assert limit.wait("1.2.3.4", "ann", now) == 30.0
    assert limit.wait("5.6.7.8", "ann", now) == 30.0  # another machine: the same name
    assert limit.wait("1.2.3.4", "bo", now) == 0.0  # another name: its own budget
    assert limit.wait("1.2.3.4", "ann", now + 30.0) == 0.0


def test_a_success_refills_the_name_but_not_the_address() -> None:
    limit = SignInLimit(per_address=Budget(3, 10.0), per_name=Budget(2, 30.0))
    limit.attempted("a", "ann", False, 0.0)
    limit.attempted("a", "ann", True, 0.0)
    assert limit.wait(None, "ann", 0.0) == 0.0
    limit.attempted("a", "bo", True, 0.0)
    assert limit.wait("a", None, 0.0) == 10.0  # every attempt counts per address


def test_link_codes_count_per_address_only() -> None:
    limit = SignInLimit(per_address=Budget(2, 5.0), per_name=Budget(1, 30.0))
    limit.attempted("a", None, False, 0.0)
    limit.attempted("a", None, False, 0.0)
    assert limit.wait("a", None, 0.0) == 5.0
    assert limit.wait("b", None, 0.0) == 0.0
