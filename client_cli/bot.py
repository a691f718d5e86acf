"""A bot that takes a seat and plays with the solver at a chosen pace.

It plans a whole winning line with `core.solve` (open games: it knows the deal
like any player). When no line is found, in Moojub (whose talon is secret during
a race: the solver would only guess), or when asked to, it plays simply: safe
moves, then foundation moves, then any move to a position it has not seen, and
`deal` last. It says which it uses. After the race it leaves, unless asked to
take rematches: then it votes for one as soon as another player does, and races
again, until every other player has gone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from client_cli.seat import ANSWER_TIMEOUT, JoinRefused, Seat
from client_cli.widgets import counted
from core import Game, solve

__all__ = ["Planner", "greedy_move", "play_race"]

SOLVE_BUDGET = 200_000
MIN_PACE = 0.05  # seconds between moves, at the fastest
RESOLVE_AFTER = 10  # simple moves after a fruitless solve before the next one
HIDDEN_TALON = frozenset({"moojub"})  # games whose talon a racer does not see


def greedy_move(game: Game, seen: set[Any]) -> str | None:
    """The fallback player's move: safe, then to a foundation, then to somewhere new."""
    legal = game.legal_moves()
    if not legal:
        return None
    probe = game.copy()
    safe = probe.autoplay()
    if safe:
        return safe[0]
    foundation = [m for m in legal if m != "deal" and m.split()[1].startswith("f")]
    if foundation:
        return foundation[0]
    for move in legal:
        if move == "deal":
            continue
        probe = game.copy()
        probe.apply(move)
        if probe.key() not in seen:
            return move
    return "deal" if "deal" in legal else None


class Planner:
    """Chooses the bot's next move, keeping a planned line while it stays valid."""

    def __init__(self, use_solver: bool = True) -> None:
        self.use_solver = use_solver
        self.line: list[str] = []
        self.seen: set[Any] = set()
        self.mode = "solver" if use_solver else "simple player"
        self.rest = 0  # moves to play simply before asking the solver again
        self.verdict: str | None = None  # the solver's last answer, in words

    async def next_move(self, game: Game, hidden: bool) -> str | None:
        self.seen.add(game.key())
        if self.line:
            return self.line.pop(0)
        if self.use_solver and not hidden and self.rest == 0:
            found = await asyncio.to_thread(solve, game.copy(), budget=SOLVE_BUDGET)
            if found.result == "won" and found.moves:
                self.verdict = "playing the solver's winning line"
                self.line = list(found.moves)
                return self.line.pop(0)
            self.verdict = "no winning line found: playing a simple player"
            self.rest = RESOLVE_AFTER  # no line within the budget: a while without
        self.rest = max(0, self.rest - 1)
        # Moojub's talon is secret in a race: the solver would be guessing, so play simply.
        return greedy_move(game, self.seen)

    def mode_for(self, game: str) -> str:
        """How it will play `game`, in words (Moojub: the simple player, see above)."""
        if self.use_solver and game in HIDDEN_TALON:
            return "simple player (Moojub's talon is secret in a race)"
        return self.mode

    def forget(self) -> None:
        """The last move was refused: plan again from the position."""
        self.line = []


async def play_race(
    seat: Seat,
    pace: float,
    say: Callable[[str], None],
    use_solver: bool = True,
    rematch: bool = False,
) -> int:
    """Join, say ready, race until the end, print the results; with `rematch`, race the
    rematches the other players ask for too. Returns an exit status."""
    seat.on_status = _outages(seat, say)
    await seat.start()
    try:
        view = seat.view
        # The welcome gives the seat; the room (its game) comes with the snapshot after it.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(ANSWER_TIMEOUT):
                while not view.game:
                    await asyncio.sleep(0.02)
        number = "?" if view.seat is None else view.seat + 1  # people count seats from 1
        mode = Planner(use_solver).mode_for(view.game)
        say(f"joined room {view.room} as seat {number}; playing with the {mode}")
        while True:
            status = await _race(seat, Planner(use_solver), pace, say)
            if not rematch or not await _rematch(seat, say):
                return status
    finally:
        await seat.close()  # also when stopped (Ctrl+C): the room sees the bot go


def _outages(seat: Seat, say: Callable[[str], None]) -> Callable[[str], None]:
    """The link's news for the bot's log: a line when it drops, with why, and one when it
    is back (not each attempt between: a server down for minutes would fill the log)."""
    down = False

    def status(line: str) -> None:
        nonlocal down
        if line.startswith("reconnecting") and seat.welcomed.is_set() and not down:
            down = True
            say(line)
        elif line == "connected" and down:
            down = False
            say("reconnected")

    return status


def _ending(row: dict[str, Any]) -> str:
    """How a racer's race ended, for their line of the results: won, out (resigned,
    forfeit) or stuck; nothing for one still racing at the end (the time limit)."""
    if row.get("won"):
        return " (won)"
    if row.get("out"):
        return f" ({row['out']})"
    return " (stuck)" if row.get("stuck") else ""


def _still_seated(seat: Seat) -> None:
    """JoinRefused when the server will not take the seat back after a drop (the room has
    expired, say): every move would be refused from then on, and no phase would come."""
    refused = seat.refused_back
    if refused is not None:
        raise JoinRefused(
            f"the server did not take this seat back: {refused.message} ({refused.code})",
            refused.code,
        )


async def _rematch(seat: Seat, say: Callable[[str], None]) -> bool:
    """After the end: vote for a rematch once another player has, and wait for the new
    round (True); False when every other player has gone (or there is no other), or the
    room has no rematch (a ghost race, a tournament's race, a daily attempt)."""
    view = seat.view
    if view.no_rematch:  # (a ghost race's ghost never leaves, nor votes)
        say(f"leaving: {view.no_rematch}")
        return False
    voted = False
    while view.phase == "finished":
        _still_seated(seat)
        others = [r for s, r in view.racers.items() if s != view.seat]
        if not any(r.connected for r in others):  # (a vote from one who left cannot win)
            say("the others have gone: leaving")
            return False
        if not voted and any(r.rematch for r in others):
            voted = True
            say("a rematch was asked for: voting for it")
            await seat.rematch()
        await asyncio.sleep(0.1)
    return True


async def _race(seat: Seat, planner: Planner, pace: float, say: Callable[[str], None]) -> int:
    # The server allows 30 messages a second, sustained: stay well under it.
    pace = max(pace, MIN_PACE)
    view = seat.view
    await seat.ready(True)
    while view.phase != "running":
        _still_seated(seat)
        if view.phase == "finished":
            break
        await asyncio.sleep(0.05)
    if view.phase == "running":
        say(f"race started: {view.game} {'#' + str(view.seed) if view.seed else ''}".rstrip())
    reported = -1
    verdict = None  # joining, the bot only knew the game: the deal's verdict comes here
    out = None
    while view.phase == "running":
        _still_seated(seat)
        me, engine = view.me, view.engine
        if me is not None and me.out and me.out != out:  # (forfeit: away past the grace)
            out = me.out
            say(f"out of the race: {out}")
        if me is None or engine is None or me.won or me.out or engine.won:
            await asyncio.sleep(0.1)
            continue
        move = await planner.next_move(engine, hidden=view.seed is None)
        if planner.verdict is not None and planner.verdict != verdict:
            verdict = planner.verdict
            say(verdict)
        if move is None:
            say(f"stuck at {me.progress}/{view.total} cards")
            while view.phase == "running":
                _still_seated(seat)
                await asyncio.sleep(0.1)
            break
        outcome = await seat.move(move)
        if not outcome.ok:
            _still_seated(seat)
            planner.forget()
            out_now = outcome.code == "player_out" and view.me is not None and view.me.out
            if not out_now:  # (out: said once, above, with why)
                say(f"{move} refused: {outcome.reason}")
            if outcome.code in ("not_running", "player_out") and not out_now:
                break
            await asyncio.sleep(pace)
            continue
        if me.progress // 10 != reported:
            reported = me.progress // 10
            say(f"{me.progress}/{view.total} cards after {counted(me.moves, 'move')}")
        if view.me is not None and view.me.won:  # (re-read: the move just changed it)
            say(f"finished in {counted(me.moves, 'move')}")
        await asyncio.sleep(pace)
    while view.phase != "finished":
        _still_seated(seat)
        await asyncio.sleep(0.1)
    if view.ended_by:
        say(f"race over: {view.ended_by}")
    for row in view.results:
        say(
            f"#{row.get('rank')} {row.get('name')}: {row.get('progress')}/{view.total} cards, "
            + counted(int(row.get("moves") or 0), "move")
            + _ending(row)
        )
    return 0
