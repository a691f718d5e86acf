"""``python -m core``: deal and legal, through a real subprocess."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

import core

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


@pytest.mark.parametrize("game", core.GAMES)
def test_deal_prints_the_starting_state(game: str) -> None:
    out = run("deal", game, "617")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == core.new_game(game, 617).state()


def test_legal_applies_moves_then_lists() -> None:
    game = core.new_game("shaula", 2)
    moves = []
    for _ in range(3):
        moves.append(game.legal_moves()[-1])
        game.apply(moves[-1])
    out = run("legal", "shaula", "2", *moves)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == game.legal_moves()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["deal", "shaula", "0"], "seed must be a whole number from 1"),
        (["deal", "shaula", "1.5"], "seed must be a whole number from 1"),
        (["deal", "shaula", str(2**63)], "seed must be a whole number from 1"),
        (["deal", "klondike", "3"], "unknown game 'klondike'"),
        (["legal", "shaula", "2", "t1 t9"], "move 1 ('t1 t9'): Shaula has no pile t9"),
        (["legal", "moojub", "2", "zz"], "could not read move 'zz'"),
    ],
)
def test_bad_input_is_a_clear_error(args: list[str], message: str) -> None:
    out = run(*args)
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.startswith("error: ")
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_usage_error_without_a_command() -> None:
    out = run()
    assert out.returncode == 2
    assert "usage:" in out.stderr


def test_a_reader_that_stops_early_ends_the_command_quietly() -> None:
    """`python -m core solve shaula 617 | head -c 10`: the pipe closed before the answer
    is written ends the command without a traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "core", "solve", "shaula", "617"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the solver has an answer
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()
    assert proc.returncode == 1
