"""Shaula's rules (RULES.md section 4), each with a hand-built position."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import core
from core import Game, IllegalMove

Position = Callable[..., Game]
Refused = Callable[[Game, str, str], None]


def run(suit: str, low: int, high: int) -> list[str]:
    """Cards of one suit from rank ``low`` up to ``high``: ``run("H", 1, 3)`` = AH 2H 3H."""
    return [f"{'A23456789TJQK'[r - 1]}{suit}" for r in range(low, high + 1)]


# A position with every card placed, to check the full listing and its order.
RICH = {
    "game": "shaula",
    "piles": {
        "f1": run("C", 1, 13),
        "f2": run("D", 1, 13),
        "f3": run("H", 1, 9),
        "f4": run("S", 1, 8),
        "c1": ["9S"],
        "c2": [],
        "c3": [],
        "c4": [],
        "t1": ["KH", "QH"],
        "t2": [],
        "t3": ["KS", "QS", "JS"],
        "t4": [],
        "t5": ["JH"],
        "t6": ["TS"],
        "t7": [],
        "t8": ["TH"],
    },
}


def test_layout_of_a_deal() -> None:
    state = core.new_game("shaula", 617).state()
    assert list(state["piles"]) == [
        *(f"f{i}" for i in range(1, 5)),
        *(f"c{i}" for i in range(1, 5)),
        *(f"t{i}" for i in range(1, 9)),
    ]
    sizes = [len(state["piles"][f"t{i}"]) for i in range(1, 9)]
    assert sizes == [6, 6, 6, 6, 7, 7, 7, 7]
    assert all(state["piles"][p] == [] for p in ("f1", "f2", "f3", "f4", "c1", "c2", "c3", "c4"))
    assert (state["moves"], state["progress"], state["won"]) == (0, 0, False)
    assert "talon" not in state and "step" not in state


def test_legal_moves_are_complete_and_ordered() -> None:
    game = core.from_state(RICH)
    assert game.legal_moves() == [
        "c1 f4", "c1 c2", "c1 c3", "c1 c4", "c1 t7", "c1 t8",
        "t1 c2", "t1 c3", "t1 c4", "t1 t2 2", "t1 t4 2", "t1 t7", "t1 t7 2",
        "t3 c2", "t3 c3", "t3 c4", "t3 t2 3", "t3 t4 3", "t3 t7", "t3 t7 2", "t3 t7 3",
        "t5 c2", "t5 c3", "t5 c4", "t5 t1", "t5 t7",
        "t6 c2", "t6 c3", "t6 c4", "t6 t3", "t6 t5", "t6 t7",
        "t8 f3", "t8 c2", "t8 c3", "t8 c4", "t8 t7",
    ]  # fmt: skip


def test_autoplay_plays_only_safe_cards_and_can_win() -> None:
    game = core.from_state(RICH)
    assert game.autoplay() == [
        "c1 f4", "t6 f4", "t8 f3", "t3 f4", "t5 f3", "t1 f3", "t3 f4", "t1 f3", "t3 f4",
    ]  # fmt: skip
    assert game.won and not game.stuck
    assert game.progress == 52
    assert game.moves == 9
    assert game.legal_moves() == []


def test_autoplay_waits_for_both_lower_cards_of_the_other_colour(position: Position) -> None:
    # 3H needs 2C and 2S on foundations; 2S is still in a cell.
    game = position(
        "shaula",
        {"f1": run("H", 1, 2), "f2": run("C", 1, 2), "f3": ["AS"], "c1": ["2S"], "t1": ["3H"]},
        parking="t5",
    )
    game.piles[game.index["t5"]].append(core.Card.parse("KD"))  # keep the parked pile inert
    assert game.autoplay()[:2] == ["c1 f3", "t1 f1"]


def test_autoplay_plays_aces_and_twos_always(position: Position) -> None:
    game = position("shaula", {"t1": ["2D", "AD"], "t5": ["KC"]}, parking="t5")
    assert game.autoplay() == ["t1 f1", "t1 f1"]


def test_an_ace_goes_to_any_empty_foundation(position: Position) -> None:
    game = position("shaula", {"f2": ["AC"], "t1": ["AS"]})
    moves = [m for m in game.legal_moves() if m.startswith("t1 f")]
    assert moves == ["t1 f1", "t1 f3", "t1 f4"]
    game.apply("t1 f3")
    assert game.state()["piles"]["f3"] == ["AS"]


def test_foundations_build_up_in_suit(position: Position, refused: Refused) -> None:
    game = position("shaula", {"f1": ["AS"], "t1": ["3S"], "t2": ["2H"], "c1": ["2S"]})
    refused(game, "t1 f1", "3S does not go on AS in a foundation: one rank higher needed")
    refused(game, "t2 f1", "2H does not go on AS in a foundation: same suit needed")
    refused(game, "t2 f2", "an empty foundation takes only an Ace")
    game.apply("c1 f1")
    game.apply("t1 f1")
    assert game.state()["piles"]["f1"] == ["AS", "2S", "3S"]
    assert game.progress == 3


def test_an_ace_does_not_go_on_a_started_foundation(position: Position, refused: Refused) -> None:
    game = position("shaula", {"f1": ["AS"], "t1": ["AH"]})
    refused(game, "t1 f1", "f1 is not empty: an Ace starts an empty foundation")


def test_cards_never_leave_a_foundation(position: Position, refused: Refused) -> None:
    game = position("shaula", {"f1": ["AS", "2S"]})
    refused(game, "f1 c1", "cards never leave a foundation")
    refused(game, "f1 t7", "cards never leave a foundation")


def test_cells_hold_one_card(position: Position, refused: Refused) -> None:
    game = position("shaula", {"c1": ["9D"], "t1": ["4C"], "t5": ["8H", "7S"]})
    moves = [m for m in game.legal_moves() if m.startswith("t1 c")]
    assert moves == ["t1 c2", "t1 c3", "t1 c4"]  # each empty cell is its own move
    refused(game, "t1 c1", "c1 is not empty: a cell holds one card")
    refused(game, "t5 c2 2", "only one card at a time moves from t5 to c2")
    game.apply("c1 c3")  # a cell card may move to another empty cell
    game.apply("t1 c1")
    assert game.state()["piles"]["c1"] == ["4C"]
    assert game.state()["piles"]["c3"] == ["9D"]


def test_a_cell_card_goes_to_the_tableau_by_its_rules(position: Position, refused: Refused) -> None:
    game = position("shaula", {"c2": ["8H"], "t1": ["9H"], "t5": ["9C"], "t6": ["9D"]})
    assert "c2 t1" in game.legal_moves()
    assert "c2 t5" in game.legal_moves()
    refused(game, "c2 t6", "8H does not go on 9D in a FreeCell pile: other colour needed")
    game.apply("c2 t5")
    assert game.state()["piles"]["t5"] == ["9C", "8H"]


def test_forty_thieves_piles_build_down_in_suit(position: Position, refused: Refused) -> None:
    game = position("shaula", {"t1": ["9D"], "t2": ["9H"], "t5": ["8H"], "t6": ["7H"]})
    refused(game, "t5 t1", "8H does not go on 9D in a Forty Thieves pile: same suit needed")
    refused(game, "t6 t2", "7H does not go on 9H in a Forty Thieves pile: one rank lower needed")
    game.apply("t5 t2")
    game.apply("t6 t2")
    assert game.state()["piles"]["t2"] == ["9H", "8H", "7H"]


def test_an_empty_forty_thieves_pile_takes_only_a_king(
    position: Position, refused: Refused
) -> None:
    game = position(
        "shaula", {"t1": [], "t2": ["QD"], "t3": ["KS"], "t5": ["KH", "QS", "JD"]}, parking="t8"
    )
    msg = "an empty Forty Thieves pile takes only a King or a group headed by a King"
    refused(game, "t2 t1", msg)
    refused(game, "t5 t1", msg)
    refused(game, "t5 t1 2", msg)
    assert "t5 t1 3" in game.legal_moves()
    game.apply("t3 t1")
    game.undo()
    game.apply("t5 t1 3")
    assert game.state()["piles"]["t1"] == ["KH", "QS", "JD"]


def test_freecell_piles_build_down_in_alternating_colours(
    position: Position, refused: Refused
) -> None:
    game = position("shaula", {"t5": ["9S"], "t6": ["8C"], "t7": ["7H"], "t2": ["8D"]})
    refused(game, "t6 t5", "8C does not go on 9S in a FreeCell pile: other colour needed")
    refused(game, "t7 t5", "7H does not go on 9S in a FreeCell pile: one rank lower needed")
    game.apply("t2 t5")
    assert game.state()["piles"]["t5"] == ["9S", "8D"]


def test_an_empty_freecell_pile_takes_any_card_or_movable_group(
    position: Position, refused: Refused
) -> None:
    game = position("shaula", {"t6": [], "t5": ["4D", "9S", "8D", "7C"], "t1": ["5C"]})
    listed = [m for m in game.legal_moves() if m.split()[:2] in (["t1", "t6"], ["t5", "t6"])]
    assert listed == ["t1 t6", "t5 t6", "t5 t6 2", "t5 t6 3"]
    refused(game, "t5 t6 4", "the top 4 cards of t5 are not a sequence down in alternating colours")
    game.apply("t5 t6 3")
    assert game.state()["piles"]["t6"] == ["9S", "8D", "7C"]


def test_a_group_moves_by_the_rule_of_the_pile_it_is_in(
    position: Position, refused: Refused
) -> None:
    # A suit run in a Forty Thieves pile shifts onto a FreeCell pile: only its head must fit.
    game = position("shaula", {"t1": ["9H", "8H", "7H"], "t5": ["TS"], "t6": ["9C"]})
    assert "t1 t5 3" in game.legal_moves()
    game.apply("t1 t5 3")
    # Now in a FreeCell pile, the run is not alternating: it moves only one card at a time.
    refused(game, "t5 t6 2", "the top 2 cards of t5 are not a sequence down in alternating colours")
    assert [m for m in game.legal_moves() if m.startswith("t5 ") and len(m.split()) == 3] == []


def test_an_alternating_group_shifts_onto_a_forty_thieves_pile(
    position: Position, refused: Refused
) -> None:
    game = position("shaula", {"t5": ["9S", "8H", "7C"], "t1": ["9H"], "t2": ["9C"]})
    assert "t5 t1 2" in game.legal_moves()
    refused(game, "t5 t2", "7C does not go on 9C in a Forty Thieves pile: one rank lower needed")
    game.apply("t5 t1 2")
    assert game.state()["piles"]["t1"] == ["9H", "8H", "7C"]
    # In a Forty Thieves pile, 8H 7C is not a suit run: a group of 2 cannot leave it.
    refused(game, "t1 t5 2", "the top 2 cards of t1 are not a sequence down in suit")


def test_group_size_is_not_limited_by_free_cells(position: Position) -> None:
    game = position(
        "shaula",
        {
            "c1": ["2C"], "c2": ["3C"], "c3": ["4C"], "c4": ["5C"],
            "t1": run("S", 2, 9)[::-1], "t2": ["TS"],
        },
    )  # fmt: skip
    game.apply("t1 t2 8")
    assert game.state()["piles"]["t2"] == run("S", 2, 10)[::-1]
    assert game.state()["piles"]["t1"] == []


def test_group_larger_than_the_pile_is_refused(position: Position, refused: Refused) -> None:
    game = position("shaula", {"t1": ["9S", "8S"], "t2": ["TS"]})
    refused(game, "t1 t2 3", "t1 holds only 2 cards")
    refused(game, "c1 t2", "c1 is empty")


def test_bare_f_names_the_first_foundation_that_takes_the_card(
    position: Position, refused: Refused
) -> None:
    game = position(
        "shaula", {"f1": ["AC"], "f3": ["AS"], "t1": ["2S"], "t2": ["AH"], "t3": ["2D"]}
    )
    game.apply("t1 f")
    game.apply("T2   F")
    assert game.history == ["t1 f3", "t2 f2"]
    refused(game, "t3 f", "no foundation takes 2D")
    refused(game, "t3 f 2", "only one card at a time goes to a foundation")


def test_input_forms(position: Position) -> None:
    game = position("shaula", {"t1": ["9S"], "t2": ["TS"]})
    for text in ("t1 t2", "T1 T2", "  t1   t2 ", "t1 t2 1", "t01 t2"):
        game.apply(text)
        assert game.history == ["t1 t2"]
        game.undo()


@pytest.mark.parametrize(
    "text",
    ["", "t1", "t1 t2 x", "t1 t2 0", "t1 t2 -1", "hello world", "t1 t2 3 4", "deal now", "1 2"],
)
def test_unreadable_input(text: str) -> None:
    game = core.new_game("shaula", 1)
    with pytest.raises(core.UnreadableMove, match="could not read move"):
        game.apply(text)


def test_unknown_piles_and_the_deal(refused: Refused) -> None:
    game = core.new_game("shaula", 1)
    refused(game, "t9 t1", "Shaula has no pile t9")
    refused(game, "t1 r1", "Shaula has no pile r1")
    refused(game, "t1 t1", "a move needs two different piles")
    refused(game, "deal", "there is no deal in Shaula")
    refused(game, "talon t1", "Shaula has no pile talon")


def test_undo_takes_back_exactly_and_counts_as_a_move() -> None:
    game = core.new_game("shaula", 1)
    with pytest.raises(IllegalMove, match="nothing to undo"):
        game.undo()
    start = game.state()
    move = game.legal_moves()[0]
    game.apply(move)
    assert game.moves == 1 and game.history == [move]
    game.undo()
    assert game.moves == 2 and game.history == []
    assert game.state()["piles"] == start["piles"]


def test_stuck_when_no_move_is_legal(position: Position) -> None:
    # Kings fill the cells, no Ace shows, and no top card is one rank below another.
    piles = {f"c{i + 1}": [f"K{s}"] for i, s in enumerate("CDHS")}
    for i, s in enumerate("CDHS"):
        piles[f"t{i + 1}"] = [f"A{s}", f"5{s}"]
        piles[f"t{i + 5}"] = [f"2{s}", f"9{s}"]
    game = position("shaula", piles, parking="t8")
    assert game.legal_moves() == []
    assert game.stuck and not game.won
    assert game.state()["stuck"] is True
    assert game.autoplay() == []
