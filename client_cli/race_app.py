"""The race screen: lobby, countdown, your board, everyone's bars, results.

Built on the practice screen (same board, same keys) over a `Seat`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from client_cli.cards import CardStyle
from client_cli.help_screen import PLAY_KEYS, WATCH_KEYS, HelpScreen
from client_cli.play_app import PlayApp
from client_cli.race import Racer, RaceView
from client_cli.seat import JoinRefused, Seat
from client_cli.widgets import PlayerLine, RaceBars, clock, duration, splits_text
from core import GAMES
from core import splits as core_splits
from protocol import ErrorCode

__all__ = [
    "RaceApp",
    "ResultsScreen",
    "connect_or_exit",
    "player_lines",
    "racer_status",
    "rematch_text",
    "results_table",
    "watch_instead",
]


# Requests a key press sends whose refusal would otherwise go unseen (a move's is shown by
# the move line, a join's by the status line).
KEY_REQUESTS = frozenset({"ready", "start", "rematch", "resign", "leave", "quick_cancel"})


# Where a player is back after a reconnection, by the phase of the room.
BACK_IN = {
    "queue": "still looking for an opponent",
    "lobby": "back in the lobby",
    "countdown": "the race is about to start",
    "running": "the race goes on",
    "finished": "the race is over",
}


def player_lines(view: RaceView, now: float, style_you: bool = True) -> list[PlayerLine]:
    """The bars' rows from the room: time runs until a racer is done."""
    lines = []
    for seat, racer in sorted(view.racers.items()):
        seconds: float | None = 0.0
        if view.start_at is not None and view.phase in ("running", "finished"):
            end = view.clock_end(racer, now)
            seconds = None if end is None else end - view.start_at
        lines.append(
            PlayerLine(
                name=racer.shown_name,
                progress=racer.progress,
                total=view.total,
                moves=racer.moves,
                seconds=seconds,
                status=racer_status(view, racer, now),
                you=style_you and seat == view.seat,
                splits=tuple(racer.splits) if view.phase in ("running", "finished") else (),
                best=view.best if seat == view.seat else (),
            )
        )
    return lines


def racer_status(view: RaceView, racer: Racer, now: float) -> str:
    """What the bars say after a racer's time: ready, finished, offline for how long..."""
    if view.phase == "lobby":
        return lobby_status(racer)
    if racer.status == "offline" and racer.grace_until is not None:
        left = duration(racer.grace_until - view.server_now(now))
        if view.phase == "finished":  # everyone else voted: the rematch waits that long
            return f"offline, rematch without them in {left}"
        return f"offline, out in {left}"
    if view.phase == "finished" and racer.rematch:
        return ", ".join(filter(None, (racer.status, "rematch ✓")))
    return racer.status


def rematch_text(view: RaceView) -> str:
    """Who voted for a rematch, for everyone in the room to see."""
    votes, total = view.rematch_votes()
    me = view.me
    if me is None:  # a spectator
        return f"rematch: {votes}/{total} players voted" if votes else ""
    if view.no_rematch:
        return view.no_rematch
    others = [r.name for s, r in sorted(view.racers.items()) if r.rematch and s != view.seat]
    if me is not None and me.rematch:
        # One who has left (a bot leaves after its race) cannot vote: say so.
        waiting = [
            r.name + ("" if r.connected else " (gone)")
            for s, r in sorted(view.racers.items())
            if not r.rematch
        ]
        if not waiting:
            return f"rematch: {votes}/{total} votes, a new round is coming"
        return f"rematch: your vote is in ({votes}/{total}); waiting for {', '.join(waiting)}"
    if others:
        wants = "wants" if len(others) == 1 else "want"
        return f"{' and '.join(others)} {wants} a rematch ({votes}/{total}): m to vote"
    return "m votes for a rematch"


def lobby_status(racer: Racer) -> str:
    if racer.ghost:
        return "ghost"
    if not racer.connected:
        return "offline"
    return "ready" if racer.ready else "not ready"


def results_table(view: RaceView) -> Table:
    """The final ranking: place, name, how it ended, cards, moves."""
    table = Table(
        title=" · ".join(filter(None, ("Results", view.deal, view.ended_by))), expand=False
    )
    for name, justify in (("#", "right"), ("player", "left"), ("result", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("cards", justify="right")
    table.add_column("moves", justify="right")
    marks = core_splits.marks(view.game) if view.game in GAMES else (13, 26, 39, 52)
    table.add_column("splits at " + " ".join(map(str, marks)) + " cards", justify="right")
    for row in view.results:
        if row.get("won"):
            result = f"finished {clock(float(row.get('time') or 0))}"
        elif row.get("out"):
            result = str(row["out"])
        elif row.get("stuck"):
            result = "stuck"
        else:
            result = "unfinished"
        you = row.get("seat") == view.seat
        table.add_row(
            str(row.get("rank", "")),
            Text(
                str(row.get("name", ""))
                + (" (bot)" if row.get("bot") else "")
                + (" (you)" if you else ""),
                style="bold" if you else "",
            ),
            result,
            f"{row.get('progress', 0)}/{view.total}",
            str(row.get("moves", 0)),
            splits_text(row.get("splits") or [None] * 4),
        )
    return table


async def connect_or_exit(app: App[Any], seat: Seat) -> None:
    """Join (or watch) the room; if the server says no, leave with its reason (and, for a
    full room or a race already running, how to watch it instead)."""
    try:
        await seat.start()
    except JoinRefused as error:
        command = "watch" if seat.spectator else "play"
        message = f"solrace {command}: {error}"
        if error.code in (ErrorCode.ROOM_FULL, ErrorCode.ROOM_CLOSED):
            message += f": {watch_instead(seat.view.room)}"
        app.exit(return_code=1, message=message)


def watch_instead(room: str) -> str:
    return f"watch it instead: solrace watch {room}"


class ResultsScreen(ModalScreen[str]):
    """The results table over the board; m votes for a rematch, Esc shows the board."""

    DEFAULT_CSS = """
    ResultsScreen { align: center middle; }
    ResultsScreen > Static { width: auto; max-width: 78; border: round $success; padding: 0 1;
                             background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "rematch", "rematch"),
        Binding("escape,enter", "dismiss('board')", "back to the board"),
        Binding("q", "dismiss('quit')", "quit"),
        Binding("question_mark", "rules", "rules"),
    ]

    def __init__(
        self,
        body: RenderableType,
        game: str,
        player: bool = True,
        votes: str = "",
        rematch: bool = True,
    ) -> None:
        """`rematch`: the room has one (a ghost race, a tournament's race and a daily
        attempt have none: the line `votes` says so)."""
        super().__init__()
        self.body = body
        self.game = game
        self.player = player
        self.rematch = rematch
        self.content = Static()
        self.show_votes(votes)

    def action_rematch(self) -> None:
        if self.player and self.rematch:
            self.dismiss("rematch")

    def action_rules(self) -> None:
        self.app.push_screen(HelpScreen(self.game, PLAY_KEYS if self.player else WATCH_KEYS))

    def compose(self) -> ComposeResult:
        yield self.content

    def show_votes(self, votes: str) -> None:
        """The rematch votes as they come in (the table itself does not change)."""
        keys = "Esc the board" if self.player else "Esc the boards"
        if self.player and self.rematch:
            keys = "m rematch · " + keys
        keys += " · ? rules · q quit"
        lines = [Text(line, style=style) for line, style in ((votes, "bold"), (keys, "dim"))]
        # One Static: it measures the table's width (Statics side by side in a container
        # would take the width of the widest plain line).
        self.content.update(Group(self.body, *(t for t in lines if t.plain)))


class RaceApp(PlayApp):
    """A seat in a race."""

    def __init__(self, seat: Seat, style: CardStyle | None = None, notice: str = "") -> None:
        """`notice`: a line for the status bar once connected (who this terminal plays as)."""
        self.seat = seat  # first: the footer, drawn by PlayApp.__init__, reads it
        super().__init__(seat, f"room {seat.view.room}", style, queued=True)
        self.bars = RaceBars(self.card_style, id="bars")
        self.link_status = ""
        self.results_shown_for: int | None = None
        self.results_screen: ResultsScreen | None = None
        self.round_shown = 1
        self.quit_asked = False
        self.away_since: float | None = None  # when the link went down (monotonic)
        # The server's refusal of the last key press (ready, start, rematch...), shown
        # until the next round: what was asked was not done, and the player should know.
        self.refusal = ""
        self.errors_seen = 0
        self.notice = notice
        seat.on_change = self.on_seat_change
        seat.on_status = self.on_link_status

    def compose_extra(self) -> ComposeResult:
        yield self.bars

    @property
    def game(self) -> str:
        return self.seat.view.game

    @property
    def seat_lost(self) -> bool:
        """The server will not take this seat back (a rejoin refused for good): nothing
        but quitting (and the rules) can be done any more."""
        return self.seat.refused_back is not None

    def placeholder(self) -> str:
        """The footer offers what can be done now, in this phase of the race."""
        view = self.seat.view
        me = view.me
        if self.seat_lost:
            return "? rules · q quit"
        if view.phase == "queue":
            return "waiting for an opponent · ? rules · q gives up"
        if view.phase == "lobby":
            start = " · s start now" if view.host else ""
            return f"r ready{start} · ? rules · q leave the room"
        if view.phase == "countdown":
            return "get ready · ? rules · q quit"
        if view.phase == "finished":
            return "? rules · q quit" if view.no_rematch else "m rematch · ? rules · q quit"
        if me is not None and (me.out or me.won):
            return "watch the others finish · ? rules · q quit"
        return super().placeholder()

    async def on_mount(self) -> None:
        await super().on_mount()
        self.set_interval(0.2, self.tick)
        await connect_or_exit(self, self.seat)
        if self.notice:
            self.say(self.notice, "bold yellow")
            self.redraw()

    async def on_unmount(self) -> None:
        await self.seat.close()

    async def action_quit(self) -> None:
        """Quitting in the lobby frees the seat; in the queue it cancels, and stays when
        the server seated us first; mid-race it asks once more, since the seat is only
        kept for the room's grace period."""
        view = self.seat.view
        me = view.me
        racing = view.phase in ("countdown", "running") and me is not None and not me.status
        if racing and not self.quit_asked:
            self.quit_asked = True
            grace = view.settings.get("grace")
            kept = f" (your seat is kept {duration(grace)} if you come back)" if grace else ""
            self.say(f"q or ctrl+q again to leave the race{kept}", "bold yellow")
            self.redraw()
            return
        if view.phase == "lobby" and self.seat.link.connected.is_set():
            await self.seat.leave()
        elif (
            view.phase == "queue"
            and self.seat.link.connected.is_set()
            and not await self.seat.cancel_quick()
        ):
            self.say("an opponent was found as you cancelled: you are in the race", "bold yellow")
            self.redraw()
            return
        self.exit()

    # ------------------------------------------------------------ updates

    def on_seat_change(self) -> None:
        errors = self.seat.errors
        for error in errors[self.errors_seen :]:
            if error.request in KEY_REQUESTS:
                self.say(f"✗ {error.message}", "bold red")
                if self.seat.view.phase == "finished":  # over the rematch line
                    self.refusal = f"✗ {error.message}"
        self.errors_seen = len(errors)
        if self.is_running:
            self.redraw()

    def votes_text(self) -> str:
        return self.refusal or rematch_text(self.seat.view)

    def on_link_status(self, status: str) -> None:
        if status == "connected" and self.seat.link.drops:
            self.link_status = "reconnected"
            self.away_since = None
            self.set_timer(3.0, self.forget_reconnected)
        elif status.startswith("reconnecting"):
            self.link_status = status
            if self.away_since is None:
                self.away_since = time.monotonic()
        if self.is_running:
            self.redraw()

    def seat_kept(self) -> str:
        """While the link is down: how long the room keeps the seat (its grace), counted
        from the drop; past it, the server may have given the seat away or forfeited it."""
        view = self.seat.view
        if view.phase == "queue":
            return ""
        grace = view.settings.get("grace")
        racing = view.phase != "finished" and not (view.me is not None and view.me.status)
        if not racing or not grace or self.away_since is None:
            return "(your seat is kept)"
        left = grace - (time.monotonic() - self.away_since)
        if left > 0:
            return f"(your seat is kept {duration(left + 0.999)} more)"
        return f"(away past the room's {duration(grace)} grace: you may be out)"

    def forget_reconnected(self) -> None:
        if self.link_status == "reconnected":
            self.link_status = ""
            self.redraw()

    def tick(self) -> None:
        view = self.seat.view
        self.bars.update_players(player_lines(view, time.time()))
        if self.link_status.startswith("reconnecting"):  # the grace counts down
            self.status_bar.update(self.status_text(view.board))
        if view.phase == "countdown":
            self.board_view.placeholder = self.countdown_text()
            self.board_view.refresh()

    def elapsed(self) -> float:
        me = self.seat.view.me
        view = self.seat.view
        if me is not None and me.finished_at is not None and view.start_at is not None:
            return me.finished_at - view.start_at
        return self.seat.race_seconds()

    def redraw(self) -> None:
        view = self.seat.view
        if view.round != self.round_shown:
            self.new_round()
        board = self.board_view
        if view.phase == "countdown":
            board.placeholder = self.countdown_text()
        elif view.board is None:
            board.placeholder = self.lobby_text()
        self.bars.update_players(player_lines(view, time.time()))
        self.bars.display = view.phase != "queue"  # nobody to show before the match
        super().redraw()
        if not self.seat_lost:  # the phase's own keys, while the seat is still ours
            self.move_input.quick_letters = {"lobby": "rs", "finished": "m"}.get(view.phase, "")
        if view.phase == "finished" and self.results_shown_for != view.round:
            self.results_shown_for = view.round
            self.results_screen = ResultsScreen(
                results_table(view),
                view.game,
                votes=self.votes_text(),
                rematch=self.rematch_offered,
            )
            self.push_screen(self.results_screen, self.after_results)
        elif self.results_screen is not None:
            self.results_screen.rematch = self.rematch_offered
            self.results_screen.show_votes(self.votes_text())

    @property
    def rematch_offered(self) -> bool:
        """The room has rematches and this seat is still ours to vote with."""
        return not self.seat.view.no_rematch and not self.seat_lost

    def new_round(self) -> None:
        """A rematch began: nothing of the last round stays on the screen."""
        self.round_shown = self.seat.view.round
        self.message = Text()
        self.selected = None
        self.hinted = ()
        self.quit_asked = False
        self.refusal = ""
        if self.results_screen is not None:
            if self.screen is self.results_screen:
                self.results_screen.dismiss("board")
            self.results_screen = None

    async def after_results(self, choice: str | None) -> None:
        self.results_screen = None
        if choice == "rematch" and self.seat.view.no_rematch:
            self.refusal = self.seat.view.no_rematch
            self.redraw()
        elif choice == "rematch":
            self.refusal = ""
            await self.seat.rematch()
        elif choice == "quit":
            self.exit()

    def countdown_text(self) -> Text:
        view = self.seat.view
        left = 0.0 if view.start_at is None else view.start_at - view.server_now(time.time())
        text = Text(f"\n\n   The race starts in {max(0, int(left + 0.999))}…", style="bold")
        text.append(f"\n\n   {view.game.capitalize()}: get ready.", style="dim")
        return text

    def lobby_text(self) -> Text:
        view = self.seat.view
        text = Text()
        if view.phase == "queue":
            text.append(f"\n  Looking for an opponent for {view.game.capitalize()}…", style="bold")
            text.append("\n\n  The race starts as soon as someone else asks for a quick match")
            text.append(f"\n  (solrace play --quick --game {view.game}). q gives up.")
            return text
        text.append(f"\n  Room {view.room}", style="bold")
        if view.game:
            text.append(f" · {view.game.capitalize()}")
        seats = view.settings.get("seats")
        text.append(f" · {len(view.racers)}/{seats} seats" if seats else "")
        rules = [
            "rated" if view.settings.get("rated") else "casual",
            "undo" if view.allows("undo") else "no undo",
            "hints" if view.allows("hints") else "no hints",
        ]
        limit, delay = view.settings.get("time_limit"), view.settings.get("spectator_delay")
        if limit:
            rules.append(f"time limit {clock(limit)}")
        if delay:
            rules.append(f"spectators {delay:g} s behind")
        text.append(f"\n  {', '.join(rules)}\n\n", style="dim")
        if isinstance(seats, int) and len(view.racers) >= seats:  # nobody else can join
            text.append(f"  Every seat is taken: friends watch with  solrace watch {view.room}\n\n")
        else:
            text.append(f"  Friends join with:  solrace play {view.room}\n")
            text.append(f"  Spectators watch:   solrace watch {view.room}\n\n")
        if view.phase == "lobby" and not self.seat_lost:
            text.append("  r (or space) ready/not ready", style="bold")
            if view.host:
                text.append(" · s start now (you are the host)", style="bold")
        return text

    def title_parts(self, state: dict[str, Any] | None) -> list[str]:
        view = self.seat.view
        where = f"room {view.room}" if view.room else "quick match"
        head = f"{view.game.capitalize()} · {where}" if view.game else self.heading
        if view.round > 1:
            head += f" · round {view.round}"
        if state is None:
            return [head, view.phase]
        parts = super().title_parts(state)
        parts[0] = head
        if view.ends_at is not None and view.phase == "running":
            left = view.ends_at - view.server_now(time.time())
            parts.append(f"{clock(left)} left")
        return parts

    def status_text(self, state: dict[str, Any] | None) -> Text:
        view = self.seat.view
        lost = self.seat.refused_back
        if lost is not None:
            return Text(
                f" ✗ the server did not take this seat back: {lost.message} ({lost.code}). q quits",
                style="bold red",
            )
        if self.link_status.startswith("reconnecting"):
            return Text(f" ⟳ {self.link_status} {self.seat_kept()}", style="bold yellow")
        if self.link_status == "reconnected":
            where = BACK_IN.get(view.phase)
            return Text(" ✓ reconnected" + (f": {where}" if where else ""), style="bold green")
        me = view.me
        if view.phase == "finished":
            place = next((r.get("rank") for r in view.results if r.get("seat") == view.seat), None)
            where = f"you placed #{place}" if place else "race over"
            over = f"Race over ({view.ended_by})" if view.ended_by else "Race over"
            return Text(f" ⚑ {over}: {where} · {self.votes_text()}", style="bold green")
        if me is not None and me.won:
            return Text(
                f" ★ Finished in {me.moves} moves, {clock(self.elapsed())}!"
                " Waiting for the others…",
                style="bold green",
            )
        if me is not None and me.out:
            return Text(f" You are out of the race ({me.out}).", style="yellow")
        return super().status_text(state)

    # ------------------------------------------------------------ keys

    def commands(self) -> dict[str, Callable[[], Awaitable[None]]]:
        return {
            **super().commands(),
            "ready": lambda: self.seat.ready(True),
            "start": self.quick_start,
            "resign": self.resign,
            "rematch": lambda: self.after_results("rematch"),
        }

    async def quick_start(self) -> None:
        await self.quick("s")

    async def resign(self) -> None:
        """Typed in full on purpose: no single key gives a race away."""
        if self.seat.view.phase != "running":
            self.say("there is no race to resign from")
        else:
            await self.seat.resign()
            self.say("you resigned; the others race on")
        self.redraw()

    async def quick(self, key: str) -> None:
        view = self.seat.view
        if self.seat_lost and key not in ("question_mark", "q"):
            self.redraw()  # the status line says why, and that q quits
            return
        if view.phase == "lobby" and key in ("r", "space", "enter"):
            me = view.me
            await self.seat.ready(not (me.ready if me else False))
            return
        if view.phase == "lobby" and key == "s":
            if view.host:
                await self.seat.start_now()
            else:
                self.say("only the host (first seat) can start early; press r when ready")
                self.redraw()
            return
        if view.phase == "finished" and key == "m":
            await self.after_results("rematch")
            return
        if key in ("question_mark", "q"):
            await super().quick(key)
            return
        me = view.me
        if view.phase != "running":
            self.say("the race has not started" if view.phase != "finished" else "race over")
        elif me is not None and (me.out or me.won):
            self.say("you finished: the others race on" if me.won else "you are out of the race")
        else:
            await super().quick(key)
            return
        self.redraw()
