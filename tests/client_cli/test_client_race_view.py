"""The client's picture of a room, fed protocol messages directly (no network)."""

from __future__ import annotations

from typing import Any

from client_cli.race import RaceView, visible_game
from client_cli.race_app import racer_status
from client_cli.widgets import PlayerLine
from core import new_game
from protocol import (
    Accepted,
    Countdown,
    NewRound,
    PlayerJoined,
    PlayerOut,
    PlayerReady,
    Presence,
    Progress,
    RaceFinished,
    RaceStarted,
    RematchVote,
    Snapshot,
    Welcome,
)

ROOM = {
    "id": "R1",
    "game": "shaula",
    "status": "lobby",
    "seats": 3,
    "undo": False,
    "hints": True,
    "players": [{"seat": 0, "name": "ann", "ready": True}, {"seat": 2, "name": "cy"}],
}


def joined() -> RaceView:
    view = RaceView(room="R1")
    view.feed(Welcome(room="R1", role="player", server_time=100.0, seat=2, token="t"))
    view.feed(Snapshot(version=4, room=ROOM))
    return view


def test_welcome_and_snapshot_give_seat_rules_and_racers() -> None:
    view = joined()
    assert (view.seat, view.token, view.version) == (2, "t", 4)
    assert not view.allows("undo") and view.allows("hints")
    assert {s: r.name for s, r in view.racers.items()} == {0: "ann", 2: "cy"}
    assert view.racers[0].ready and not view.host  # the host is the lowest seat


def test_lobby_events_and_duplicates() -> None:
    view = joined()
    view.feed(PlayerJoined(version=5, at=1.0, seat=1, name="bo"))
    view.feed(PlayerReady(version=6, at=1.0, seat=1, ready=True))
    view.feed(PlayerReady(version=6, at=1.0, seat=1, ready=False))  # a replay: ignored
    assert view.racers[1].ready and view.version == 6 and not view.gap
    view.feed(Presence(version=8, at=1.0, seat=1, connected=False, grace_until=31.0))
    assert view.gap and view.racers[1].status == "offline"
    assert racer_status(view, view.racers[1], now=11.0) == "offline"  # the lobby: no clock
    view.phase = "running"
    assert racer_status(view, view.racers[1], now=11.0) == "offline, out in 20 s"
    view.phase = "finished"  # the rematch waits for them no longer than that
    assert racer_status(view, view.racers[1], now=11.0) == "offline, rematch without them in 20 s"
    view.phase = "running"
    view.feed(Presence(version=9, at=2.0, seat=1, connected=True))
    assert view.racers[1].grace_until is None and racer_status(view, view.racers[1], 11.0) == ""


def test_own_moves_replay_on_a_local_engine_once() -> None:
    view = joined()
    view.feed(Countdown(version=5, at=1.0, start_at=4.0))
    assert view.phase == "countdown" and view.start_at == 4.0
    view.feed(RaceStarted(version=6, at=4.0, game="shaula", seed=2))
    assert view.board is not None and view.legal_moves() == new_game("shaula", 2).legal_moves()
    view.feed(Accepted(seq=1, move="t2 f1", progress=1, moves=1, won=False, stuck=False, version=7))
    # The same move comes back as our own progress event: not applied twice.
    view.feed(
        Progress(
            version=7, at=5.0, seat=2, progress=1, moves=1, won=False, stuck=False, move="t2 f1"
        )
    )
    assert view.board is not None and view.board["piles"]["f1"] == ["AD"]
    assert view.board["moves"] == 1 and view.racers[2].progress == 1
    view.feed(Accepted(seq=2, move="undo", progress=0, moves=2, won=False, stuck=False, version=8))
    assert view.board["piles"]["f1"] == [] and view.board["moves"] == 2


def test_a_snapshot_mid_race_replays_the_player_moves() -> None:
    view = RaceView(room="R1")
    view.feed(Welcome(room="R1", role="player", server_time=0.0, seat=0))
    room = dict(ROOM, status="running", seed=2)
    game = new_game("shaula", 2)
    game.apply("t2 f1")
    view.feed(Snapshot(version=9, room=room, board=game.state("player"), moves=["t2 f1"]))
    assert view.engine is not None and view.engine.history == ["t2 f1"]
    assert view.phase == "running"


def test_moojub_boards_come_from_the_server() -> None:
    view = joined()
    board = new_game("moojub", 5).state(view="player")
    view.feed(RaceStarted(version=5, at=0.0, game="moojub", board=board))
    assert view.seed is None and view.board == board
    assert view.legal_moves() == new_game("moojub", 5).legal_moves()
    after = new_game("moojub", 5)
    after.apply("deal")
    accepted = Accepted(
        seq=1,
        move="deal",
        progress=0,
        moves=1,
        won=False,
        stuck=False,
        version=6,
        board=after.state(view="player"),
    )
    view.feed(accepted)
    assert view.board is not None and view.board["talon_count"] == 44


def test_visible_game_lists_the_moves_of_a_hidden_talon_view() -> None:
    game = new_game("moojub", 9)
    assert visible_game(game.state(view="player")).legal_moves() == game.legal_moves()


def test_opponents_progress_out_and_the_end() -> None:
    view = joined()
    view.feed(RaceStarted(version=5, at=10.0, game="shaula", seed=2))
    view.feed(Progress(version=6, at=20.0, seat=0, progress=52, moves=99, won=True, stuck=False))
    view.feed(PlayerOut(version=7, at=21.0, seat=2, reason="resigned"))
    assert view.racers[0].status == "finished" and view.racers[0].finished_at == 20.0
    assert view.racers[2].status == "resigned"
    results = [{"rank": 1, "seat": 0, "name": "ann", "won": True}]
    view.feed(RaceFinished(version=8, at=22.0, results=results, seed=2, reason="all done"))
    assert view.phase == "finished" and view.results == results
    view.feed(NewRound(version=9, at=23.0, round=2))
    assert view.phase == "lobby" and view.round == 2 and view.board is None


def test_spectators_replay_every_board_including_undo() -> None:
    view = RaceView(room="R1", role="spectator")
    view.feed(Snapshot(version=1, room=ROOM))
    view.feed(RaceStarted(version=2, at=0.0, game="stalactites", seed=3))
    legal = new_game("stalactites", 3).legal_moves()[0]
    view.feed(
        Progress(version=3, at=1.0, seat=2, progress=0, moves=1, won=False, stuck=False, move=legal)
    )
    assert view.boards[2]["moves"] == 1 and view.boards[0]["moves"] == 0
    view.feed(
        Progress(
            version=4, at=1.0, seat=2, progress=0, moves=2, won=False, stuck=False, move="undo"
        )
    )
    assert view.boards[2]["piles"] == view.boards[0]["piles"] and not view.gap


def test_clocks_stop_at_the_end_even_for_a_late_spectator() -> None:
    view = joined()
    view.feed(RaceStarted(version=5, at=10.0, game="shaula", seed=2))
    ann, cy = view.racers[0], view.racers[2]
    assert view.clock_end(cy, local_now=50.0) == 50.0 + view.clock_offset  # still racing
    results = [
        {"rank": 1, "seat": 0, "name": "ann", "won": True, "time": 30.5},
        {"rank": 2, "seat": 2, "name": "cy", "won": False, "time": None},
    ]
    view.feed(RaceFinished(version=6, at=60.0, results=results, seed=2, reason="time_up"))
    assert view.clock_end(ann, local_now=500.0) == 40.5
    assert view.clock_end(cy, local_now=500.0) == 60.0
    late = RaceView(room="R1", role="spectator")
    room = dict(ROOM, status="finished", start_at=10.0, finished_at=60.0, results=results)
    room["players"] = [dict(p, won=p["seat"] == 0) for p in ROOM["players"]]  # type: ignore[attr-defined]
    late.feed(Snapshot(version=6, room=room))
    assert late.clock_end(late.racers[0], 500.0) == 40.5
    assert late.clock_end(late.racers[2], 500.0) == 60.0


def test_a_winner_seen_first_in_a_snapshot_mid_race_keeps_their_time() -> None:
    # Back in a race (or watching it) after ann won: no results yet, but her last split
    # is her finishing time, as the bars of everyone who saw her win say it.
    late = RaceView(room="R1", role="spectator")
    room = dict(ROOM, status="running", start_at=10.0)
    room["players"] = [
        dict(ROOM["players"][0], won=True, progress=52, splits=[5.0, 12.0, 20.0, 30.5]),  # type: ignore[index]
        dict(ROOM["players"][1], progress=3, splits=[None] * 4),  # type: ignore[index]
    ]
    late.feed(Snapshot(version=6, room=room))
    assert late.clock_end(late.racers[0], 500.0) == 40.5
    assert late.clock_end(late.racers[2], 500.0) == 500.0 + late.clock_offset


def test_rematch_votes_are_seen_and_a_new_round_starts_clean() -> None:
    view = joined()
    view.feed(RaceStarted(version=5, at=10.0, game="shaula", seed=2))
    view.feed(Accepted(seq=1, move="t2 f1", progress=1, moves=1, won=False, stuck=False, version=6))
    view.feed(Progress(version=7, at=20.0, seat=0, progress=52, moves=99, won=True, stuck=False))
    view.feed(PlayerOut(version=8, at=21.0, seat=2, reason="resigned"))
    results = [{"rank": 1, "seat": 0, "name": "ann", "won": True, "time": 10.0}]
    view.feed(RaceFinished(version=9, at=22.0, results=results, seed=2, reason="all_done"))
    view.feed(RematchVote(version=10, at=23.0, seat=0))
    assert view.racers[0].rematch and not view.racers[2].rematch
    assert view.rematch_votes() == (1, 2)
    view.feed(RematchVote(version=11, at=23.0, seat=2))
    view.feed(NewRound(version=12, at=24.0, round=2))
    assert view.phase == "lobby" and view.round == 2
    assert view.board is None and view.engine is None and view.results == []
    assert view.finish_reason == "" and view.finished_at is None and view.start_at is None
    for racer in view.racers.values():
        assert (racer.progress, racer.moves, racer.won, racer.out) == (0, 0, False, None)
        assert racer.status == "" and not racer.rematch and racer.finished_at is None
    view.feed(Countdown(version=13, at=24.0, start_at=27.0))
    view.feed(RaceStarted(version=14, at=27.0, game="shaula", seed=5))
    assert view.board == new_game("shaula", 5).state(view="player")


def test_a_rematch_vote_in_a_snapshot_is_kept() -> None:
    view = RaceView(room="R1")
    room = dict(ROOM, status="finished")
    room["players"] = [{"seat": 0, "name": "ann", "rematch": True}, {"seat": 2, "name": "cy"}]
    view.feed(Snapshot(version=9, room=room))
    assert view.racers[0].rematch and view.rematch_votes() == (1, 2)


def test_a_second_window_on_a_moojub_seat_shows_the_seats_true_board() -> None:
    # Window B of the same seat hears window A's `deal` as a progress event without a
    # board: the cards dealt are unknown here, so it must ask for the true board.
    view = joined()
    start = new_game("moojub", 5)
    view.feed(RaceStarted(version=5, at=0.0, game="moojub", board=start.state(view="player")))
    view.feed(
        Progress(
            version=6, at=1.0, seat=2, progress=0, moves=1, won=False, stuck=False, move="deal"
        )
    )
    assert view.gap  # a resync brings the snapshot with the true board
    true = new_game("moojub", 5)
    true.apply("deal")
    room = dict(ROOM, status="running", game="moojub")
    view.feed(Snapshot(version=6, room=room, board=true.state(view="player"), moves=["deal"]))
    assert view.board == true.state(view="player") and not view.gap


def test_a_seat_without_a_name_is_numbered_from_1_as_everywhere() -> None:
    # Seats are "seat 1", "seat 2" in the watch panels, the bot and `solrace play`'s
    # question; a player the snapshot gives no name was "seat 0".
    view = RaceView(room="R1")
    view.feed(Snapshot(version=1, room={**ROOM, "players": [{"seat": 0}, {"seat": 2}]}))
    assert [r.name for _, r in sorted(view.racers.items())] == ["seat 1", "seat 3"]


def test_splits_come_live_with_progress_and_show_beside_the_bars_and_in_the_results() -> None:
    from rich.console import Console

    from client_cli.race_app import player_lines, results_table
    from client_cli.widgets import RaceBars

    view = joined()
    view.feed(Countdown(version=5, at=1.0, start_at=2.0))
    view.feed(RaceStarted(version=6, at=2.0, game="shaula", seed=617))
    view.feed(
        Progress(
            version=7,
            at=43.2,
            seat=0,
            progress=13,
            moves=20,
            won=False,
            stuck=False,
            splits=[41.2, None, None, None],
        )
    )
    view.feed(Progress(version=8, at=44.0, seat=0, progress=12, moves=21, won=False, stuck=False))
    assert view.racers[0].splits == [41.2, None, None, None]  # an undo keeps the split
    lines = player_lines(view, now=50.0)
    assert lines[0].splits == (41.2, None, None, None)
    console = Console(width=100, record=True, color_system=None)
    bars = RaceBars()
    bars.update_players(lines)
    console.print(bars.render())
    assert "0:41.2" in console.export_text()
    result = {"rank": 1, "seat": 0, "name": "ann", "won": True, "stuck": False, "out": None}
    result |= {"progress": 52, "moves": 99, "time": 150.0, "splits": [41.2, 80.0, 121.5, 150.0]}
    view.feed(RaceFinished(version=9, at=152.0, results=[result], seed=617, reason="all_done"))
    console.print(results_table(view))
    text = console.export_text()
    assert "splits at 13 26 39 52 cards" in text
    assert "0:41.2  1:20.0  2:01.5  2:30.0" in text


def test_bots_are_shown_as_bots_on_the_bars_and_the_boards() -> None:
    view = joined()
    view.feed(PlayerJoined(version=5, at=1.0, seat=1, name="Bot-2291", player="b1", bot=True))
    assert view.racers[1].shown_name == "Bot-2291 (bot)"
    assert view.racers[0].shown_name == "ann"
    room = {**ROOM, "players": [{"seat": 0, "name": "Bot-7", "bot": True}]}
    view.feed(Snapshot(version=9, room=room))
    assert view.racers[0].bot and view.racers[0].shown_name == "Bot-7 (bot)"


def test_ones_own_bar_shows_the_delta_to_ones_best_at_each_split_reached() -> None:
    from rich.console import Console

    from client_cli.race_app import player_lines
    from client_cli.widgets import RaceBars, delta_text

    view = RaceView(room="R1")
    best = {"game": "shaula", "race": "old.1", "time": 150.0, "splits": [44.4, 90.0, 130.0, 150.0]}
    view.feed(Welcome(room="R1", role="player", server_time=0.0, seat=2, token="t", best=best))
    view.feed(Snapshot(version=4, room=ROOM))
    view.feed(Countdown(version=5, at=1.0, start_at=2.0))
    view.feed(RaceStarted(version=6, at=2.0, game="shaula", seed=617))
    for seat, version, at in ((2, 7, 43.2), (0, 8, 50.0)):
        view.feed(
            Progress(
                version=version,
                at=at,
                seat=seat,
                progress=13,
                moves=20,
                won=False,
                stuck=False,
                splits=[at - 2.0, None, None, None],
            )
        )
    lines = {line.name: line for line in player_lines(view, now=50.0)}
    assert lines["cy"].best == (44.4, 90.0, 130.0, 150.0)  # one's own bar: cy is seat 2
    assert lines["ann"].best == ()  # nobody else's
    from textual.geometry import Size

    class Wide(RaceBars):  # as in a terminal 140 columns wide
        @property
        def size(self) -> Size:
            return Size(140, 2)

    console = Console(width=140, record=True, color_system=None)
    bars = Wide()
    bars.update_players(list(lines.values()))
    console.print(bars.render())
    [ann_row, cy_row] = console.export_text().splitlines()
    assert "0:41.2   -3.2 s" in cy_row and "0:48.0" in ann_row and " s" not in ann_row
    assert [delta_text(s, b) for s, b in ((41.2, 44.4), (45.45, 44.4), (44.4, 44.4))] == [
        "-3.2 s",
        "+1.1 s",  # 1.05 s: half a tenth, away from zero
        "±0.0 s",
    ]


def bar_rows(players: list[PlayerLine], width: int = 80) -> list[str]:
    """The race bars' rows as a terminal `width` columns wide shows them."""
    from rich.console import Console
    from textual.geometry import Size

    from client_cli.widgets import RaceBars

    class Sized(RaceBars):
        @property
        def size(self) -> Size:
            return Size(width, len(players))

    bars = Sized()
    bars.update_players(players)
    console = Console(width=width, record=True, color_system=None)
    console.print(bars.render())
    return console.export_text().splitlines()


def test_wide_characters_in_a_name_keep_the_bars_in_line() -> None:
    # A name in CJK characters (two columns each) was measured in characters: its bar and
    # figures stood further right than the others', and its status ran off the line.
    from rich.cells import cell_len

    rows = bar_rows(
        [
            PlayerLine(name="ann", status="not ready", you=True),
            PlayerLine(name="名前名前名前名前名前", status="not ready"),
        ]
    )
    assert len(rows) == 2 and all(row.rstrip().endswith("not ready") for row in rows)
    assert {cell_len(row.rstrip()) for row in rows} == {cell_len(rows[0].rstrip())}
    assert len({cell_len(row[: row.index("░")]) for row in rows}) == 1  # the bars start together


def test_a_bots_label_stays_on_its_bar_when_the_name_is_cut() -> None:
    # The bars gave a name 14 columns: "Bot-1476 (bot)" lost its ")", and a longer bot's
    # name lost the whole label, where a bot is to be shown as a bot everywhere.
    names = ["ann", "Bot-1476 (bot)", "Solver_Machine_9 (bot)"]
    ann, bot, long_bot = bar_rows([PlayerLine(name=name) for name in names])
    assert "(bot)" not in ann and "Bot-1476 (bot) " in bot and "Solver_M… (bot) " in long_bot


def test_a_name_cut_short_on_the_bars_ends_in_an_ellipsis() -> None:
    # "Bot-7301's ghost" read "Bot-7301's ghos": a name cut where nothing said it was.
    ann, ghost = bar_rows([PlayerLine(name="ann"), PlayerLine(name="Bot-7301's ghost")])
    assert "Bot-7301's gho… " in ghost and "ann " in ann


def test_durations_read_as_people_say_them() -> None:
    from client_cli.widgets import duration

    assert [duration(s) for s in (0, 30, 59.9, 60, 90, 3599)] == [
        "0 s",
        "30 s",
        "59 s",
        "1 min",
        "1 min 30 s",
        "59 min 59 s",
    ]
    assert [duration(s) for s in (3600, 14574, 86399)] == ["1 h", "4 h 2 min", "23 h 59 min"]


def test_the_results_of_a_race_whose_deal_stays_secret_name_no_deal() -> None:
    # A tournament heat of Moojub ends with `seed` null (other heats of the round race the
    # deal still): the results table's title read "Results · Moojub #None".
    from rich.console import Console

    from client_cli.race_app import results_table

    view = RaceView(room="R1")
    view.feed(Welcome(room="R1", role="player", server_time=100.0, seat=0, token="t"))
    view.feed(Snapshot(version=1, room={**ROOM, "game": "moojub", "tournament": "cup"}))
    view.feed(RaceStarted(version=2, at=2.0, game="moojub", seed=None, board=None))
    result = {"rank": 1, "seat": 0, "name": "ann", "won": False, "stuck": True, "out": None}
    result |= {"progress": 20, "moves": 99, "time": None, "splits": [40.0, None, None, None]}
    view.feed(RaceFinished(version=3, at=152.0, results=[result], seed=None, reason="all_done"))
    console = Console(width=100, record=True, color_system=None)
    console.print(results_table(view))
    title = console.export_text().splitlines()[0].strip()
    assert title == "Results · Moojub", title


def test_a_round_won_faster_is_the_best_the_next_rounds_deltas_are_to() -> None:
    """One's win on record, faster than one's best, is the best from the next round on
    (the round itself is shown against the old one), as the welcome after a reconnect
    would say; a slower win, or anyone else's, is not."""
    view = RaceView(room="R1")
    best = {"game": "shaula", "race": "old.1", "time": 150.0, "splits": [44.4, 90.0, 130.0, 150.0]}
    view.feed(Welcome(room="R1", role="player", server_time=0.0, seat=2, token="t", best=best))
    view.feed(Snapshot(version=4, room=ROOM))

    def result(seat: int, time: float, splits: list[float], player: str | None) -> dict[str, Any]:
        return {"seat": seat, "won": True, "time": time, "splits": splits, "player": player}

    faster = [40.0, 80.0, 120.0, 140.0]
    fastest = [10.0, 20.0, 30.0, 40.0]
    view.feed(
        RaceFinished(
            version=5,
            at=200.0,
            results=[result(0, 40.0, fastest, "a09e55c2d4b61f70"), result(2, 140.0, faster, "me")],
            reason="all_done",
        )
    )
    assert view.best == tuple(best["splits"])  # the race just won is shown against the old
    view.feed(NewRound(version=6, at=201.0, round=2))
    assert view.best == tuple(faster)  # one's own, not ann's faster one
    slower = [50.0, 100.0, 145.0, 160.0]
    view.feed(
        RaceFinished(version=7, at=400.0, results=[result(2, 160.0, slower, "me")], reason="")
    )
    view.feed(NewRound(version=8, at=401.0, round=3))
    assert view.best == tuple(faster)
    # An anonymous seat's win is on nobody's record: it is no best.
    anonymous = RaceView(room="R1")
    anonymous.feed(Welcome(room="R1", role="player", server_time=0.0, seat=2, token="t"))
    anonymous.feed(Snapshot(version=4, room=ROOM))
    anonymous.feed(
        RaceFinished(version=5, at=200.0, results=[result(2, 140.0, faster, None)], reason="")
    )
    anonymous.feed(NewRound(version=6, at=201.0, round=2))
    assert anonymous.best == ()
