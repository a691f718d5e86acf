"""Bot players for tournament tests: real WebSockets to a real server.

A bot follows the tournament (`tour_watch` with its token); whenever its line names a
room it has not raced yet, it joins with its token and plays by its `Plan`: the solver's
winning line (all of it, or its first few moves), then maybe resign, or it drops its
connection. It stops when the tournament has finished.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from wsclient import WsClient

import core
import protocol as p

__all__ = ["Plan", "TourBot", "post", "solution"]

_SOLUTIONS: dict[tuple[str, int], list[str]] = {}


async def solution(game: str, seed: int) -> list[str]:
    """The solver's winning line for a deal (the tournament's deals are winnable)."""
    key = (game, seed)
    if key not in _SOLUTIONS:
        found = await asyncio.to_thread(core.solve, core.new_game(game, seed), budget=400_000)
        assert found.result == "won", found
        _SOLUTIONS[key] = list(found.moves)
    return _SOLUTIONS[key]


async def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as r:
        return r.status, await r.json()


@dataclass(frozen=True)
class Plan:
    moves: int | None = None  # how many moves of the winning line (None: all of it)
    resign: bool = False  # resign after them
    drop: bool = False  # close the connection once the race has started, moving nothing
    pace: float = 0.0  # seconds between moves


FINISH = Plan()


class TourBot:
    def __init__(
        self, server_url: str, tid: str, name: str, token: str, plan: Callable[[int], Plan]
    ) -> None:
        self.server_url = server_url
        self.tid = tid
        self.name = name
        self.token = token
        self.plan = plan  # round (Arena: wave) -> how to race it
        self.raced: list[str] = []
        self.states: list[p.TourState] = []

    async def run(self, timeout: float = 120.0) -> p.TourState:
        async with WsClient.connect(self.server_url) as watch:
            await watch.send(p.TourWatch(tournament=self.tid, token=self.token))
            races: list[asyncio.Task[None]] = []
            try:
                while True:
                    state = await watch.expect(p.TourState, timeout=timeout)
                    self.states.append(state)
                    you = state.you or {}
                    room = you.get("room")
                    if room and room not in self.raced:
                        self.raced.append(room)
                        plan = self.plan(int(state.tournament["round"]))
                        races.append(asyncio.create_task(self.race(room, plan)))
                    if state.tournament["status"] == "finished":
                        await asyncio.gather(*races)
                        return state
            finally:
                for task in races:
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task

    async def race(self, room: str, plan: Plan) -> None:
        async with WsClient.connect(self.server_url) as c:
            await c.join(room, token=self.token)
            snapshot = await c.expect(p.Snapshot)
            view = snapshot.room
            game, seed = view["game"], view["seed"]
            if view["status"] != "running":
                started = await c.expect(p.RaceStarted, timeout=30)
                game, seed = started.game, started.seed
            if plan.drop:
                return
            assert seed is not None, "an open game shows its deal when the race starts"
            line = await solution(game, seed)
            count = len(line) if plan.moves is None else min(plan.moves, len(line))
            for seq, move in enumerate(line[:count], start=1):
                await c.send(p.Move(seq=seq, move=move))
                answer = await c.expect_any((p.Accepted, p.Refused), timeout=30)
                if isinstance(answer, p.Refused):
                    return  # time is up
                if plan.pace:
                    await asyncio.sleep(plan.pace)
            if plan.resign:
                await c.send(p.Resign())
            await c.expect(p.RaceFinished, timeout=60)
