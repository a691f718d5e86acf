"""Shared helpers for the engine tests: the reference deals and a Hypothesis profile."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import core
from core import Game

ROOT = pathlib.Path(__file__).resolve().parents[2]

settings.register_profile(
    "engine", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("engine")


def shared_dir() -> pathlib.Path:
    """``../shared`` beside the clone (a git worktree may sit one level deeper)."""
    candidates = [ROOT.parent / "shared", ROOT.parent.parent / "shared"]
    if os.environ.get("SOLRACE_SHARED"):
        candidates.insert(0, pathlib.Path(os.environ["SOLRACE_SHARED"]))
    for path in candidates:
        if (path / "RULES.md").exists():
            return path
    raise FileNotFoundError(f"no shared/ directory with RULES.md in {candidates}")


VENDORED = pathlib.Path(__file__).parent / "data" / "reference.json"


def reference_deals() -> dict[str, list[dict[str, Any]]]:
    """shared/deals/reference.json, from the copy in tests/core/data (a clone anywhere has
    it); when shared/ sits beside the clone, the copy must still equal it."""
    text = VENDORED.read_text()
    try:
        shared = shared_dir() / "deals" / "reference.json"
    except FileNotFoundError:
        shared = None
    if shared is not None and json.loads(shared.read_text()) != json.loads(text):
        raise AssertionError(f"{VENDORED} differs from {shared}: copy it again")
    data: dict[str, list[dict[str, Any]]] = json.loads(text)
    return data


def empty_piles(game: str) -> dict[str, list[str]]:
    return {pid: [] for pid in core.game_class(game).pile_ids}


def _position(game: str, piles: dict[str, list[str]], parking: str = "t8", **extra: Any) -> Game:
    """A hand-built position: the given piles; every other card goes where it does not matter.

    Unlisted cards go under the cards of ``parking`` (Shaula, Stalactites) or at the end of
    the talon (Moojub), so a test names only the cards that matter.
    """
    cls = core.game_class(game)
    full = empty_piles(game)
    full.update(piles)
    used = {core.Card.parse(c) for cards in full.values() for c in cards}
    used |= {core.Card.parse(c) for c in extra.get("talon", [])}
    rest = [core.CARD_TEXT[c] for c in range(52) if c not in used]
    data: dict[str, Any] = {"game": game, "piles": full, **extra}
    if cls.has_talon:
        data["talon"] = list(extra.get("talon", [])) + rest
    else:
        full[parking] = rest + full[parking]
    return core.from_state(data)


Position = Callable[..., Game]


@pytest.fixture
def position() -> Position:
    """Build a hand-made position: ``position("shaula", {"t1": ["KS"]}, parking="t8")``."""
    return _position


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Tests asking for ``ref_deal`` run once per reference layout.
    if "ref_deal" in metafunc.fixturenames:
        ref = reference_deals()
        cases = [deal for game in core.GAMES for deal in ref[game]]
        metafunc.parametrize("ref_deal", cases, ids=[f"{d['game']}-{d['seed']}" for d in cases])


@pytest.fixture(scope="session")
def reference() -> dict[str, list[dict[str, Any]]]:
    return reference_deals()


def _refused(game: Game, move: str, reason: str) -> None:
    before = game.state()
    with pytest.raises(core.IllegalMove) as info:
        game.apply(move)
    assert str(info.value) == reason
    assert game.state() == before


@pytest.fixture
def refused() -> Callable[[Game, str, str], None]:
    """``refused(game, move, reason)``: the move is refused with exactly that reason and the
    position does not change."""
    return _refused
