"""The tournament's I/O shell: feeds the state machine the clock, the organiser's and
players' requests, drawn deals and finished races, and opens the rooms it asks for.

Every process runs `sweep` every `sweep_interval`: each tournament whose deadline is due
is advanced by whichever process claims it first (a lease in Redis), and every change is
a compare-and-set, so a round begins once and a heat is scored once however many
processes there are, and a process that dies mid-way leaves nothing half done (the next
sweep, by any process, finishes the work: rooms are opened idempotently).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import Any

import core
from core.replay import verify
from protocol import ErrorCode
from server.identity.accounts import anothers
from server.metrics import redis_error
from server.room.race import RaceError
from server.storage.store import hash_token
from server.tournament.machine import Tournament
from server.tournament.model import Entrant, Heat, TourConfig, TourError
from server.tournament.rooms import HeatSpec, RaceRecord, RaceRooms, heat_room
from server.tournament.scoring import RaceResult
from server.tournament.store import TourStore

__all__ = ["POLL", "TourRunner", "heat_results", "new_tour_id", "player_of"]

log = logging.getLogger(__name__)

POLL = 0.25  # seconds between looks at a tournament's live heats
LEASE = 2.0  # seconds a process holds a tournament it advances (a dead one frees it soon)


def new_tour_id() -> str:
    return secrets.token_hex(4)


def heat_results(heat: Heat, replay: str) -> list[RaceResult]:
    """The heat's results as its replay proves them (seat i is heat.players[i])."""
    checked = verify(replay)
    return [
        RaceResult(
            player=heat.players[r["seat"]],
            won=r["won"],
            time=r["time"],
            progress=r["progress"],
            reached=r["reached"],
            moves=r["moves"],
        )
        for r in checked.results
    ]


class TourRunner:
    def __init__(self, store: TourStore, rooms: RaceRooms, process: str) -> None:
        self.store = store
        self.rooms = rooms
        self.process = process
        self._rng = secrets.SystemRandom()

    # ------------------------------------------------------------ requests

    async def create(self, config: TourConfig, now: float) -> tuple[Tournament, str]:
        token = secrets.token_urlsafe(18)
        tour = Tournament(new_tour_id(), config, hash_token(token), now)
        await self.store.create(tour)
        return tour, token

    async def organise(
        self, tid: str, token: Any, action: str, now: float, **args: Any
    ) -> Tournament:
        """start, pause, resume or remove (args: player), by the organiser's token."""
        tour, _ = await self.store.get(tid)
        if not isinstance(token, str) or not secrets.compare_digest(
            hash_token(token), tour.organiser_hash
        ):
            raise TourError(
                ErrorCode.NOT_ORGANISER, "that is not this tournament's organiser token"
            )

        def act(t: Tournament) -> bool:
            """Whether the tournament changed (a pause of a paused one did not)."""
            if action == "start":
                t.start(now)
            elif action == "pause":
                return t.pause(now)
            elif action == "resume":
                return t.resume(now)
            elif action == "remove":
                return t.remove(args["player"], now)
            else:
                raise TourError(ErrorCode.BAD_REQUEST, f"no action {action!r}")
            return True

        written = await self.store.transact(tid, act)
        if action == "start":
            try:  # the first round at once; if that fails, the next sweep does it
                return await self.advance(tid, now)
            except Exception:
                log.exception("tournament %s: the first advance failed", tid)
        return written.tour

    async def register(
        self,
        tid: str,
        name: str,
        now: float,
        entrant: Entrant | None = None,
    ) -> tuple[Tournament, int, str]:
        token = secrets.token_urlsafe(18)
        token_hash = hash_token(token)
        taken: list[int] = []

        def act(t: Tournament) -> bool:
            player = t.register(name, token_hash, now, entrant)
            taken[:] = [player.id]
            return True

        written = await self.store.transact(tid, act)
        return written.tour, taken[0], token

    async def as_player(
        self, tid: str, token: Any, action: str, now: float, asker: str | None = None
    ) -> tuple[Tournament, int]:
        """withdraw or come back, by the player's token; asked by the player `asker` (a
        request with a key), only their own registration."""
        tour, _ = await self.store.get(tid)
        pid = player_of(tour, token)
        if pid is None:
            raise TourError(ErrorCode.BAD_TOKEN, "that token holds no place in this tournament")
        if anothers(tour.player(pid).account, asker):  # as on a socket (live.py)
            raise TourError(ErrorCode.NOT_YOUR_SEAT, "that registration is another player's")

        def act(t: Tournament) -> bool:
            """Whether the player's standing changed (withdrawing again: no)."""
            return t.withdraw(pid, now) if action == "withdraw" else t.come_back(pid, now)

        return (await self.store.transact(tid, act)).tour, pid

    # ------------------------------------------------------------ the sweep

    async def sweep(self, now: float) -> int:
        """Advance every tournament that is due; returns how many were looked at."""
        due = await self.store.due(now)
        for tid, score in due:
            if not await self.store.claim(tid, self.process, LEASE):
                continue
            try:
                await self.advance(tid, now, score)
            except TourError as err:
                if err.code is ErrorCode.UNKNOWN_TOURNAMENT:
                    await self.store.unschedule(tid, score)
                else:
                    log.exception("tournament %s: advancing failed", tid)
            except Exception as exc:
                if redis_error(exc):
                    raise  # Redis is away: the sweep says so once (lifecycle.py)
                log.exception("tournament %s: advancing failed", tid)
            finally:
                with contextlib.suppress(Exception):  # the lease expires by itself anyway
                    await self.store.release(tid, self.process)
        return len(due)

    async def advance(self, tid: str, now: float, score: float | None = None) -> Tournament:
        """Whatever is due: the clock (a round, a wave, the end), live heats (open their
        rooms, score the finished ones), deals to draw; then when to look again."""
        tour = (await self.store.transact(tid, lambda t: t.tick(now))).tour
        for heat in tour.live_heats():
            tour = await self._watch_heat(tour, heat, now)
        wanted = {g: n for g, n in tour.seeds_wanted().items() if n > 0}
        if wanted:
            drawn = {
                g: [await self._draw(tour.config, g) for _ in range(n)] for g, n in wanted.items()
            }

            def add(t: Tournament) -> bool:
                return any([t.add_seeds(g, s) for g, s in drawn.items()])

            tour = (await self.store.transact(tid, add)).tour
            tour = (await self.store.transact(tid, lambda t: t.tick(time.time()))).tour
            for heat in tour.live_heats():
                tour = await self._watch_heat(tour, heat, now)
        deadline = tour.next_deadline()
        if tour.live_heats():
            deadline = min(deadline or float("inf"), time.time() + POLL)
        if deadline is not None:
            await self.store.schedule(tid, deadline)
        elif score is not None:
            await self.store.unschedule(tid, score)
        return tour

    async def _watch_heat(self, tour: Tournament, heat: Heat, now: float) -> Tournament:
        """Open the heat's room if nobody has yet; score it once it has finished."""
        room = heat_room(tour.id, heat.id)
        if not heat.opened:
            await self.rooms.open(self._spec(tour, heat), now)  # idempotent
            return (await self.store.transact(tour.id, lambda t: t.heat_opened(heat.id))).tour
        try:
            record = await self.rooms.record(room)
        except RaceError:
            # Gone (rooms expire an hour after their end, and every process was down
            # that long): opened again, so the heat is raced rather than lost.
            log.warning(
                "tournament %s: the room of heat %d is gone; opening it again", tour.id, heat.id
            )
            await self.rooms.open(self._spec(tour, heat), now)
            return tour
        if record is None:
            return tour
        results = heat_results(heat, await self._keep_replay(tour, heat, record))
        at = time.time()

        def finished(t: Tournament) -> bool:
            return t.heat_finished(heat.id, results, at)

        return (await self.store.transact(tour.id, finished)).tour

    async def _keep_replay(self, tour: Tournament, heat: Heat, record: RaceRecord) -> str:
        """The heat's one replay: the first one saved, by whichever process or request."""
        replay = record.replay({"tournament": tour.id, "round": heat.round, "heat": heat.id})
        await self.store.save_replay(tour.id, heat.id, replay)
        return await self.store.replay(tour.id, heat.id) or replay

    async def replay(self, record: RaceRecord) -> str:
        """A finished race's replay, the same whichever URL serves it: a tournament's race
        is its heat's replay (with the tournament, round and heat in the header)."""
        if record.tournament is not None:
            loaded = await self.store.load(record.tournament)
            if loaded is not None:
                tour = loaded[0]
                for heat in tour.heats:
                    if heat_room(tour.id, heat.id) == record.room:
                        return await self._keep_replay(tour, heat, record)
        return record.replay()

    async def line_open(self, tid: str, room: str) -> bool:
        """Whether anyone may have the finished race of `room`, a heat of tournament `tid`
        (its replay, results, or its every move by watching it): once no other heat races
        its deal (`Tournament.deal_raced`). A tournament gone (kept 30 days) is long over."""
        loaded = await self.store.load(tid)
        if loaded is None:
            return True
        tour = loaded[0]
        heat = next((h for h in tour.heats if heat_room(tour.id, h.id) == room), None)
        return heat is None or tour.deal_raced(heat)

    def _spec(self, tour: Tournament, heat: Heat) -> HeatSpec:
        c = tour.config
        return HeatSpec(
            room=heat_room(tour.id, heat.id),
            tournament=tour.id,
            game=heat.game,
            seed=heat.seed,
            players=[(tour.players[p].name, tour.players[p].token_hash) for p in heat.players],
            owners=[(tour.players[p].account, tour.players[p].bot) for p in heat.players],
            time_limit=c.time_limit,
            spectator_delay=c.spectator_delay,
            countdown=c.countdown,
            grace=c.grace,
            rated=c.rated,
            shared=tour.deal_shared(heat),
        )

    async def _draw(self, config: TourConfig, game: str) -> int:
        """A deal; proved winnable by the solver unless the organiser allowed any (no
        winnable one found: RuntimeError, and the next sweep tries again)."""
        if config.winnable:
            return await asyncio.to_thread(core.winnable_seed, game, self._rng)
        return 1 + self._rng.randrange(core.MAX_SEED)


def player_of(tour: Tournament, token: Any) -> int | None:
    if not isinstance(token, str):
        return None
    wanted = hash_token(token)
    for player in tour.players:
        if secrets.compare_digest(player.token_hash, wanted):
            return player.id
    return None
