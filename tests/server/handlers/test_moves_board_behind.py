"""A seat with a socket on each of two processes: the board a move is judged on is the true
one, even when the other socket's move is accepted while this process waits on Redis
before judging (docs/protocol.md section 9: moves from either socket are checked against
the one true board of the seat, whichever process each socket is on)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from redis.exceptions import ConnectionError as RedisConnectionError
from support.http import create_room
from support.ports import free_port
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from server.edge.app import create_app
from server.edge.app_keys import HUB, SETTINGS, STORE
from server.edge.http_server import Runner
from server.settings import Settings

SEED = 5


def cell_shuffle() -> tuple[str, str, str]:
    """A card to a free cell, then cell 1 to cell 2, then back: the third move is legal only
    once the second was played."""
    game = core.new_game("shaula", SEED)
    to_cell = next(m for m in game.legal_moves() if m.endswith(" c1"))
    return to_cell, "c1 c2", "c2 c1"


@pytest.fixture
async def two_apps(redis_url: str, sqlite_url: str) -> AsyncIterator[list[web.Application]]:
    runners = []
    for _ in range(2):
        port = free_port()
        settings = Settings(
            host="127.0.0.1", port=port, redis_url=redis_url, database_url=sqlite_url
        )
        runner = Runner(create_app(settings), shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        runners.append(runner)
    yield [r.app for r in runners]
    for runner in reversed(runners):
        await runner.cleanup()


def url_of(app: web.Application) -> str:
    return f"http://127.0.0.1:{app[SETTINGS].port}"


@contextlib.asynccontextmanager
async def one_seat_on_both(
    one: web.Application, two: web.Application, first: str
) -> AsyncIterator[tuple[str, str, WsClient, WsClient]]:
    """A racing seat with a socket on each process, its first move accepted: the room,
    the seat's token, the socket on `one` and the socket on `two`."""
    room = (await create_room(url_of(one), seats=1, seed=SEED))["id"]
    async with WsClient.connect(url_of(one)) as here, WsClient.connect(url_of(two)) as there:
        welcome = await race_alone(here, room)
        assert welcome.token is not None
        await there.join(room, token=welcome.token)
        await here.send(p.Move(seq=1, move=first))
        await here.expect(p.Accepted)
        yield room, welcome.token, here, there


async def test_a_move_of_the_other_socket_accepted_while_this_one_waits_is_judged_on(
    two_apps: list[web.Application],
) -> None:
    one, two = two_apps
    first, second, third = cell_shuffle()
    async with one_seat_on_both(one, two, first) as (room, token, here, there):
        # `two` follows that move from its event (a seq it cannot know: it asks Redis for it
        # before judging its next move). Held there while `one` accepts the next move.
        store: Any = two[STORE]
        gate = asyncio.Event()
        asked = asyncio.Event()
        real: Callable[[str, int], Awaitable[int]] = store.last_seq

        async def held_last_seq(room: str, seat: int) -> int:
            if not asked.is_set():  # the judge's read; a join's own reads go through
                asked.set()
                await gate.wait()
            return await real(room, seat)

        store.last_seq = held_last_seq
        for _ in range(100):  # until `two` has followed the first move
            if await there.quiet(0.05) or asked.is_set():
                break
        await there.send(p.Move(seq=3, move=third))
        await asyncio.wait_for(asked.wait(), 5.0)
        await here.send(p.Move(seq=2, move=second))
        await here.expect(p.Accepted)
        await asyncio.sleep(0.3)  # its event reaches `two` while the turn is held there
        # A socket joining on `two` meanwhile is shown the true board, not `two`'s copy.
        async with WsClient.connect(url_of(two)) as joining:
            await joining.join(room, token=token)
            snapshot = await joining.expect(p.Snapshot)
            assert snapshot.moves == [first, second]
        gate.set()
        answer = await there.expect_any((p.Accepted, p.Refused))
        assert isinstance(answer, p.Accepted), answer
        assert answer.moves == 3
        async with WsClient.connect(url_of(two)) as joining:
            await joining.join(room, token=token)
            snapshot = await joining.expect(p.Snapshot)
            assert snapshot.moves == [first, second, third]


async def test_legal_moves_are_listed_on_the_true_board(two_apps: list[web.Application]) -> None:
    one, two = two_apps
    first, second, third = cell_shuffle()
    async with one_seat_on_both(one, two, first) as (room, _token, here, there):
        await there.quiet(0.3)  # `two` has followed it
        # `two` holds the seat's turn (a move of its own in flight, say) while `one`
        # accepts the next move: `two` does not follow it.
        turn = two[HUB].rooms[room].sessions[0].turn
        async with turn:
            await here.send(p.Move(seq=2, move=second))
            await here.expect(p.Accepted)
            await there.quiet(0.3)
        await there.send(p.Legal())
        legal = await there.expect(p.LegalReply)
        assert third in legal.moves  # c2 holds the card
        truth = core.new_game("shaula", SEED)
        truth.apply(first)
        truth.apply(second)
        assert legal.moves == truth.legal_moves()


async def test_a_move_accepted_while_another_process_writes_a_transition_is_kept(
    two_apps: list[web.Application],
) -> None:
    """`two` resigns the seat on the race as it loaded it; `one` accepts a move of the seat
    before `two` writes: the race that ends counts that move (the transition was written
    over it, and the results had a move fewer than the seat's accepted moves)."""
    one, two = two_apps
    first, second, _third = cell_shuffle()
    async with one_seat_on_both(one, two, first) as (_room, _token, here, there):
        store: Any = two[STORE]
        gate, loaded = asyncio.Event(), asyncio.Event()
        real_load = store.load

        async def held_load(room_id: str) -> Any:
            found = await real_load(room_id)
            if not loaded.is_set():  # the resign's load; anything after goes through
                loaded.set()
                await gate.wait()
            return found

        store.load = held_load
        await there.send(p.Resign())
        await asyncio.wait_for(loaded.wait(), 5.0)
        await here.send(p.Move(seq=2, move=second))
        assert (await here.expect(p.Accepted)).moves == 2
        gate.set()
        finished = await here.expect(p.RaceFinished)
        [result] = finished.results
        assert result["moves"] == 2, result


async def test_a_quick_match_cancelled_as_a_partner_takes_it_is_told_to_its_player(
    two_apps: list[web.Application],
) -> None:
    """The partner's process took the ticket from the queue, and told its player where it
    was seated a moment after the player cancelled: the cancel came too late, and the
    player, seated in a race, was told nothing (a forfeit after the grace period)."""
    one, two = two_apps
    store: Any = two[STORE]
    gate, told = asyncio.Event(), asyncio.Event()
    real_tell = store.tell_ticket

    async def held_tell(ticket: str, pairing: dict[str, Any]) -> None:
        told.set()
        await gate.wait()
        await real_tell(ticket, pairing)

    store.tell_ticket = held_tell
    async with WsClient.connect(url_of(one)) as ann, WsClient.connect(url_of(two)) as bo:
        await ann.send(p.QuickMatch(game="shaula", name="ann"))
        await ann.expect(p.Queued)
        await bo.send(p.QuickMatch(game="shaula", name="bo"))
        await asyncio.wait_for(told.wait(), 5.0)  # paired: ann's ticket is out of the queue
        await ann.send(p.QuickCancel())
        assert await ann.quiet(0.3) == []  # too late: no `unqueued`, the `matched` answers
        gate.set()
        assert (await bo.expect(p.Matched)).room == (await ann.expect(p.Matched)).room


@pytest.mark.parametrize("failing", ["create", "tell_ticket"])
async def test_a_pairing_that_redis_failed_midway_still_pairs_the_waiting_player(
    two_apps: list[web.Application], failing: str
) -> None:
    """The partner's process took the waiting ticket from the queue, then Redis failed:
    - as it made the room: the newcomer is answered `unavailable` and asks again
      (docs/protocol.md section 7), but the waiting ticket was gone from the queue, so the
      two were never paired again and the waiting player, `queued`, waited for good;
    - as it told the waiting player where they were seated: never told, that player
      forfeited a race they never heard of."""
    one, two = two_apps
    store: Any = two[STORE]
    setattr(store, failing, failing_once(getattr(store, failing), "Redis went away"))
    async with WsClient.connect(url_of(one)) as ann, WsClient.connect(url_of(two)) as bo:
        await ann.send(p.QuickMatch(game="shaula", name="ann"))
        await ann.expect(p.Queued)
        await bo.send(p.QuickMatch(game="shaula", name="bo"))
        answer = await bo.expect_any((p.Matched, p.Error))
        if isinstance(answer, p.Error):
            assert (answer.code, answer.request) == ("unavailable", "quick"), answer
            await bo.send(p.QuickMatch(game="shaula", name="bo"))  # again, as a client does
            answer = await bo.expect(p.Matched)
        assert isinstance(answer, p.Matched)
        assert answer.room == (await ann.expect(p.Matched)).room


def failing_once(call: Callable[..., Awaitable[None]], why: str) -> Callable[..., Awaitable[None]]:
    """`call`, whose first call fails as Redis going away would."""
    failures = [RedisConnectionError(why)]

    async def failing(*args: Any) -> None:
        if failures:
            raise failures.pop()
        await call(*args)

    return failing
