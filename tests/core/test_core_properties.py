"""Engine invariants over many seeds and random playouts (Hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

import core
from core import Game, IllegalMove, Move

games = st.sampled_from(core.GAMES)
seeds = st.integers(min_value=1, max_value=2**63 - 1)
small_seeds = st.integers(min_value=1, max_value=40000)


def all_cards(game: Game) -> list[str]:
    state = game.state()
    return [c for p in state["piles"].values() for c in p] + state.get("talon", [])


def random_playout(game: Game, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        moves = game.legal_moves()
        if not moves:
            return
        game.apply(rng.choice(moves))


@given(games, seeds)
def test_a_deal_is_a_permutation_of_the_deck(name: str, seed: int) -> None:
    assert sorted(all_cards(core.new_game(name, seed))) == sorted(core.CARD_TEXT)


@given(games, st.one_of(small_seeds, seeds), st.integers(0, 2**32))
def test_random_play_keeps_every_invariant(name: str, seed: int, rnd: int) -> None:
    rng = random.Random(rnd)
    game = core.new_game(name, seed)
    candidates = [f"{a} {b}" for a in game.pile_ids for b in game.pile_ids if a != b] + [
        "deal",
        "t1 t2 2",
        "t5 t6 3",
    ]
    for _ in range(120):
        before = game.state()
        moves = game.legal_moves()
        assert moves == [str(m) for m in game.generate()]
        assert len(set(moves)) == len(moves)
        # A random move that is not listed is refused and changes nothing.
        other = rng.choice(candidates)
        if other not in moves:
            try:
                game.apply(other)
            except IllegalMove:
                pass
            else:
                raise AssertionError(f"{other!r} was accepted but not listed in {moves}")
            assert game.state() == before
        if not moves:
            assert game.stuck or game.won
            break
        move = rng.choice(moves)
        game.apply(move)
        assert sorted(all_cards(game)) == sorted(core.CARD_TEXT)
        if move != "deal":
            game.undo()
            assert game.state() == {**before, "moves": before["moves"] + 2}
            game.apply(move)
    replay = core.new_game(name, seed)
    for move in game.history:
        replay.apply(move)
    assert replay.state()["piles"] == game.state()["piles"]
    assert replay.key() == game.key()


@given(games, small_seeds, st.integers(0, 2**32))
def test_pop_restores_the_exact_position(name: str, seed: int, rnd: int) -> None:
    rng = random.Random(rnd)
    game = core.new_game(name, seed)
    keys = []
    for _ in range(80):
        moves = game.generate()
        if not moves:
            break
        keys.append(game.key())
        game.push(rng.choice(moves))
    while keys:
        game.pop()
        assert game.key() == keys.pop()
    assert game.state() == core.new_game(name, seed).state()


@given(small_seeds, st.integers(0, 2**32))
def test_player_view_of_moojub_never_holds_the_talon(seed: int, rnd: int) -> None:
    rng = random.Random(rnd)
    game = core.new_game("moojub", seed)
    for _ in range(60):
        view = game.state(view="player")
        assert "talon" not in view and view["seed"] is None
        assert view["talon_count"] == len(game.state()["talon"])
        moves = game.legal_moves()
        if not moves:
            break
        game.apply(rng.choice(moves))


@given(games, small_seeds, st.integers(0, 2**32))
def test_move_text_round_trips(name: str, seed: int, rnd: int) -> None:
    rng = random.Random(rnd)
    game = core.new_game(name, seed)
    for _ in range(40):
        moves = game.generate()
        if not moves:
            break
        for move in moves:
            text = str(move)
            assert core.Move.parse(text) == move
            assert core.Move.parse(f"  {text.upper()}  ") == move
            if move.n == 1 and not move.is_deal:
                assert core.Move.parse(f"{text} 1") == move
        game.push(rng.choice(moves))


@given(games, small_seeds, st.integers(0, 2**32))
def test_a_copy_is_independent(name: str, seed: int, rnd: int) -> None:
    rng = random.Random(rnd)
    game = core.new_game(name, seed)
    random_playout(game, rng, 20)
    twin = game.copy()
    assert twin.state() == game.state() and twin.key() == game.key()
    before = game.state()
    random_playout(twin, rng, 20)
    while twin.history and twin.history[-1] != "deal":
        twin.pop()
    assert game.state() == before
    assert game.legal_moves() == core.from_state(before).legal_moves()


@given(games, small_seeds, st.integers(0, 2**32))
def test_stuck_is_exactly_no_legal_move(name: str, seed: int, rnd: int) -> None:
    # `stuck` stops at the first legal move it finds: it must agree with the full list.
    # Moves into cells are preferred so that positions with every cell full come up often.
    rng = random.Random(rnd)
    game = core.new_game(name, seed)
    for _ in range(300):
        moves = game.legal_moves()
        assert game.stuck == (not game.won and not moves)
        if not moves:
            break
        to_cells = [m for m in moves if " c" in m]
        game.apply(rng.choice(to_cells if to_cells and rng.random() < 0.6 else moves))


def test_canonical_text_is_read_as_the_parser_reads_it() -> None:
    # apply() looks canonical text up in a table instead of parsing it: same Move.
    for cls in map(type, (core.new_game(name, 1) for name in core.GAMES)):
        for code, text in cls._text_of.items():
            assert cls._parsed[text] == Move.parse(text) == cls._move_of[code]
