"""The `solrace` command line: help, the server address, practice's parsing, the bot."""

from __future__ import annotations

import subprocess
import sys

import pytest

from client_cli.__main__ import DEFAULT_SERVER, build_parser
from client_cli.bot import Planner, greedy_move
from client_cli.commands import seat_token
from client_cli.net import http_url, ws_url
from core import new_game
from core import rules_text as core_rules_text


def test_help_explains_each_subcommand() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "client_cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("play", "watch", "rooms", "practice", "bot", "rules"):
        assert command in out
    assert "SOLRACE_SERVER" in out and "t5 t2" in out


def test_server_comes_from_flag_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOLRACE_SERVER", raising=False)
    assert build_parser().parse_args(["rooms"]).server == DEFAULT_SERVER
    monkeypatch.setenv("SOLRACE_SERVER", "http://race.example:9000")
    assert build_parser().parse_args(["rooms"]).server == "http://race.example:9000"
    args = build_parser().parse_args(["--server", "http://h:1", "practice", "moojub", "7"])
    assert (args.server, args.game, args.seed) == ("http://h:1", "moojub", 7)


def test_urls_for_websocket_and_http() -> None:
    assert ws_url("http://h:8765") == "ws://h:8765/ws"
    assert ws_url("https://h/solrace/") == "wss://h/solrace/ws"
    assert ws_url("h:1") == "ws://h:1/ws"
    assert http_url("ws://h:8765/ws", "/rooms") == "http://h:8765/rooms"


def test_rooms_without_a_server_says_so() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "client_cli", "--server", "http://127.0.0.1:9", "rooms"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "cannot reach" in done.stderr


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


def test_a_second_terminal_in_the_lobby_takes_a_seat_of_its_own() -> None:
    lobby = {"status": "lobby", "players": [{"seat": 0, "name": "root", "connected": True}]}
    assert seat_token(lobby, "tok", "root") is None  # the first terminal is still there
    lobby["players"][0]["connected"] = False
    assert seat_token(lobby, "tok", "root") == "tok"  # back after a crash: the same seat
    running = {"status": "running", "players": [{"seat": 0, "name": "root", "connected": True}]}
    assert seat_token(running, "tok", "root") == "tok"
    assert seat_token(lobby, None, "root") is None


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
