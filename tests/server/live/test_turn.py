"""A seat's turn: first come first served, and free turns taken without waiting."""

import asyncio

import pytest

from server.live.turn import Turn


async def test_a_free_turn_is_taken_at_once_and_a_held_one_is_not() -> None:
    turn = Turn()
    assert turn.take_now() and turn.locked()
    assert not turn.take_now()
    turn.release()
    assert not turn.locked()
    async with turn:
        assert turn.locked()
    assert not turn.locked()


async def test_a_released_turn_goes_to_the_first_waiter_not_to_one_taking_it_now() -> None:
    turn = Turn()
    order: list[str] = []

    async def wait(name: str) -> None:
        async with turn:
            order.append(name)
            await asyncio.sleep(0)

    assert turn.take_now()
    first = asyncio.create_task(wait("first"))
    second = asyncio.create_task(wait("second"))
    await asyncio.sleep(0)
    turn.release()
    assert turn.locked()  # handed on, not freed
    assert not turn.take_now()
    await asyncio.gather(first, second)
    assert order == ["first", "second"] and not turn.locked()


async def test_a_waiter_cancelled_after_it_was_handed_the_turn_passes_it_on() -> None:
    turn = Turn()
    assert turn.take_now()
    first = asyncio.create_task(turn.acquire())
    second = asyncio.create_task(turn.acquire())
    await asyncio.sleep(0)
    turn.release()  # to `first`, which is cancelled before it runs
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 1)
    assert turn.locked()
    turn.release()
    assert not turn.locked()


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    turn = Turn()
    assert turn.take_now()
    waiter = asyncio.create_task(turn.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    turn.release()
    assert not turn.locked()
    assert turn.take_now()


def test_releasing_a_free_turn_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        Turn().release()
