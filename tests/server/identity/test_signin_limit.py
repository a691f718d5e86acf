"""The sign-in limiter's rule (which budgets an attempt spends, and when a name's is full
again) on the in-memory room store, which keeps budgets as Redis does (the store's
contract tests)."""

from __future__ import annotations

from server.identity.signin_limit import Budget, SignInLimit
from server.storage.memory_store import MemoryRoomStore


async def test_a_name_gets_its_burst_of_failures_then_one_per_interval() -> None:
    limit = SignInLimit(MemoryRoomStore(), per_address=Budget(100, 1.0), per_name=Budget(3, 30.0))
    assert [await limit.take("1.2.3.4", "ann") for _ in range(3)] == [0.0] * 3
    assert 29.0 < await limit.take("1.2.3.4", "ann") <= 30.0
    assert 29.0 < await limit.take("5.6.7.8", "ANN") <= 30.0  # another machine, any case
    assert await limit.take("1.2.3.4", "bo") == 0.0  # another name: its own budget


async def test_a_success_refills_the_name_but_not_the_address() -> None:
    limit = SignInLimit(MemoryRoomStore(), per_address=Budget(3, 10.0), per_name=Budget(2, 30.0))
    assert await limit.take("a", "ann") == 0.0
    assert await limit.take("a", "ann") == 0.0
    await limit.succeeded("Ann")
    assert await limit.take(None, "ann") == 0.0  # the name's burst is back
    assert await limit.take("a", "bo") == 0.0  # the address's third
    assert 9.0 < await limit.take("a", "cy") <= 10.0  # every attempt counts per address


async def test_an_attempt_refused_for_its_address_spends_no_names_budget() -> None:
    limit = SignInLimit(MemoryRoomStore(), per_address=Budget(1, 60.0), per_name=Budget(1, 60.0))
    assert await limit.take("a", "ann") == 0.0
    assert await limit.take("b", "bo") == 0.0
    assert await limit.take("a", "bo") > 59.0  # refused for "a"
    await limit.succeeded("bo")
    assert await limit.take("c", "bo") == 0.0


async def test_link_codes_count_per_address_only() -> None:
    limit = SignInLimit(MemoryRoomStore(), per_address=Budget(2, 5.0), per_name=Budget(1, 30.0))
    assert await limit.take("a", None) == 0.0
    assert await limit.take("a", None) == 0.0
    assert 4.0 < await limit.take("a", None) <= 5.0
    assert await limit.take("b", None) == 0.0
