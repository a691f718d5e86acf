"""The `solrace` command line: help, the server address, practice's parsing, the bot."""

from __future__ import annotations

import argparse
import http.server
import os
import pathlib
import pwd
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from client_cli.__main__ import DEFAULT_SERVER, build_parser, main, parse_args
from client_cli.bot import Planner, greedy_move
from client_cli.commands import default_name, room_settings, rooms_table
from client_cli.net import BACKOFF, backoff_delay, http_url, ws_url
from client_cli.seat import Seat
from core import new_game
from core import rules_text as core_rules_text


def test_help_explains_each_subcommand() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "client_cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("play", "watch", "rooms", "practice", "bot", "rules"):
        assert command in out
    assert "SOLRACE_SERVER" in out and "t5 t2" in out


def test_every_argument_of_every_subcommand_is_explained() -> None:
    from client_cli.__main__ import subcommands

    for command in subcommands(build_parser()):
        if command.prog.startswith("solrace tournament"):
            continue  # the tournament commands
        for action in command._actions:
            assert action.help, f"{command.prog} {action.dest} has no help"


def test_server_comes_from_flag_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOLRACE_SERVER", raising=False)
    assert build_parser().parse_args(["rooms"]).server == DEFAULT_SERVER
    monkeypatch.setenv("SOLRACE_SERVER", "http://race.example:9000")
    assert build_parser().parse_args(["rooms"]).server == "http://race.example:9000"
    args = build_parser().parse_args(["--server", "http://h:1", "practice", "moojub", "7"])
    assert (args.server, args.game, args.seed) == ("http://h:1", "moojub", 7)


@pytest.mark.parametrize(
    "address", ["", "http://", "http://127.0.0.1:99999", "htp://race.example", "ftp://h:1"]
)
def test_a_server_address_that_cannot_be_one_is_refused_saying_so(
    address: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was tried as it was: "cannot reach http:///players: http:///players", or "no
    # solrace server at htp://race.example", as if the server were down.
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--server", address, "rooms"])
    assert exit_.value.code == 2
    assert f"{address!r} is not a server address" in capsys.readouterr().err
    monkeypatch.setenv("SOLRACE_SERVER", address)
    with pytest.raises(SystemExit):
        parse_args(["bot", "ab12cd34"])
    assert f"{address!r} is not a server address" in capsys.readouterr().err
    # A command that reaches no server is not stopped by it.
    assert parse_args(["rules", "moojub"]).game == "moojub"
    assert parse_args(["practice", "shaula", "5"]).seed == 5


@pytest.mark.parametrize(
    "address", ["h:1", "localhost", "ws://h:8765/ws", "https://h/solrace/", "[::1]:8765"]
)
def test_every_spelling_of_a_server_address_is_taken(address: str) -> None:
    assert parse_args(["rooms", "--server", address]).server == address


def test_reconnect_delays_are_spread_between_half_and_all_of_the_step() -> None:
    # Clients let go at once (a process closing with 1013) must not all come back at once.
    assert backoff_delay(0, lambda: 0.0) == BACKOFF[0] / 2
    assert backoff_delay(0, lambda: 1.0) == BACKOFF[0]
    assert backoff_delay(99, lambda: 1.0) == BACKOFF[-1]  # no longer than the last step
    drawn = {backoff_delay(1) for _ in range(50)}
    assert len(drawn) > 40 and all(BACKOFF[1] / 2 <= d <= BACKOFF[1] for d in drawn)


def test_urls_for_websocket_and_http() -> None:
    assert ws_url("http://h:8765") == "ws://h:8765/ws"
    assert ws_url("https://h/solrace/") == "wss://h/solrace/ws"
    assert ws_url("h:1") == "ws://h:1/ws"
    assert http_url("ws://h:8765/ws", "/rooms") == "http://h:8765/rooms"
    # With the room the socket is for: the balancer's routing hint (protocol section 1).
    assert ws_url("http://h:8765", "3F2A9C1B") == "ws://h:8765/ws?room=3f2a9c1b"
    assert ws_url("wss://h/solrace/ws", "5be0c2d1-1") == "wss://h/solrace/ws?room=5be0c2d1-1"
    assert http_url("https://h/solrace/ws", "/rooms") == "https://h/solrace/rooms"


def test_rooms_without_a_server_says_so() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "client_cli", "--server", "http://127.0.0.1:9", "rooms"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "solrace rooms: no solrace server at http://127.0.0.1:9: is it running? (make run)"
    )


def test_the_fallback_player_makes_progress_without_repeating_itself() -> None:
    game = new_game("stalactites", 11)
    seen: set[object] = set()
    for _ in range(30):
        seen.add(game.key())
        move = greedy_move(game, seen)
        if move is None:
            break
        game.apply(move)
    assert game.progress > 0 or game.stuck


async def test_the_planner_names_its_mode_and_plays_legal_moves() -> None:
    planner = Planner(use_solver=False)
    assert planner.mode == "simple player"
    game = new_game("shaula", 2)
    move = await planner.next_move(game, hidden=False)
    assert move in game.legal_moves()


@pytest.mark.parametrize("seed", ["0", "9223372036854775808", "-3", "abc"])
def test_practice_refuses_a_deal_the_engine_has_not(
    seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A usage error, not a traceback from the engine.
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["practice", "shaula", seed])
    assert exit_.value.code == 2 and "a deal is a whole number" in capsys.readouterr().err


async def test_the_planner_follows_the_solvers_winning_line() -> None:
    planner = Planner()
    game = new_game("stalactites", 2)
    while not game.won:
        move = await planner.next_move(game, hidden=False)
        assert move is not None
        game.apply(move)
    assert planner.mode == "solver" and game.moves < 100


@pytest.mark.parametrize("game", ["shaula", "stalactites", "moojub"])
def test_rules_subcommand_prints_the_games_rules(game: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "client_cli", "rules", game], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == core_rules_text(game)


@pytest.mark.parametrize(
    "argv",
    [
        ["--server", "http://h:1", "watch", "AB12CD34"],
        ["watch", "AB12CD34", "--server", "http://h:1"],
        ["watch", "--server", "http://h:1", "AB12CD34"],
    ],
)
def test_server_before_or_after_the_subcommand(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert (args.server, args.room) == ("http://h:1", "ab12cd34")  # codes: any case


def test_every_network_subcommand_takes_server_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOLRACE_SERVER", raising=False)
    for argv in (["rooms"], ["play"], ["play", "X1"], ["bot", "X1"], ["watch", "X1"]):
        assert build_parser().parse_args([*argv, "--server", "h:2"]).server == "h:2"
        assert build_parser().parse_args(argv).server == DEFAULT_SERVER
    assert build_parser().parse_args(["play", "AbCd1234"]).room == "abcd1234"
    assert build_parser().parse_args(["bot", " AbCd1234 "]).room == "abcd1234"


def test_room_settings_send_only_what_was_asked_so_the_server_defaults_hold() -> None:
    # Hints differed: the client asked for them, curl's rooms had none. Now a room made
    # by the client has the server's defaults, as one made with curl.
    plain = build_parser().parse_args(["play", "--game", "moojub"])
    assert room_settings(plain) == {"game": "moojub"}
    every = build_parser().parse_args(
        [
            "play",
            "--game",
            "stalactites",
            "--seats",
            "3",
            "--seed",
            "winnable",
            "--hints",
            "--no-undo",
            "--time-limit",
            "300",
            "--spectator-delay",
            "20",
            "--no-rated",
        ]
    )
    assert room_settings(every) == {
        "game": "stalactites",
        "seats": 3,
        "seed": "winnable",
        "hints": True,
        "undo": False,
        "rated": False,
        "time_limit": 300.0,
        "spectator_delay": 20.0,
    }
    off = parse_args(["play", "--no-hints", "--undo"])
    assert room_settings(off) == {"game": "shaula", "hints": False, "undo": True}
    # A ghost race: its game, deal and seats are its recorded race's; seats count from 1.
    ghost = build_parser().parse_args(["play", "--ghost", "3F2A9C1B", "--ghost-seat", "2"])
    assert room_settings(ghost) == {"ghost": "3f2a9c1b", "ghost_seat": 1}
    best = build_parser().parse_args(["play", "--ghost", "best", "--game", "moojub"])
    assert room_settings(best) == {"ghost": "best", "game": "moojub"}


@pytest.mark.parametrize("option", ["--time-limit", "--spectator-delay"])
def test_room_times_must_be_seconds(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", option, "soon"])
    assert "seconds" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "-1", "soon"])
@pytest.mark.parametrize(
    "words",
    [
        ["bot", "ABCD", "--pace"],
        ["play", "--time-limit"],
        ["replay", "3F2A9C1B", "--at"],
        ["tournament", "create", "cup", "--duration"],
        ["tournament", "create", "cup", "--time-limit"],
        ["tournament", "create", "cup", "--spectator-delay"],
        ["tournament", "create", "cup", "--pause"],
        ["tournament", "create", "cup", "--countdown"],
        ["tournament", "join", "cup", "--pace"],
    ],
)
def test_every_duration_option_refuses_what_is_not_a_number_of_seconds(
    words: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # nan slips through max() and comparisons: a bot paced at nan sleeps for ever.
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*words[:-1], f"{words[-1]}={value}"])
    assert exit_.value.code == 2
    assert f"{value!r} is not a number of seconds" in capsys.readouterr().err


def test_a_bot_pace_below_the_floor_is_taken_and_raised_to_it() -> None:
    assert build_parser().parse_args(["bot", "ABCD", "--pace", "0.01"]).pace == 0.01
    assert build_parser().parse_args(["bot", "ABCD"]).pace == 1.0


def test_the_default_name_is_the_account_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two players on one machine both get it: the server numbers the second (`ann 2`).
    assert build_parser().parse_args(["play", "--quick"]).name is None  # not given
    monkeypatch.setenv("USER", "ann")
    assert default_name() == "ann"
    # No USER in the environment (cron, some containers and tmux setups): still the
    # account's name, from the password database, not "player N".
    for variable in ("USER", "LOGNAME", "LNAME", "USERNAME"):
        monkeypatch.delenv(variable, raising=False)
    assert default_name() == pwd.getpwuid(os.getuid()).pw_name


@pytest.mark.parametrize("spectator", [False, True])
async def test_a_websocket_to_no_server_says_so(spectator: bool) -> None:
    seat = Seat("http://127.0.0.1:9", "ab12cd34", "ann", spectator=spectator)
    with pytest.raises(ConnectionError) as error:
        await seat.start()
    assert str(error.value) == "no solrace server at http://127.0.0.1:9: is it running? (make run)"


def test_game_names_in_any_case() -> None:
    # The README and every screen write them "Shaula", "Moojub": `solrace rules Moojub`
    # was refused "invalid choice", unlike room codes, which take any case.
    parser = build_parser()
    assert parser.parse_args(["rules", "Moojub"]).game == "moojub"
    assert parser.parse_args(["practice", "SHAULA", "617"]).game == "shaula"
    assert parser.parse_args(["play", "--quick", "--game", "Stalactites"]).game == "stalactites"
    assert parser.parse_args(["tournament", "create", "cup", "--game", "Moojub"]).game == ["moojub"]


@pytest.fixture
def other_web_server() -> Iterator[str]:
    """A real HTTP server that is not solrace (a wrong port): 404 for /rooms, /ws."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("command", [["rooms"], ["play", "ab12cd34"], ["play", "--game", "moojub"]])
def test_a_url_where_another_server_answers_says_it_is_not_solrace(
    other_web_server: str, command: list[str]
) -> None:
    # It said "cannot reach URL/rooms: Expecting value: line 1 column 1 (char 0)".
    done = subprocess.run(
        [sys.executable, "-m", "client_cli", "--server", other_web_server, *command],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"solrace {command[0]}: no solrace server at {other_web_server}: something else"
        " answered there (HTTP 501); is the address right?"
    )


class JsonAnswer(http.server.BaseHTTPRequestHandler):
    """Answers every request 200 with the JSON of its server's `body`."""

    def answer(self) -> None:
        body = self.server.body  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("body", [b"[]", b'"ok"', b'{"ok": true}', b'{"rooms": null}'])
@pytest.mark.parametrize("command", [["rooms"], ["whoami"], ["bot", "ab12cd34"]])
def test_a_url_where_another_json_api_answers_says_it_is_not_solrace(
    body: bytes, command: list[str], tmp_path: pathlib.Path
) -> None:
    # A wrong port where some other JSON API answers 200: a traceback (KeyError: 'key',
    # TypeError: 'NoneType' object is not iterable), or "no rooms yet" from nobody's rooms.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), JsonAnswer)
    server.body = body  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "client_cli", "--server", url, *command],
            capture_output=True,
            text=True,
            env={**os.environ, "XDG_STATE_HOME": str(tmp_path)},
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stdout
    assert done.stderr.strip() == (
        f"solrace {command[0]}: no solrace server at {url}: something else answered there"
        " (JSON that is not solrace's); is the address right?"
    )


@pytest.mark.parametrize("spectator", [False, True])
async def test_a_websocket_to_another_server_says_it_is_not_solrace(
    other_web_server: str, spectator: bool
) -> None:
    # It said "cannot reach ws://.../ws (InvalidMessage)".
    seat = Seat(other_web_server, "ab12cd34", "ann", spectator=spectator)
    with pytest.raises(ConnectionError) as error:
        await seat.start()
    assert str(error.value) == (
        f"no solrace server at {other_web_server}: something else answered there"
        " (not a WebSocket); is the address right?"
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["play", "--ghost", "ab12cd34", "--ghost-seat", "0"], "seats are counted from 1"),
        (["play", "--seat", "0", "ab12cd34"], "seats are counted from 1"),
        (["play", "--ghost-seat", "2"], "--ghost-seat picks a racer of the race --ghost names"),
        (["play", "--ghost", "ab12cd34", "--game", "moojub"], "a ghost race's game"),
        (["play", "--ghost", "ab12cd34", "--seed", "5"], "a ghost race's game, deal and seats"),
        (["play", "--ghost", "ab12cd34", "--seats", "3"], "a ghost race's game, deal and seats"),
        (["play", "--ghost", "ab12cd34", "--quick"], "--quick"),
    ],
)
def test_options_a_ghost_race_cannot_take_are_refused_not_dropped(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "solrace play: error:" in err and said in err, err


def test_a_ghost_of_ones_best_takes_the_game() -> None:
    args = parse_args(["play", "--ghost", "best", "--game", "Moojub"])
    assert room_settings(args) == {"ghost": "best", "game": "moojub"}
    assert parse_args(["play"]).game == "shaula"  # a new room's game when none is given


def test_the_rooms_list_labels_bots_as_bots() -> None:
    from rich.console import Console

    room = {"id": "r1", "game": "shaula", "status": "lobby", "seats": 2, "rated": True}
    room["players"] = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "robo", "bot": True}]
    console = Console(width=100, record=True, color_system=None)
    console.print(rooms_table([room]))
    assert "2/2 ann, robo (bot)" in console.export_text()


def test_the_rooms_list_says_a_rooms_time_limit_as_its_lobby_does() -> None:
    # A room racing against a clock read like any other in the list: its limit showed
    # only once joined.
    from rich.console import Console

    room = {"id": "r1", "game": "shaula", "status": "lobby", "seats": 2, "rated": True}
    room |= {"undo": True, "hints": False, "time_limit": 300.0, "players": []}
    console = Console(width=120, record=True, color_system=None)
    console.print(rooms_table([room]))
    assert "rated, undo, no hints, time limit 5:00" in console.export_text()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["play", "--quick", "--seed", "5"], "--seed"),
        (["play", "--quick", "--seats", "3"], "--seats"),
        (["play", "--quick", "--hints"], "--hints"),
        (["play", "--quick", "--no-undo", "--time-limit", "60"], "--no-undo or --time-limit"),
        (["play", "--quick", "ab12cd34"], "--quick"),
        (["play", "ab12cd34", "--seed", "5"], "--seed"),
        (["play", "ab12cd34", "--seats", "3"], "--seats"),
        (["play", "ab12cd34", "--no-hints"], "--no-hints"),
        (["play", "ab12cd34", "--game", "moojub"], "--game"),
        (["play", "--seat", "2"], "--seat"),
        (["daily", "--date", "2026-01-02"], "--date"),
        (["daily", "shaula", "--date", "2026-01-02"], "--date shows a past day's board"),
        (["daily", "--board"], "--board"),
        (["daily", "--practice"], "--practice"),
        (["daily", "shaula", "--board", "--practice"], "--practice"),
    ],
)
def test_options_that_would_be_dropped_are_refused_before_connecting(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing answers at the default address: a refusal must come before any connection.
    with pytest.raises(SystemExit) as exit_:
        main(["--server", "http://127.0.0.1:9", *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"solrace {argv[0]}: error:" in err and said in err, err
    assert "no solrace server" not in err


def test_options_that_apply_are_taken() -> None:
    assert parse_args(["play", "--quick", "--game", "moojub", "--name", "ann"]).quick
    assert parse_args(["play", "ab12cd34", "--seat", "2", "--name", "ann"]).seat == 2
    assert parse_args(["play", "--seed", "5", "--seats", "3", "--hints"]).seats == 3
    assert parse_args(["daily", "shaula", "--board", "--date", "2026-01-02"]).date
    assert parse_args(["daily", "shaula", "--practice", "--yes"]).practice


async def test_no_color_drops_the_colour_of_the_whole_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --no-color took the colour off the cards only: the screens' bars, status lines and
    # frames kept theirs, where NO_COLOR (which the README says it does as) drops it all.
    import client_cli.__main__ as cli
    from client_cli.play_app import PlayApp
    from client_cli.session import LocalSession

    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.delenv("NO_COLOR")
    apps: list[PlayApp] = []

    def run_command(args: argparse.Namespace) -> int:
        apps.append(PlayApp(LocalSession.new("shaula", 5), "practice", cli.card_style(args)))
        return 0

    monkeypatch.setattr(cli, "run_command", run_command)
    assert main(["--no-color", "practice", "shaula", "5"]) == 0
    assert "NO_COLOR" not in os.environ  # as it was, once the command is over
    app = apps[0]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        colours = {
            colour
            for strip in app.screen._compositor.render_strips()
            for segment in strip
            if segment.style is not None
            for colour in (segment.style.color, segment.style.bgcolor)
            if colour is not None and colour.triplet is not None
        }
    assert {(c.triplet.red, c.triplet.green, c.triplet.blue) for c in colours} <= {
        (v, v, v) for v in range(256)
    }, colours  # greys only
