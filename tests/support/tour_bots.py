"""Bot players for tournament tests: real WebSockets to real servers.

A bot follows the tournament (`tour_watch` with its token); whenever its line names a
room it has not raced yet, it joins with its token and plays by its `Plan`: the solver's
winning line (all of it, or its first few moves), then maybe resign, or it drops its
connection. It stops when the tournament has finished.

Bots ride out servers that die: a lost connection is opened again (to the next of the
`urls`, round robin), the standings followed again, and a race taken up where the server
says it is (the snapshot's accepted moves, `welcome.last_seq`): so a test can stop every
server process mid-round and check that nothing was lost. Each bot keeps the moves the
server accepted from it (`accepted`) to compare with the replays.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import websockets

import core
import protocol as p
from core.replay import verify
from support.http import post_json
from support.wsclient import WsClient

__all__ = [
    "FINISH",
    "Plan",
    "TourBot",
    "always",
    "create",
    "recomputed_knockout",
    "recomputed_points",
    "recomputed_rounds",
    "register",
    "solution",
    "start_and_hold_after_round_one",
    "wait_for",
]

# One solve per deal, whoever asks and from whichever test's event loop: a field of 64 bots
# asking at once for the same round's line ran 64 solves side by side, and their threads
# took the GIL from the server (in this process) until its races ran out of time.
_SOLUTIONS: dict[tuple[str, int], concurrent.futures.Future[list[str]]] = {}
_SOLVER = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="bot-solver")
_LOST = (OSError, TimeoutError, websockets.ConnectionClosed, aiohttp.ClientError)


def _solve(game: str, seed: int) -> list[str]:
    found = core.solve(core.new_game(game, seed), budget=400_000)
    assert found.result == "won", found
    return list(found.moves)


async def solution(game: str, seed: int) -> list[str]:
    """The solver's winning line for a deal (the tournament's deals are winnable)."""
    key = (game, seed)
    if key not in _SOLUTIONS:
        _SOLUTIONS[key] = _SOLVER.submit(_solve, game, seed)
    return list(await asyncio.wrap_future(_SOLUTIONS[key]))


async def create(server_url: str, **body: Any) -> tuple[str, str]:
    """A tournament with quick test settings (overridden by `body`): (id, organiser token)."""
    body = {
        "name": "test cup",
        "format": "rounds",
        "game": "shaula",
        "countdown": 0.2,
        "pause": 0.2,
        "grace": 0.5,
        "spectator_delay": 0,
        **body,
    }
    status, data = await post_json(f"{server_url}/tournaments", body)
    assert status == 201, data
    return data["tournament"]["id"], data["organiser_token"]


async def register(server_url: str, tid: str, name: str) -> str:
    status, data = await post_json(f"{server_url}/tournaments/{tid}/players", {"name": name})
    assert status == 201, data
    token: str = data["token"]
    return token


async def wait_for(watcher: WsClient, test: Any, timeout: float = 60.0) -> p.TourState:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        state = await watcher.expect(p.TourState, timeout=max(0.01, deadline - loop.time()))
        if test(state):
            return state


async def start_and_hold_after_round_one(
    server_url: str, tid: str, organiser: str, watcher: WsClient
) -> None:
    """Start the tournament and pause it once round 1 is under way (a pause before it
    would hold round 1 itself); returns when round 1 has ended and the pause holds."""
    await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
    await wait_for(watcher, lambda s: s.tournament["round"] == 1 and s.tournament["racing"])
    await post_json(f"{server_url}/tournaments/{tid}/pause", {"organiser_token": organiser})
    await wait_for(watcher, lambda s: s.tournament["round"] == 1 and not s.tournament["racing"])


@dataclass(frozen=True)
class Plan:
    moves: int | None = None  # how many moves of the winning line (None: all of it)
    resign: bool = False  # resign after them
    drop: bool = False  # close the connection once the race has started, moving nothing
    leave: bool = False  # close the connection after the moves (and never come back)
    pace: float = 0.0  # seconds between moves


FINISH = Plan()


def always(plan: Plan) -> Callable[[int, int], Plan]:
    return lambda _round, _races: plan


@dataclass
class TourBot:
    urls: list[str]
    tid: str
    name: str
    token: str
    plan: Callable[[int, int], Plan]  # (round or wave, races so far) -> how to race
    raced: list[str] = field(default_factory=list)
    states: list[p.TourState] = field(default_factory=list)
    accepted: dict[str, list[str]] = field(default_factory=dict)  # room -> moves accepted
    reconnects: int = 0
    _turn: int = 0

    def url(self) -> str:
        self._turn += 1
        return self.urls[self._turn % len(self.urls)]

    async def run(self, timeout: float = 120.0) -> p.TourState:
        races: list[asyncio.Task[None]] = []
        try:
            while True:
                try:
                    return await self._follow(races, timeout)
                except _LOST:
                    self.reconnects += 1
                    await asyncio.sleep(0.2)
        finally:
            for task in races:
                if not task.done():
                    task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def _follow(self, races: list[asyncio.Task[None]], timeout: float) -> p.TourState:
        async with WsClient.connect(self.url()) as watch:
            await watch.send(p.TourWatch(tournament=self.tid, token=self.token))
            while True:
                state = await watch.expect(p.TourState, timeout=timeout)
                self.states.append(state)
                you = state.you or {}
                room = you.get("room")
                if room and room not in self.raced:
                    plan = self.plan(int(state.tournament["round"]), len(self.raced))
                    self.raced.append(room)
                    races.append(asyncio.create_task(self.race(room, plan)))
                if state.tournament["status"] == "finished":
                    await asyncio.gather(*races)
                    return state

    async def race(self, room: str, plan: Plan) -> None:
        self.accepted[room] = []
        while True:
            try:
                await self._race(room, plan)
                return
            except _LOST:
                self.reconnects += 1
                await asyncio.sleep(0.2)

    async def _race(self, room: str, plan: Plan) -> None:
        async with WsClient.connect(self.url()) as c:
            welcome = await c.join(room, token=self.token)
            snapshot = await c.expect(p.Snapshot)
            view = snapshot.room
            if view["status"] == "finished":
                return
            game, seed = view["game"], view["seed"]
            if view["status"] != "running":
                started = await c.expect(p.RaceStarted, timeout=30)
                game, seed = started.game, started.seed
            if plan.drop:
                return
            assert seed is not None, "an open game shows its deal when the race starts"
            line = await solution(game, seed)
            done = list(snapshot.moves or [])  # what the server accepted before a reconnect
            self.accepted[room] = list(done)
            count = len(line) if plan.moves is None else min(plan.moves, len(line))
            seq = welcome.last_seq or 0
            for move in line[len(done) : count]:
                seq += 1
                while True:
                    await c.send(p.Move(seq=seq, move=move))
                    answer = await c.expect_any((p.Accepted, p.Refused), timeout=30)
                    if not isinstance(answer, p.Refused) or answer.code != "rate_limited":
                        break
                    await asyncio.sleep(0.1)  # over the socket's rate: the same seq again
                if isinstance(answer, p.Refused):
                    return  # time is up
                self.accepted[room].append(answer.move)
                if plan.pace:
                    await asyncio.sleep(plan.pace)
            if plan.leave:
                return
            if plan.resign:
                await c.send(p.Resign())
            await c.expect(p.RaceFinished, timeout=60)


# The standings below are recomputed from docs/tournaments.md alone, not with the server's
# scoring: a check that called the code it checks would agree with any fault of it.


def _results(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A replay's header and results, checked by the engine."""
    checked = verify(text)
    return checked.header, list(checked.results)


def _place_key(result: dict[str, Any]) -> tuple[float, ...]:
    """How a race places a player: finishers by time, then progress, then who reached it
    first (to the millisecond); equal keys share the place."""
    if result["won"]:
        return (0, round(result["time"], 3))
    return (1, -result["progress"], round(result["reached"], 3))


def _ranks(keys: dict[str, tuple[Any, ...]], last: set[str]) -> dict[str, int]:
    """name -> rank: by key, the names in `last` after the others; equal rows share it."""
    ordered = sorted(keys, key=lambda n: (n in last, keys[n]))
    ranks: dict[str, int] = {}
    for i, name in enumerate(ordered):
        before = ordered[i - 1] if i else None
        same = before is not None and (before in last, keys[before]) == (name in last, keys[name])
        ranks[name] = ranks[before] if same and before is not None else i + 1
    return ranks


def recomputed_rounds(
    replays: list[str], ids: dict[str, int], removed: frozenset[str] | set[str] = frozenset()
) -> dict[str, tuple[int, float]]:
    """name -> (rank, Rounds points), from the replays alone (and who was removed)."""
    by_round: dict[int, list[dict[str, Any]]] = {}
    for text in replays:
        header, results = _results(text)
        by_round.setdefault(header["round"], []).extend(results)
    points = dict.fromkeys(ids, 0.0)
    wins = dict.fromkeys(ids, 0)
    time = dict.fromkeys(ids, 0.0)
    progress = dict.fromkeys(ids, 0)
    for results in by_round.values():
        ordered = sorted(results, key=_place_key)
        size = len(ordered)
        for r in ordered:
            # Place p is worth N - p + 1; the places a tie spans share their points.
            tied = [i for i, o in enumerate(ordered) if _place_key(o) == _place_key(r)]
            points[r["name"]] += sum(size - i for i in tied) / len(tied)
            wins[r["name"]] += tied[0] == 0
            time[r["name"]] += r["time"] if r["won"] else 0.0
            progress[r["name"]] += r["progress"]
    keys = {n: (-points[n], -wins[n], round(time[n], 3), -progress[n]) for n in ids}
    ranks = _ranks(keys, set(removed))
    return {name: (ranks[name], points[name]) for name in ids}


def recomputed_points(replays: list[str], ids: dict[str, int]) -> dict[str, float]:
    """name -> Rounds points, from the replays alone (checked by the engine)."""
    return {name: points for name, (_, points) in recomputed_rounds(replays, ids).items()}


def recomputed_knockout(
    replays: list[str], matches: list[dict[str, Any]], ids: dict[str, int]
) -> dict[str, tuple[int, int]]:
    """name -> (rank, races won) of a Knockout, from the replays (who won each race) and
    the public bracket (the champion, and the round each player went out in, by a race,
    a walkover or both sides withdrawn)."""
    wins = dict.fromkeys(ids, 0)
    for text in replays:
        first, second = sorted(_results(text)[1], key=_place_key)
        if _place_key(first) != _place_key(second):  # a tie is no race won
            wins[first["name"]] += 1
    # Withdrawn before the draw: in no match, out before round 1.
    drawn = {side for m in matches for side in (m["a"], m["b"]) if side is not None}
    out_round: dict[str, int | None] = {n: None if n in drawn else 0 for n in ids}
    for match in matches:
        if match["how"] is None:
            continue
        for side in (match["a"], match["b"]):
            if side is not None and side != match["winner"]:
                out_round[side] = match["round"]
    # The champion (still in), then by the round reached, then races won.
    keys = {n: (-(out_round[n] if out_round[n] is not None else 1 << 30), -wins[n]) for n in ids}
    ranks = _ranks(keys, set())
    return {name: (ranks[name], wins[name]) for name in ids}
