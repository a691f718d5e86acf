"""A connection to one room, as a player (a seat) or a spectator.

It owns the `RaceView`, the reconnecting `Link`, and the requests waiting for
their answer (moves by `seq`, hints), so the race screen and the bot only call
`move()` and read `view`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from client_cli.net import Link, ws_url
from client_cli.race import RaceView
from client_cli.session import NO_AUTOPLAY, Allowed, Outcome
from protocol import (
    Accepted,
    Error,
    ErrorCode,
    Hint,
    HintReply,
    Identify,
    Join,
    Leave,
    Matched,
    Message,
    Queued,
    QuickCancel,
    QuickMatch,
    Ready,
    Refused,
    Rematch,
    Resign,
    Resync,
    Start,
    Undo,
    Unqueued,
    Watch,
    Welcome,
)
from protocol import Move as MoveMsg

__all__ = ["ANSWER_TIMEOUT", "JoinRefused", "Seat"]

ANSWER_TIMEOUT = 15.0  # seconds to wait for the server's answer to a move
RESEND_AFTER = 2.0  # seconds without an answer before the same request is sent again
RATE_BACKOFF = 0.5  # seconds to wait after the server's "slow down"
# Refusals of a join (or watch, or quick) that say "not now" rather than "never": the link
# connects again, with backoff, and asks again.
TRY_AGAIN = frozenset({ErrorCode.UNAVAILABLE, ErrorCode.RATE_LIMITED, ErrorCode.INTERNAL})


class JoinRefused(ConnectionError):
    """The server could not be reached at first, or refused the join: `code` is its error
    code ("" when it was not reached)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class Seat:
    """A room seen through one socket; `spectator=True` watches instead of playing.

    Also a `session.Session`: the race screen plays through it.
    """

    def __init__(
        self,
        server: str,
        room: str,
        name: str = "",
        *,
        spectator: bool = False,
        token: str | None = None,
        on_change: Callable[[], None] = lambda: None,
        on_status: Callable[[str], None] = lambda status: None,
        on_token: Callable[[str], None] = lambda token: None,
        quick: str | None = None,
        key: str | None = None,
    ) -> None:
        """`key`: the player key this seat acts as (client_cli/identity.py): the seat is
        then that player's, under their name; None: an anonymous seat named `name`."""
        self.view = RaceView(room=room, role="spectator" if spectator else "player", token=token)
        self.name = name
        self.spectator = spectator
        self.on_change = on_change
        self.on_status = on_status
        self.on_token = on_token
        self.quick = quick  # a game: ask for a quick match instead of joining `room`
        self.server = server
        # A quick match's room is not known yet: its first socket names none (`Matched`).
        self.identify = Identify(key=key) if key else None
        self.link = self._link(ws_url(server, room or None))
        # The server remembers every seq of the seat, across restarts of this program and
        # rematches: counting from 1 again would get old answers back instead of new
        # moves. Milliseconds since 1970 start above any seq an earlier run used.
        self.seq = time.time_ns() // 1_000_000
        self.waiting: dict[int, asyncio.Future[Outcome]] = {}
        self.hints: list[asyncio.Future[Outcome]] = []
        self.errors: list[Error] = []
        self.welcomed = asyncio.Event()  # once, by the first connection's hello
        self.unreachable = ""  # why the first connection failed, if it did
        # This connection's hello: its type, and whether it has its answer for good (a
        # welcome, or a refusal that asking again cannot change, kept in `lost`).
        self.hello_type = ""
        self.answered = asyncio.Event()
        self.lost: Error | None = None
        self.retrying: Error | None = None  # the hello's last "not now", asked again since
        self._retry: asyncio.Task[None] | None = None
        self.unqueued = asyncio.Event()  # the server's word that a quick_cancel took

    # ------------------------------------------------------------ the link

    def _link(self, url: str) -> Link:
        return Link(url, self.hello, self.receive, self._status, identify=self.identify)

    def hello(self) -> Message:
        hello = self._hello()
        self.hello_type = hello.TYPE
        self.answered.clear()
        return hello

    def _hello(self) -> Message:
        since = self.view.version or None
        if self.quick and self.view.token is None:
            return QuickMatch(game=self.quick, name=self.name)
        if self.spectator:
            return Watch(room=self.view.room, since=since)
        return Join(room=self.view.room, name=self.name, token=self.view.token, since=since)

    def _status(self, status: str) -> None:
        if (
            status.startswith("reconnecting")
            and not self.welcomed.is_set()
            and self.retrying is None
        ):
            self.unreachable = status.removeprefix("reconnecting: ")
        self.on_status(status)

    def _hello_refused(self, error: Error) -> None:
        """The server did not take this connection's hello. "Not now" (its storage is
        down, a process just started): connect again with backoff and ask again, however
        often it takes; the player's moves meanwhile wait for the rejoin (`_request`).
        Anything else is final: the seat is gone (`lost`)."""
        if error.code == ErrorCode.BAD_TOKEN and self._freed_in_lobby():
            # Away past the room's grace, a lobby seat is freed (given to the next comer):
            # back, take a new one, as a first join would.
            self.view.token = self.view.seat = None
            self.retrying = error
            reason = "your seat was freed while you were away (the lobby's grace): a new one"
            self._retry = asyncio.create_task(self.link.retry(reason))
        elif error.code in TRY_AGAIN:
            self.retrying = error
            reason = f"the server could not take us back yet: {error.message} ({error.code})"
            self._retry = asyncio.create_task(self.link.retry(reason))
        else:
            self.lost = error
            self.answered.set()

    @property
    def refused_back(self) -> Error | None:
        """The server's refusal to take this seat (or watch) back after a drop, which asking
        again cannot change (the room has expired, say); None while the room is ours."""
        return self.lost if self.welcomed.is_set() else None

    def _freed_in_lobby(self) -> bool:
        """This seat was ours in the lobby before the link went down (not a first join,
        whose stale token `start` deals with; not a spectator or a quick-match queue)."""
        view = self.view
        return (
            self.welcomed.is_set()
            and not self.spectator
            and not self.quick
            and view.phase == "lobby"
            and view.token is not None
        )

    async def start(self) -> None:
        """Connect (the link then lives in the background) and wait for the welcome.

        ConnectionError, with the reason, when the server cannot be reached at first
        or refuses the join. A remembered token the server no longer knows is dropped
        and the join tried once more without it.
        """
        while True:
            refusal = await self._connect_once()
            if refusal is None:
                return
            code, message = refusal
            if code == ErrorCode.BAD_TOKEN and self.view.token is not None:
                self.view.token = None
                self.errors.clear()
                self.lost = None
                self.link = self._link(self.link.url)
                continue
            raise JoinRefused(message, code)

    async def _connect_once(self) -> tuple[str, str] | None:
        self.unreachable = ""
        self.link.start()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ANSWER_TIMEOUT
        while not self.welcomed.is_set():
            if self.lost or self.unreachable or loop.time() > deadline:
                await self.link.close()
                refusal = self.lost or self.retrying
                if refusal is not None:
                    return refusal.code, f"{refusal.message} ({refusal.code})"
                return "", self.unreachable or f"no answer from {self.link.url}"
            await asyncio.sleep(0.02)
        return None

    async def close(self) -> None:
        await self.link.close()

    async def receive(self, msg: Message) -> None:
        self.view.feed(msg)
        if isinstance(msg, Queued):
            self._took_us()  # in the queue: the server took us; a match comes later
        elif isinstance(msg, Matched):
            self.on_token(msg.token)
            self.link.url = ws_url(self.server, msg.room)  # reconnects name the room
        elif isinstance(msg, Unqueued):
            self.unqueued.set()
        if isinstance(msg, Welcome):
            self.view.clock_offset = msg.server_time - time.time()
            if msg.token:
                self.on_token(msg.token)
            self._took_us()
        elif isinstance(msg, Accepted):
            self._answer(msg.seq, Outcome(True, moves=[msg.move]))
        elif isinstance(msg, Refused):
            self._answer(msg.seq, Outcome(False, msg.reason, code=msg.code))
        elif isinstance(msg, HintReply):
            if self.hints:
                outcome = (
                    Outcome(True, moves=[msg.move])
                    if msg.move
                    else Outcome(False, "the server has no hint from here")
                )
                self.hints.pop(0).set_result(outcome)
        elif isinstance(msg, Error):
            self.errors.append(msg)
            if msg.request == self.hello_type and not self.answered.is_set():
                self._hello_refused(msg)
            # Only the request the error names: an error for another one (a `ready`, the
            # hello's `join`) ahead of a move's answer said nothing about the move, which
            # may well be played; taking it as the move's refusal lost an accepted move.
            if msg.request in ("move", "undo") and msg.seq is not None:
                self._answer(msg.seq, Outcome(False, msg.message, code=msg.code))
            elif msg.request == "hint" and self.hints:
                self.hints.pop(0).set_result(Outcome(False, msg.message, code=msg.code))
        if self.view.gap:
            self.view.gap = False
            await self.link.send(Resync(since=None))
        self.on_change()

    def _took_us(self) -> None:
        self.lost = self.retrying = None
        self.answered.set()
        self.welcomed.set()

    def _answer(self, seq: int, outcome: Outcome) -> None:
        future = self.waiting.pop(seq, None)
        if future is not None and not future.done():
            future.set_result(outcome)

    # ------------------------------------------------------------ as a Session

    @property
    def allowed(self) -> Allowed:
        return Allowed(
            undo=self.view.allows("undo"),
            hint=self.view.allows("hints"),
            autoplay=self.view.engine is not None and self.view.game not in NO_AUTOPLAY,
        )

    def state(self) -> dict[str, Any] | None:
        return self.view.board

    def legal_moves(self) -> list[str] | None:
        return self.view.legal_moves()

    async def _request(self, make: Callable[[int], Message]) -> Outcome:
        """Send a numbered request and wait for its answer.

        A request the server dropped (rate limit), could not store (`unavailable`),
        refused `not_joined` because this connection's join is not done yet (or was
        refused for now and is being asked again), or that was lost with a connection is
        sent again under the same `seq` (after the rejoin): the server answers a repeat
        with the first answer, so nothing is ever played twice. A `stale_seq` refusal
        (another window on this seat used a higher seq) was not played: it goes again,
        numbered from the clock.
        """
        seq = self._next_seq()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ANSWER_TIMEOUT
        while True:
            future: asyncio.Future[Outcome] = loop.create_future()
            self.waiting[seq] = future
            await self.link.send(make(seq))
            deadline = await self._await_answer(future, deadline)
            if not future.done():
                self.waiting.pop(seq, None)
                if loop.time() >= deadline:
                    return Outcome(False, "no answer from the server (is the connection back?)")
                continue
            outcome = future.result()
            if loop.time() >= deadline:
                return outcome
            if outcome.code == ErrorCode.STALE_SEQ:
                seq = self._next_seq()
            elif outcome.code == ErrorCode.NOT_JOINED and not self.answered.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.answered.wait(), deadline - loop.time())
                if self.lost is not None or not self.answered.is_set():
                    return outcome
            elif outcome.code in (ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE):
                # Dropped by the rate limit, or the server could not reach its storage
                # (nothing changed): the same seq again, a little later.
                await asyncio.sleep(RATE_BACKOFF)
            else:
                return outcome

    async def _await_answer(self, future: asyncio.Future[Outcome], deadline: float) -> float:
        """Wait for `future` until it is time to send the request again (or give up),
        and return the deadline. While the link is down nothing is given up: the request
        is in the link's queue and goes out after the rejoin, so a move keyed during an
        outage is played then (the answer gets RESEND_AFTER at least, once the link is
        back), not reported "no answer" and then played all the same."""
        loop = asyncio.get_running_loop()
        while True:
            left = min(RESEND_AFTER, max(0.0, deadline - loop.time()))
            await asyncio.wait([future], timeout=left)
            if future.done() or self.link.connected.is_set() or self.link.is_closing():
                return deadline
            await self.link.connected.wait()
            deadline = max(deadline, loop.time() + RESEND_AFTER)  # time for the answer

    def _next_seq(self) -> int:
        # Above this window's last seq and, as every window on a seat counts from the
        # clock in milliseconds, above what a window opened later has used by now.
        self.seq = max(self.seq + 1, time.time_ns() // 1_000_000)
        return self.seq

    async def move(self, text: str) -> Outcome:
        return await self._request(lambda seq: MoveMsg(seq=seq, move=text))

    async def undo(self) -> Outcome:
        return await self._request(lambda seq: Undo(seq=seq))

    async def hint(self) -> Outcome:
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.hints.append(future)
        await self.link.send(Hint())
        try:
            return await asyncio.wait_for(future, ANSWER_TIMEOUT)
        except TimeoutError:
            return Outcome(False, "no hint came from the server")

    async def autoplay(self) -> Outcome:
        """The engine's safe moves, worked out here and sent one by one (the wire has no
        autoplay message: the server sees ordinary moves)."""
        engine = self.view.engine
        if engine is None:
            return Outcome(False, "autoplay needs the deal's seed")
        done: list[str] = []
        while True:
            probe = engine.copy()
            safe = probe.autoplay()
            if not safe:
                return Outcome(True, moves=done)
            outcome = await self.move(safe[0])
            if not outcome.ok:
                return Outcome(False, outcome.reason, moves=done)
            done.append(safe[0])

    # ------------------------------------------------------------ lobby and after

    async def ready(self, ready: bool = True) -> None:
        await self.link.send(Ready(ready=ready))

    async def start_now(self) -> None:
        await self.link.send(Start())

    async def resign(self) -> None:
        await self.link.send(Resign())

    async def rematch(self) -> None:
        await self.link.send(Rematch())

    async def cancel_quick(self, within: float = 5.0) -> bool:
        """Leave the quick-match queue: whether we are out of it. The server says which,
        `unqueued` (out) or a partner's `matched` that came first (False: seated, this
        seat races now); with no word within `within` seconds (the server out of reach),
        out: closing the socket leaves the queue too."""
        self.unqueued.clear()
        await self.link.send(QuickCancel())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not self.unqueued.is_set() and self.view.phase == "queue":
            if loop.time() > deadline:
                break
            await asyncio.sleep(0.02)
        return self.view.phase == "queue"

    async def leave(self) -> None:
        """Give the seat up (lobby only); the server answers nothing we still need."""
        await self.link.send(Leave())

    def race_seconds(self) -> float:
        """Seconds since the start, on the server's clock."""
        view = self.view
        if view.start_at is None or view.phase not in ("running", "finished"):
            return 0.0
        end = view.finished_at if view.finished_at is not None else view.server_now(time.time())
        return max(0.0, end - view.start_at)
