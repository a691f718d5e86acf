"""Stalactites' rules (RULES.md section 5), each with a hand-built position."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import core
from core import Game

Position = Callable[..., Game]
Refused = Callable[[Game, str, str], None]


BASES = {"f1": ["5H"], "f2": ["9S"], "f3": ["KH"], "f4": ["QD"]}


def test_layout_of_a_deal() -> None:
    state = core.new_game("stalactites", 77).state()
    assert list(state["piles"]) == [
        "f1", "f2", "f3", "f4", "c1", "c2", *(f"t{i}" for i in range(1, 9)),
    ]  # fmt: skip
    assert [len(state["piles"][f"f{i}"]) for i in range(1, 5)] == [1, 1, 1, 1]
    assert [len(state["piles"][f"t{i}"]) for i in range(1, 9)] == [6] * 8
    assert state["piles"]["c1"] == state["piles"]["c2"] == []
    assert state["step"] is None
    assert (state["progress"], state["moves"]) == (0, 0)


def test_both_steps_are_legal_before_the_first_build(position: Position, refused: Refused) -> None:
    game = position("stalactites", {**BASES, "t1": ["6C"], "t2": ["7D"], "t3": ["TC"]})
    assert "t1 f1" in game.legal_moves()
    assert "t2 f1" in game.legal_moves()
    game.apply("t2 f1")  # 7 on 5: twos
    assert game.state()["step"] == 2
    assert "t1 f1" not in game.legal_moves()
    refused(
        game,
        "t3 f2",
        "TC does not go on 9S: foundations build up by 2 in this game"
        " (fixed by the first build), wrapping from King to Ace",
    )


def test_the_first_build_fixes_ones_for_every_foundation(
    position: Position, refused: Refused
) -> None:
    game = position("stalactites", {**BASES, "t1": ["6C"], "t2": ["JD"], "t3": ["TC"]})
    game.apply("t1 f1")
    assert game.state()["step"] == 1
    refused(
        game,
        "t2 f2",
        "JD does not go on 9S: foundations build up by 1 in this game"
        " (fixed by the first build), wrapping from King to Ace",
    )
    game.apply("t3 f2")
    assert game.state()["piles"]["f2"] == ["9S", "TC"]


def test_undoing_the_first_build_frees_the_step(position: Position) -> None:
    game = position("stalactites", {**BASES, "t1": ["6C"], "t2": ["7D"]})
    game.apply("t1 f1")
    game.undo()
    assert game.state()["step"] is None
    game.apply("t2 f1")
    assert game.state()["step"] == 2


def test_foundations_wrap_from_king_to_ace(position: Position, refused: Refused) -> None:
    game = position("stalactites", {**BASES, "t1": ["AS"], "t2": ["2C"], "t3": ["AC"]})
    legal = game.legal_moves()
    assert "t1 f3" in legal  # A on K by ones
    assert "t1 f4" in legal  # A on Q by twos
    assert "t2 f3" in legal  # 2 on K by twos
    refused(
        game,
        "t1 f1",
        "AS does not go on 5H: foundations build up by 1 or 2, wrapping from King to Ace",
    )
    game.apply("t2 f3")
    assert game.state()["step"] == 2
    assert "t3 f4" in game.legal_moves()


def test_a_foundation_holds_13_cards(position: Position, refused: Refused) -> None:
    full = ["5H", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC", "2C", "3C", "4C"]
    game = position("stalactites", {**BASES, "f1": full, "t1": ["5C"]})
    assert game.state()["step"] == 1
    refused(game, "t1 f1", "f1 is full: a foundation holds 13 cards")
    assert game.progress == 12


def test_base_cards_never_move(position: Position, refused: Refused) -> None:
    game = position("stalactites", BASES)
    refused(game, "f1 c1", "cards never leave a foundation")
    refused(game, "f2 f1", "cards never leave a foundation")


def test_nothing_is_placed_on_the_tableau(position: Position, refused: Refused) -> None:
    game = position(
        "stalactites", {**BASES, "t1": ["3C", "8C"], "t2": ["9D"], "t3": [], "c1": ["7H"]}
    )
    refused(game, "t1 t2", "nothing is ever placed on a tableau pile in Stalactites")
    refused(game, "t1 t3", "nothing is ever placed on a tableau pile in Stalactites")
    refused(game, "c1 t2", "a card in a cell never goes back to the tableau")
    refused(game, "c1 t3", "a card in a cell never goes back to the tableau")
    refused(game, "t1 t2 2", "only one card at a time moves from t1 to t2")
    assert not any(m.split()[1].startswith("t") for m in game.legal_moves())


def test_cells(position: Position, refused: Refused) -> None:
    game = position("stalactites", {**BASES, "t1": ["8C"], "t2": ["4D"], "c1": ["6D"]})
    refused(game, "t1 c1", "c1 is not empty: a cell holds one card")
    assert [m for m in game.legal_moves() if m.startswith("c1")] == ["c1 f1", "c1 c2"]
    game.apply("t1 c2")
    refused(game, "t2 c1", "c1 is not empty: a cell holds one card")
    game.apply("c1 f1")
    assert game.state()["piles"]["f1"] == ["5H", "6D"]
    assert game.progress == 1


def test_listing_order(position: Position) -> None:
    game = position(
        "stalactites",
        {"f1": ["5H"], "f2": ["6S"], "f3": ["KH"], "f4": ["QD"], "c2": ["7C"], "t1": ["AD"]},
        parking="t8",
    )
    game.piles[game.index["t8"]].append(core.Card.parse("9C"))  # an inert top for the parking
    assert game.legal_moves() == [
        "c2 f1", "c2 f2", "c2 c1", "t1 f3", "t1 f4", "t1 c1", "t8 c1",
    ]  # fmt: skip


def test_won_when_every_foundation_holds_13(position: Position) -> None:
    ranks = "A23456789TJQK"
    piles: dict[str, list[str]] = {}
    for i, s in enumerate("CDHS"):
        piles[f"f{i + 1}"] = [f"{r}{s}" for r in ranks]
    piles["f4"].pop()
    piles["c2"] = ["KS"]
    game = position("stalactites", piles)
    assert game.progress == 47
    game.apply("c2 f4")
    assert game.won and not game.stuck
    assert game.progress == 48
    assert game.state()["won"] is True


def test_autoplay_waits_for_the_step(position: Position) -> None:
    game = position(
        "stalactites", {"f1": ["5H"], "f2": ["5C"], "f3": ["5D"], "f4": ["5S"], "t1": ["6C"]}
    )
    assert game.autoplay() == []


def test_autoplay_plays_the_last_card_of_its_rank(position: Position) -> None:
    game = position(
        "stalactites",
        {
            "f1": ["4H", "5H"], "f2": ["5C", "6C"], "f3": ["5D", "6D"], "f4": ["5S", "6H"],
            "t1": ["6S"], "t2": ["7C"],
        },
    )  # fmt: skip
    game.piles[game.index["t8"]].append(core.Card.parse("KS"))
    assert game.autoplay() == ["t1 f1"]
    assert game.moves == 1


def test_autoplay_ignores_a_card_only_one_foundation_takes(position: Position) -> None:
    game = position(
        "stalactites",
        {
            "f1": ["9H", "TH"], "f2": ["2C", "3C"], "f3": ["2D", "3D"], "f4": ["2S", "3S"],
            "t1": ["JS"],
        },
    )  # fmt: skip
    game.piles[game.index["t8"]].append(core.Card.parse("KS"))
    assert game.legal_moves()[:1] == ["t1 f1"]
    assert game.autoplay() == []


def test_stuck_when_no_move_is_legal(position: Position, refused: Refused) -> None:
    game = position(
        "stalactites",
        {
            "f1": ["AC", "2C"], "f2": ["AD", "2D"], "f3": ["AH", "2H"], "f4": ["AS", "2S"],
            "c1": ["KC"], "c2": ["KD"], "t8": ["KH"],
        },
    )  # fmt: skip
    assert game.legal_moves() == []
    assert game.stuck and not game.won
    refused(game, "deal", "there is no deal in Stalactites")


def test_from_state_checks_the_step(position: Position) -> None:
    with pytest.raises(ValueError, match="step 2 does not match the foundations"):
        position("stalactites", {**BASES, "f1": ["5H", "6H"]}, step=2)
    with pytest.raises(ValueError, match="same step"):
        position("stalactites", {**BASES, "f1": ["5H", "6H"], "f2": ["9S", "JS"]})
    game = position("stalactites", BASES, step=2)
    assert game.state()["step"] == 2
