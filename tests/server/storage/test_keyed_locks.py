"""server/storage/keyed_locks.py: one writer at a time per key, other keys not held up, and no
entry left behind once nobody holds or waits."""

from __future__ import annotations

import asyncio

import pytest

from server.storage.keyed_locks import KeyedLocks


async def test_one_holder_per_key_others_free_and_nothing_left_behind() -> None:
    locks = KeyedLocks()
    inside: dict[str, int] = {"a": 0, "b": 0}
    most: dict[str, int] = {"a": 0, "b": 0}
    order: list[str] = []

    async def hold(key: str, name: str) -> None:
        async with locks.hold(key):
            inside[key] += 1
            most[key] = max(most[key], inside[key])
            order.append(name)
            await asyncio.sleep(0.01)
            inside[key] -= 1

    await asyncio.gather(hold("a", "a1"), hold("a", "a2"), hold("b", "b1"), hold("a", "a3"))
    assert most == {"a": 1, "b": 1}
    assert order == ["a1", "b1", "a2", "a3"]  # b did not wait for a; a's turns in order
    assert len(locks) == 0


async def test_a_holder_that_fails_lets_the_next_one_in() -> None:
    locks = KeyedLocks()
    with pytest.raises(ValueError):
        async with locks.hold("x"):
            raise ValueError("boom")
    async with asyncio.timeout(1.0), locks.hold("x"):
        assert len(locks) == 1
    assert len(locks) == 0
