"""Moves by keys: pile digits, the cursor, and choosing the group to move."""

from __future__ import annotations

from client_cli.picking import digit_pile, key_move, move_cursor
from core import new_game


def test_digits_name_tableau_piles_or_moojub_reserves() -> None:
    assert digit_pile("shaula", "5") == "t5"
    assert digit_pile("stalactites", "9") is None
    assert digit_pile("moojub", "3") == "r3"
    assert digit_pile("moojub", "5") is None


def test_key_move_takes_the_biggest_legal_group() -> None:
    state = {"piles": {"c1": ["AS"], "c2": []}}
    legal = ["t5 t6", "t5 t6 2", "t5 t6 3", "t1 c2"]
    assert key_move(state, "t5", "t6", legal) == "t5 t6 3"
    assert key_move(state, "t1", "c", legal) == "t1 c2"
    assert key_move(state, "t1", "t2", legal) == "t1 t2"  # illegal: the reason will say why
    assert key_move(state, "r1", "f", None) == "r1 f"
    assert key_move(state, "talon", "t1", None) == "deal"


def test_key_move_on_a_real_deal_is_legal() -> None:
    game = new_game("shaula", 2)
    move = key_move(game.state(), "t2", "f", game.legal_moves())
    game.apply(move)
    assert game.progress == 1


def test_cursor_moves_over_rows_and_wraps() -> None:
    assert move_cursor("shaula", None, "right") == "t1"
    assert move_cursor("shaula", "t1", "left") == "t8"
    assert move_cursor("shaula", "t2", "up") == "f2"
    assert move_cursor("moojub", "r1", "up") == "f4"
    assert move_cursor("moojub", "f4", "down") == "r1"
    assert move_cursor("stalactites", "t8", "up") == "c2"
    assert move_cursor("stalactites", "t7", "up") == "c1"  # drawn right above it
    assert move_cursor("stalactites", "t6", "up") == "c1"
    assert move_cursor("moojub", "f32", "down") == "talon"
