"""The solver: wins that replay, proofs of unwinnable, budgets, hints, winnable seeds."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

import core
from core.__main__ import main
from core.solver import Solution, hint, solve, winnable_seed

RANKS = "A23456789TJQK"


def replay_wins(name: str, seed: int, moves: list[str]) -> bool:
    game = core.new_game(name, seed)
    for move in moves:
        game.apply(move)
    return game.won


@pytest.mark.parametrize(
    ("name", "seed"),
    [("shaula", 2), ("shaula", 617), ("stalactites", 1), ("stalactites", 2), ("moojub", 3)],
)
def test_a_winning_line_replays_to_a_win(name: str, seed: int) -> None:
    found = solve(core.new_game(name, seed))
    assert found.result == "won"
    assert replay_wins(name, seed, found.moves)
    assert found.positions >= 1


@pytest.mark.parametrize(("name", "seed"), [("shaula", 10), ("stalactites", 37)])
def test_a_shortened_line_still_wins_and_is_no_longer(name: str, seed: int) -> None:
    game = core.new_game(name, seed)
    long, short = solve(game), solve(game, shorten=True)
    assert replay_wins(name, seed, short.moves)
    assert len(short.moves) <= len(long.moves)


def test_solving_leaves_the_game_as_it_was() -> None:
    game = core.new_game("shaula", 5)
    game.apply("t8 c1")
    before = game.state()
    solve(game)
    assert game.state() == before


def test_a_position_mid_game_is_solved_from_there() -> None:
    game = core.new_game("stalactites", 2)
    first = solve(game)
    for move in first.moves[:10]:
        game.apply(move)
    found = solve(game)
    assert found.result == "won"
    for move in found.moves:
        game.apply(move)
    assert game.won


def test_a_won_game_is_won_with_no_moves() -> None:
    game = core.new_game("stalactites", 1)
    for move in solve(game).moves:
        game.apply(move)
    assert solve(game) == Solution("won", [], 1, 0.0)
    assert hint(game) is None


def stalactites_blocked() -> dict[str, Any]:
    """Four Ace bases: by ones every foundation needs a 2 first, by twos a 3. The
    eight 2s and 3s lie at the bottom of the eight piles, under five cards of
    ranks 4..K each, and two cells cannot dig out five cards: no first build."""
    suits = "CDHS"
    bottom = [r + s for r in "23" for s in suits]
    rest = [r + s for r in RANKS[3:] for s in suits]
    piles: dict[str, list[str]] = {f"f{i + 1}": ["A" + s] for i, s in enumerate(suits)}
    piles |= {"c1": [], "c2": []}
    for i in range(8):
        piles[f"t{i + 1}"] = [bottom[i], *rest[i * 5 : i * 5 + 5]]
    return {"game": "stalactites", "piles": piles, "step": None}


def shaula_stuck() -> dict[str, Any]:
    """Foundations up to 7; four Kings fill the cells; the 8s are buried and the
    tops (four Queens, four Tens) take nothing and go nowhere."""
    piles: dict[str, list[str]] = {
        f"f{i + 1}": [r + s for r in RANKS[:7]] for i, s in enumerate("CDHS")
    }
    piles |= {"c1": ["KC"], "c2": ["KD"], "c3": ["KH"], "c4": ["KS"]}
    piles |= {
        "t1": ["8C", "9D", "QC"],
        "t2": ["8D", "9C", "QD"],
        "t3": ["8H", "9S", "QH"],
        "t4": ["8S", "9H", "QS"],
        "t5": ["JD", "JC", "TC"],
        "t6": ["JH", "JS", "TS"],
        "t7": ["TD"],
        "t8": ["TH"],
    }
    return {"game": "shaula", "piles": piles}


def moojub_dead_end() -> dict[str, Any]:
    """Column 1 is clubs, diamonds, hearts, spades; clubs and spades are full.
    Diamonds (3..K) wait for AD, which lies under 2D on r1, and 2D cannot start
    f5 (it must be a club). The talon brings the hearts the third foundation
    waits for; whatever the order of builds and the deal, 2D stays on AD."""
    piles: dict[str, list[str]] = {f"f{i}": [] for i in range(1, 33)}
    piles["f1"] = [r + "C" for r in RANKS]
    piles["f2"] = [r + "D" for r in RANKS[2:]]
    piles["f3"] = [r + "H" for r in RANKS[4:]]
    piles["f4"] = [r + "S" for r in RANKS]
    piles |= {"r1": ["AD", "2D"], "r2": [], "r3": [], "r4": []}
    return {"game": "moojub", "piles": piles, "talon": ["AH", "2H", "3H", "4H"]}


@pytest.mark.parametrize("build", [stalactites_blocked, shaula_stuck])
def test_hand_built_dead_positions_are_unwinnable(build: Any) -> None:
    found = solve(core.from_state(build()))
    assert found.result == "unwinnable"
    assert found.moves == []


def test_a_moojub_dead_end_is_unwinnable_after_trying_every_order() -> None:
    found = solve(core.from_state(moojub_dead_end()))
    assert found.result == "unwinnable"
    assert found.positions > 1  # the deal and the builds were tried before giving up


def test_a_stalactites_deal_lost_by_twos_is_won_by_ones_without_exhausting_twos() -> None:
    # Deal 216: by twos it is a large lost space (about 925,000 positions);
    # searching the two steps' halves in turn finds the win by ones first.
    found = solve(core.new_game("stalactites", 216), budget=20_000)
    assert found.result == "won"
    assert found.positions < 20_000


def test_a_position_budget_is_respected() -> None:
    found = solve(core.new_game("stalactites", 16), budget=500)
    assert found.result == "unknown"
    assert found.positions == 500
    assert found.moves == []


def test_a_time_budget_is_respected() -> None:
    ticks = itertools.count()

    def clock() -> float:  # one "second" per look at the clock
        return float(next(ticks))

    found = solve(core.new_game("stalactites", 16), budget=None, clock=clock, time_limit=3)
    assert found.result == "unknown"
    assert found.positions < 5000
    assert found.seconds >= 3


def test_following_hints_wins_a_deal() -> None:
    game = core.new_game("stalactites", 4)
    for _ in range(100):
        move = hint(game)
        if move is None:
            break
        game.apply(move)
    assert game.won


@pytest.mark.parametrize("seed", [1, 6, 617])
def test_following_hints_wins_a_shaula_deal_without_going_back(seed: int) -> None:
    """Each hint is the first move of a winning line from where the player is; a line
    found afresh after the last hint may begin by undoing it (then hints went back and
    forth for ever). A hint never leads back to a position the game has been in."""
    game = core.new_game("shaula", seed)
    been = {game.key()}
    for _ in range(400):
        move = hint(game)
        if move is None:
            break
        game.apply(move)
        assert game.key() not in been, f"{move} went back"
        been.add(game.key())
    assert game.won


def test_a_hint_after_an_undo_may_lead_where_the_undone_move_did() -> None:
    """The positions a hint avoids are those on the board's way here (docs/protocol.md,
    `hint`): an undone move's is not one of them, so taking a hint back and asking again
    gets the same hint."""
    game = core.new_game("shaula", 617)
    first = hint(game)
    assert first is not None
    game.apply(first)
    game.undo()
    assert hint(game) == first


@pytest.mark.parametrize("name", core.GAMES)
def test_a_hint_is_a_legal_move(name: str) -> None:
    game = core.new_game(name, 7)
    move = hint(game, budget=50)
    assert move is not None
    legal = game.legal_moves()
    game.apply(move)  # raises if illegal
    assert str(core.Move.parse(move)) in legal


@pytest.mark.parametrize("seed", [2, 5, 26])
def test_a_moojub_hint_does_not_depend_on_the_talon_order(seed: int) -> None:
    state = core.new_game("moojub", seed).state()
    shuffled = dict(state, talon=list(reversed(state["talon"])))
    game, other = core.from_state(state), core.from_state(shuffled)
    move = hint(game)
    assert move is not None
    assert move in game.legal_moves()
    assert hint(other) == move


def test_a_peeking_moojub_hint_follows_a_winning_line() -> None:
    game = core.new_game("moojub", 3)
    assert hint(game, peek=True) == solve(game).moves[0]


def test_winnable_seed_draws_until_a_win_is_proved() -> None:
    seed = winnable_seed("stalactites", random.Random(4), seeds=(1, 100))
    assert 1 <= seed <= 100
    assert solve(core.new_game("stalactites", seed)).result == "won"


def test_winnable_seed_gives_up_after_its_tries() -> None:
    with pytest.raises(RuntimeError):
        winnable_seed("stalactites", random.Random(1), seeds=(16, 16), tries=2, budget=100)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """`python -m core solve ...`, run in-process."""
    assert main(["solve", *argv]) == 0
    return capsys.readouterr().out


def test_the_command_line_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(run_cli(capsys, "stalactites", "1", "--json"))
    assert set(data) == {"result", "moves", "positions", "seconds"}
    assert data["result"] == "won"
    assert replay_wins("stalactites", 1, data["moves"])


def test_the_command_line_prints_the_verdict_then_the_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run_cli(capsys, "stalactites", "16", "--budget", "100").splitlines()
    assert lines[0].startswith("unknown: 100 positions")
    lines = run_cli(capsys, "stalactites", "1").splitlines()
    assert lines[0].startswith(f"won in {len(lines) - 1} moves")
    assert replay_wins("stalactites", 1, lines[1:])
