"""A whole race in the browser: a player clicking, dragging and typing against the solver
bot, watched by a browser spectator; refused moves; the page's weight and errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Browser, Page
from support.finished import archived_replay
from support.http import create_room
from support.server_processes import ServerProcess
from support.web import (
    acks,
    click_move,
    drag_move,
    expected_board,
    new_page,
    page_errors,
    pile,
    resigned_with,
    room_view,
    seen,
    shown_board,
    solo_race,
    start_bot,
    start_race,
    take_seat,
    typed_move,
    wait_acks,
)
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from client_cli.cards import CardStyle, cards_in_text
from client_cli.widgets import delta_text, split_clock

SEED = 617  # Shaula: the solver's line is 110 moves, single and multi-card


async def cards_html(page: Page) -> list[list[str]]:
    """Each pile's id and its card elements as HTML: what the board shows (the piles' own
    marks, such as the keyboard's focus or a refusal's flash, left out)."""
    cards: list[list[str]] = await page.eval_on_selector_all(
        "#board .pile",
        "piles => piles.map(p => [p.dataset.pile, ...[...p.querySelectorAll('.card')]"
        ".map(c => c.outerHTML)])",
    )
    return cards


async def test_a_whole_race_against_the_bot_with_a_browser_spectator(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=2, hints=True))["id"]
    line = core.solve(core.new_game("shaula", SEED), shorten=True).moves
    assert line
    player = await new_page(browser)
    spectator = await new_page(browser)
    await take_seat(player, base, room, "ann")
    await spectator.goto(f"{base}/watch/{room}")
    await spectator.wait_for_selector("#players .bar")
    bot = start_bot(base, room, pace=0.08)
    try:
        await player.click("#ready")
        await player.wait_for_selector("#board .card")
        await spectator.wait_for_selector(".watched .card")
        assert await spectator.locator(".watched").count() == 2
        for i, move in enumerate(line):
            play = (typed_move, click_move, drag_move)[i % 3]
            await play(player, move)
            try:
                await wait_acks(player, i + 1)
            except Exception:
                said = await player.inner_text("#message")
                raise AssertionError(f"move {i} {move} ({play.__name__}): {said!r}") from None
        assert await player.inner_text("#message") == ""  # nothing was refused
        # The winner's moment: a win screen with the place, and the end said aloud.
        await player.wait_for_selector("#win")
        assert (await player.inner_text("#win-title")).startswith(("You won!", "You finished"))
        await player.wait_for_selector("#results-table")
        await spectator.wait_for_selector("#results-table")
        # The spectator is told the race is over (not "Live"), and led to its replay.
        await spectator.wait_for_selector(f'#replay-link[href="/replay/{room}"]')
        assert "Live" not in await spectator.inner_text("#delay")
        # Splits: in the results, and beside the bars, as the server recorded them.
        results = room_view(base, room)["results"]
        assert isinstance(results, list)
        ann_splits = next(r["splits"] for r in results if r["name"] == "ann")
        assert None not in ann_splits
        shown = " · ".join(
            f"{mark} {split_clock(s)}" for mark, s in zip((13, 26, 39, 52), ann_splits, strict=True)
        )
        for page in (player, spectator):
            rows = await page.locator("#results-table tbody tr").all_inner_texts()
            assert len(rows) == 2
            assert any("ann" in row and "won" in row and shown in row for row in rows)
            bars = await page.locator("#players .bar").all_inner_texts()
            assert any("ann" in bar and shown in bar for bar in bars), bars
        # The spectator's boards are the players' true boards: every card up, kings on top.
        tops = await spectator.locator(".watched .pile.foundation .card").evaluate_all(
            "cards => cards.map(c => c.dataset.card[0])"
        )
        assert tops.count("K") == len(tops) == 8
        # Rematch: the vote is shown.
        await player.click("#rematch")
        await player.wait_for_selector("#rematch[disabled]:text('vote sent')")
        assert "ann" in await player.inner_text("#controls")
    finally:
        bot.kill()
        bot.wait(5)
    assert await acks(player) == len(line)
    assert page_errors(player, spectator) == []


async def test_a_double_click_on_take_a_seat_asks_once(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on "Take a seat" joins once: the second click asked again on the
    socket now seated, and its refusal drew the seat form again over the seat just taken."""
    base = server.url
    room = (await create_room(base, game="shaula", seats=2))["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/play/{room}")
    await page.dblclick("#take-seat")
    await page.click("#ready")
    # Answered in order: once the ready is, so is anything sent before it.
    await page.wait_for_function(
        "() => document.querySelector('#ready').textContent === 'Not ready'"
    )
    assert len(seen(page).sent('"type":"join"')) == 1, seen(page).frames
    assert await page.inner_text("#seat-form") == ""
    assert len(room_view(base, room)["players"]) == 1  # type: ignore[arg-type]
    assert page_errors(page) == []


async def test_a_player_joining_leaves_the_seated_players_buttons_as_they_are(
    server: ServerProcess, browser: Browser
) -> None:
    """Another player taking a seat changes nothing the seated player's buttons offer: they
    stay where they are, the same buttons. They were drawn anew, and a click on Ready as
    someone sat down (pressed on the old button, let go on the new) was lost."""
    base = server.url
    room = (await create_room(base, game="shaula", seats=3))["id"]
    page = await new_page(browser)
    await take_seat(page, base, room, "ann")
    await page.evaluate("() => { document.querySelector('#ready').kept = 1; }")
    async with WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await page.wait_for_function(
            "() => document.querySelector('#waiting').textContent.includes('2 of 3 seats taken')"
        )
        assert await page.evaluate("() => document.querySelector('#ready').kept") == 1
        await page.click("#ready")
        await bo.expect(p.PlayerReady)
    assert page_errors(page) == []


async def test_a_refused_move_leaves_the_board_and_shows_the_engines_reason(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    _, page = await solo_race(browser, base, game="shaula", seed=SEED)
    before = await cards_html(page)
    game = core.new_game("shaula", SEED)
    try:
        game.apply("t1 t2")
        raise AssertionError("t1 t2 should be illegal on deal 617")
    except core.IllegalMove as err:
        reason = str(err)
    # The piles' flash lasts 0.6 s, less than a loaded machine may take between two looks:
    # every pile that flashes is noted as it starts.
    await page.evaluate(
        """() => { window.__flashed = [];
        new MutationObserver((changes) => changes.forEach(({ target }) => {
            if (target.classList.contains('refused')) window.__flashed.push(target.dataset.pile);
        })).observe(document.getElementById('board'),
            { attributes: true, attributeFilter: ['class'], subtree: true }); }"""
    )
    await click_move(page, "t1 t2")  # by clicking
    await page.wait_for_selector("#message.refused")
    # The engine's reason with its cards as on the board, as the terminal client says it.
    assert "4S" in reason
    shown = cards_in_text(reason, CardStyle(color=False)).plain
    assert "4♠" in shown and "4S" not in shown
    assert await page.inner_text("#message") == shown
    # The piles of the refused move flash where they are.
    assert {"t1", "t2"} <= set(await page.evaluate("window.__flashed"))
    assert await page.get_attribute("#message", "data-code") == "illegal_move"
    assert await cards_html(page) == before
    await typed_move(page, "t9 t1")  # typed: a pile Shaula does not have
    await page.wait_for_function(
        "() => document.querySelector('#message').textContent.includes('no pile t9')"
    )
    # Card names typed where piles go: the reason quotes them back as typed (QD, not Q♦).
    await typed_move(page, "QD JH")
    await page.wait_for_function(
        "() => document.querySelector('#message').textContent.includes('not a pile id')"
    )
    assert "'QD JH'" in await page.inner_text("#message")
    assert await cards_html(page) == before
    await page.evaluate("() => document.querySelectorAll('#board .card').forEach(c => c.kept = 1)")
    await typed_move(page, "t2 t5")  # and a legal one is still accepted
    await wait_acks(page, 1)
    assert await cards_html(page) != before
    # Drawn by changing only what the move changed: one new card element on t5, the same
    # elements as before for every other card (no pile rebuilt).
    fresh = await page.eval_on_selector_all(
        "#board .card",
        "cards => cards.filter(c => !c.kept).map(c => c.closest('.pile').dataset.pile)",
    )
    assert fresh == ["t5"]
    assert page_errors(page) == []
    # No request left this server (the page works on a LAN with no internet).
    assert all(url.startswith((base, base.replace("http", "ws"))) for url in seen(page).requests)


async def test_autoplay_and_legal_targets_come_from_the_server(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    _, page = await solo_race(browser, base, game="shaula", seed=SEED)
    game = core.new_game("shaula", SEED)
    line = ["t2 t5", "t2 c1", "t8 t2", "t8 t6", "t4 c3", "t4 t5", "t4 c2", "t4 c4"]
    for i, move in enumerate(line):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
        game.apply(move)
    # Picking a card up outlines the piles it may go to: the engine's legal moves.
    await (
        page.locator('#board .pile[data-pile="t4"] .card').nth(-1).click(position={"x": 30, "y": 8})
    )
    await page.wait_for_selector("#board .pile.target")
    targets = await page.eval_on_selector_all(
        "#board .pile.target", "piles => piles.map(p => p.dataset.pile)"
    )
    single = [m.split() for m in game.legal_moves() if len(m.split()) == 2]
    assert sorted(targets) == sorted(dst for src, dst in single if src == "t4")
    assert sorted(targets) == ["f1", "f2", "f3", "f4"]  # any empty foundation takes an ace
    await page.keyboard.press("Escape")
    safe = game.copy().autoplay()
    assert safe == ["t4 f1"]
    await page.click("#autoplay")
    await wait_acks(page, len(line) + len(safe))
    for move in safe:
        game.apply(move)
    assert await shown_board(page) == expected_board(game.state(view="player"))
    assert page_errors(page) == []


async def into_the_rematch(page: Page) -> None:
    """The page's solo race resigned, and its rematch begun: a new deal on the board."""
    await page.click("#resign")
    await page.click("#resign")  # "sure?"
    await page.wait_for_selector("#results-table")
    await page.click("#rematch")  # the only player: everyone voted, a new deal starts
    await page.wait_for_selector("#move-input", timeout=20_000)
    await page.wait_for_function("() => !document.querySelector('#results-table')")


async def test_a_rematch_starts_a_new_round_on_a_clean_page(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    _, page = await solo_race(browser, base, game="stalactites")
    first = await shown_board(page)
    await into_the_rematch(page)
    assert "round 2" in await page.inner_text(".room-title")
    assert await shown_board(page) != first  # a new deal, drawn
    assert "0/48" in await page.inner_text("#players")
    assert page_errors(page) == []


async def test_a_card_picked_up_in_one_round_is_not_held_in_the_next(
    server: ServerProcess, browser: Browser
) -> None:
    """A card picked up (and not put down) when the race ended stayed picked up on the
    rematch's new deal, as whatever card lay at its place: Enter on that pile picked up a
    second card, and a click on another pile asked a move the player never chose."""
    base = server.url
    _, page = await solo_race(browser, base, game="shaula", seed=SEED)
    await page.focus(pile(page, "t2"))
    await page.keyboard.press("Enter")
    assert await page.locator("#board .card.selected").count() == 1
    await into_the_rematch(page)
    assert await page.locator("#board .card.selected").count() == 0
    await page.focus(pile(page, "t2"))
    await page.keyboard.press("Enter")
    label = await page.get_attribute(pile(page, "t2"), "aria-label")
    assert label is not None and label.endswith("picked up: 1 card"), label
    assert page_errors(page) == []


async def test_a_hint_of_one_round_is_not_shown_in_the_next(
    server: ServerProcess, browser: Browser
) -> None:
    """The words under the board are of the round they were said in: "Hint: t2 t5", asked
    before the end, was still shown on the rematch's new deal, where it is no hint."""
    base = server.url
    _, page = await solo_race(browser, base, game="shaula", seed=SEED, hints=True)
    await page.click("#hint")
    await page.wait_for_function("() => document.getElementById('message').textContent")
    assert (await page.inner_text("#message")).startswith("Hint: ")
    await into_the_rematch(page)
    assert "Hint" not in await page.inner_text("#message")
    assert page_errors(page) == []


async def test_undo_and_hint_keys_in_a_room_without_them_say_so(
    server: ServerProcess, browser: Browser
) -> None:
    """In a room without undo or hints, u and h (listed under "keys ?") did nothing at all,
    as dead keys. They ask the server as in any room, which says why not."""
    base = server.url
    _, page = await solo_race(browser, base, game="shaula", seed=SEED, undo=False, hints=False)
    for key, said in (("u", "does not allow undo"), ("h", "does not allow hints")):
        await page.locator("body").press(key)
        await page.wait_for_function(
            "said => document.getElementById('message').textContent.includes(said)", arg=said
        )
    assert page_errors(page) == []


async def test_a_double_click_on_rematch_or_start_is_one_vote_and_one_start(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on Start now starts once, and on Rematch votes once: the second click
    was sent too, to a room by then counting down (or in its new round), and its refusal
    ("the race is not in its lobby", "a rematch comes after the end") was said as the race
    began."""
    base = server.url
    room = (await create_room(base, game="stalactites", seats=2))["id"]
    page = await new_page(browser)
    await take_seat(page, base, room, "ann")
    await page.dblclick("#start")
    await page.wait_for_selector("#move-input")
    assert await page.inner_text("#message") == ""
    await page.click("#resign")
    await page.click("#resign")  # "sure?"
    await page.wait_for_selector("#rematch")
    await page.dblclick("#rematch")  # the only player: everyone voted, a new deal starts
    await page.wait_for_selector("#move-input")
    assert await page.inner_text("#message") == ""
    assert len(seen(page).sent('"type":"start"')) == 1
    assert len(seen(page).sent('"type":"rematch"')) == 1
    assert page_errors(page) == []


async def test_a_double_click_on_ready_or_leave_is_sent_once(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on Ready says ready once, and on Leave seat leaves once: the last
    player's second ready reached a room by then counting down, and its refusal ("ready
    only counts in the lobby") was said as the race began; a second leave came to a socket
    that held no seat any more."""
    base = server.url
    room = (await create_room(base, game="shaula", seats=2))["id"]
    page = await new_page(browser)
    async with WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await bo.send(p.Ready())
        await take_seat(page, base, room, "ann")
        await page.dblclick("#ready")  # every seat ready: the countdown
        await page.wait_for_selector("#move-input")
        assert await page.inner_text("#message") == ""
        assert len(seen(page).sent('"type":"ready"')) == 1, seen(page).frames
    other = (await create_room(base, game="shaula", seats=2))["id"]
    await take_seat(page, base, other, "ann")
    await page.dblclick("#leave")
    await page.wait_for_url(f"{base}/")
    assert len(seen(page).sent('"type":"leave"')) == 1, seen(page).frames
    assert room_view(base, other)["players"] == []
    assert page_errors(page) == []


async def test_a_double_click_on_autoplay_plays_the_safe_moves_once(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on Autoplay asks for the safe moves once: both asks were answered
    with the same moves, sent twice, and the second sending's refusals were said."""
    base = server.url
    safe = core.new_game("shaula", 2).copy().autoplay()
    assert len(safe) == 2, safe
    page = await new_page(browser)
    await solo_race_on(page, base, seed=2)
    await page.dblclick("#autoplay")
    await wait_acks(page, len(safe))
    # Every move sent by now: the second ask's would have gone on its answer, before these.
    assert len(seen(page).sent('"type":"move"')) == len(safe), seen(page).frames
    assert len(seen(page).sent('"type":"legal"')) == 1, seen(page).frames
    assert await page.inner_text("#message") == ""
    assert page_errors(page) == []


async def solo_race_on(page: Page, base: str, **body: object) -> str:
    """A one-seat room (POST /rooms with `body`), raced on `page` as "ann"."""
    room = str((await create_room(base, seats=1, **body))["id"])
    await start_race(page, base, room)
    return room


async def test_a_double_click_on_resign_asks_and_does_not_resign(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click (a double tap) on Resign asks "sure?" and waits for its answer, a
    click of its own: on a phone's screen the button stays under the finger as it asks,
    and the double click's second click answered the question: the race was over for a
    player who had not seen it asked."""
    base = server.url
    page = await new_page(browser, width=375, height=740)
    room = await solo_race_on(page, base, game="shaula", seed=SEED)
    await page.dblclick("#resign")
    await typed_move(page, core.solve(core.new_game("shaula", SEED)).moves[0])
    await wait_acks(page, 1)  # answered after anything sent before it
    assert seen(page).sent('"type":"resign"') == []
    assert room_view(base, room)["status"] == "running"
    assert page_errors(page) == []


async def test_ones_own_bar_shows_the_delta_to_ones_best_at_each_split(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    page = await new_page(browser)
    await page.goto(f"{base}/")
    await page.wait_for_function("() => localStorage.getItem('solrace.player')")
    key = json.loads(await page.evaluate("localStorage.getItem('solrace.player')"))["key"]
    line = core.solve(core.new_game("shaula", SEED), shorten=True).moves
    # A win on record for this browser's player: its best.
    first = (await create_room(base, game="shaula", seed=SEED, seats=1))["id"]
    async with WsClient.connect(base) as ws:
        await ws.identify(key)
        await race_alone(ws, first, name="")
        await ws.play(line)  # through the rate limit
        finished = await ws.expect(p.RaceFinished)
    await archived_replay(base, f"{first}.1")
    best = finished.results[0]["splits"]
    # The same deal again in the browser, up to the first split (13 cards up).
    room = (await create_room(base, game="shaula", seed=SEED, seats=1))["id"]
    await start_race(page, base, room)
    board = core.new_game("shaula", SEED)
    for i, move in enumerate(line):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
        board.apply(move)
        if board.progress >= 13:
            break
    split = await page.wait_for_function(
        "() => { const s = document.querySelector('#players .bar.me .splits');"
        " return s && s.textContent.includes('(') && s.textContent; }"
    )
    shown = str(await split.json_value())
    live = room_view(base, room)["players"]
    assert isinstance(live, list)
    mine = live[0]["splits"][0]
    dash = "\u2013"  # a split not reached
    assert shown.startswith(f"13 {split_clock(mine)} ({delta_text(mine, best[0])}) · 26 {dash}")
    assert page_errors(page) == []


async def test_a_round_won_is_the_best_the_next_rounds_deltas_are_to(
    server: ServerProcess, browser: Browser
) -> None:
    """The page's player, with no win on record, wins round 1: at round 2's first split
    their bar shows the delta to that win, as the welcome of a reload would, not nothing."""
    base = server.url
    page = await new_page(browser)
    body = {"seed": "winnable", "rated": False, "seats": 1, "countdown": 0}
    room = (await create_room(base, game="shaula", **body))["id"]
    await start_race(page, base, room)
    seed = room_view(base, room)["seed"]
    assert isinstance(seed, int)
    for i, move in enumerate(core.solve(core.new_game("shaula", seed), shorten=True).moves):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
    await page.wait_for_selector("#rematch")
    best = room_view(base, room)["players"][0]["splits"]  # type: ignore[index]
    await page.click("#rematch")
    async with asyncio.timeout(10):
        while (view := room_view(base, room))["round"] != 2 or view["status"] != "running":
            await asyncio.sleep(0.05)
    await page.wait_for_function("() => !document.querySelector('#rematch')")
    seed = view["seed"]
    assert isinstance(seed, int)
    board = core.new_game("shaula", seed)
    done = await acks(page)
    for i, move in enumerate(core.solve(core.new_game("shaula", seed), shorten=True).moves):
        await typed_move(page, move)
        await wait_acks(page, done + i + 1)
        board.apply(move)
        if board.progress >= 13:
            break
    split = await page.wait_for_function(
        "() => { const s = document.querySelector('#players .bar.me .splits');"
        " return s && s.textContent.includes('(') && s.textContent; }",
        timeout=10_000,
    )
    mine = room_view(base, room)["players"][0]["splits"][0]  # type: ignore[index]
    assert str(await split.json_value()).startswith(
        f"13 {split_clock(mine)} ({delta_text(mine, best[0])})"
    )
    assert page_errors(page) == []


@asynccontextmanager
async def racing_ann(page: Page, base: str, room: str) -> AsyncIterator[WsClient]:
    """The page seated in `room` as bo against ann (a socket of the test's), both ready:
    the race has begun, on the page too."""
    await take_seat(page, base, room, "bo")
    async with WsClient.connect(base) as ann:
        await ann.join(room, "ann")
        await page.click("#ready")
        await ann.send(p.Ready())
        await ann.expect(p.RaceStarted, timeout=15)
        await page.wait_for_selector("#board .card")
        yield ann


async def test_the_others_are_told_when_someone_finishes(
    server: ServerProcess, browser: Browser
) -> None:
    """A racer still playing sees a note (and hears it through the live region) naming who
    finished, in which place and time; the finisher's own win screen is not theirs."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=2))["id"]
    line = core.solve(core.new_game("shaula", SEED), shorten=True).moves
    assert line
    page = await new_page(browser)
    async with racing_ann(page, base, room) as ann:
        for seq, move in enumerate(line, start=1):
            while True:  # the same seq again when told to slow down, as a client does
                await ann.send(p.Move(seq=seq, move=move))
                answer = await ann.expect_any((p.Accepted, p.Refused), timeout=15)
                if not (isinstance(answer, p.Refused) and answer.code == "rate_limited"):
                    break
                await asyncio.sleep(0.2)
            assert isinstance(answer, p.Accepted), (move, answer)
        note = page.locator("#toasts .toast.finish")
        await note.wait_for()
        text = await note.inner_text()
        assert text.startswith("ann finished 1st in "), text
        assert "1st" in text and ":" in text  # the place and the time (m:ss)
        await page.wait_for_function(
            "() => document.querySelector('#announce').textContent.startsWith('ann finished 1st')"
        )
        assert await page.locator("#win").count() == 0  # the win screen is the winner's alone
    assert page_errors(page) == []
    await page.context.close()


async def test_a_double_click_sends_the_card_clicked_not_the_top_one(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click asks for the card under the pointer to go to a foundation: on a
    covered card the server refuses it (only the top card may go), and the card on top
    stays where it is; on the top card it goes up."""
    base = server.url
    _, page = await solo_race(browser, base, game="stalactites", seed=1)
    game = core.new_game("stalactites", 1)
    before = await cards_html(page)
    t8 = page.locator('#board .pile[data-pile="t8"] .card')
    await t8.nth(0).dblclick(position={"x": 30, "y": 8})  # the bottom card, covered
    await page.wait_for_selector("#message.refused")
    assert "one card at a time" in await page.inner_text("#message")
    assert await cards_html(page) == before
    game.apply("t8 f")  # the top card, 10 of clubs, goes up onto the 9 of clubs (deal 1)
    await t8.nth(-1).dblclick(position={"x": 30, "y": 8})
    await wait_acks(page, 1)
    shown = await shown_board(page)
    piles = game.state(view="player")["piles"]
    assert shown["t8"] == piles["t8"] and shown["f2"][-1] == piles["f2"][-1] == "TC"
    assert page_errors(page) == []


# Slides made linear and ten minutes long, so that a test can stop one mid-way.
SLOW_SLIDES = """() => {
    const animate = Element.prototype.animate;
    Element.prototype.animate = function (frames, options) {
        return animate.call(this, frames, { ...options, duration: 600000, easing: "linear" });
    };
}"""


async def test_a_click_goes_to_the_card_at_rest_under_a_sliding_card(
    server: ServerProcess, browser: Browser
) -> None:
    """A card sliding to its new pile is drawn over the others for a moment; a click there
    picks the card drawn at rest under it, where the player aimed, not the card passing."""
    base = server.url
    _, page = await solo_race(browser, base, game="shaula", seed=SEED)
    await page.evaluate(SLOW_SLIDES)
    line = core.solve(core.new_game("shaula", SEED), shorten=True).moves
    for i, move in enumerate(line[:15]):
        await typed_move(page, move)
        await wait_acks(page, i + 1)
    # The last move sent the 10♣ and 9♦ from t8 onto the J♥ in t7: stop their slides
    # 70% of the way, where the 10♣ passes over the strip of the J♥ that shows.
    assert line[14] == "t8 t7 2"
    await page.evaluate(
        "() => document.getAnimations().forEach(a => { a.pause(); a.currentTime = 420000; })"
    )
    jack = await page.locator(f'{pile(page, "t7")} .card[data-card="JH"]').bounding_box()
    flying = await page.locator(f'{pile(page, "t7")} .card[data-card="TC"]').bounding_box()
    assert jack is not None and flying is not None
    x, y = jack["x"] + 30, jack["y"] + 8
    assert flying["x"] < x < flying["x"] + flying["width"]
    assert flying["y"] < y < flying["y"] + flying["height"]
    await page.mouse.click(x, y)
    picked = "cards => cards.map(c => c.dataset.card)"
    assert await page.eval_on_selector_all("#board .card.selected", picked) == ["JH", "TC", "9D"]
    # And a click on the strip where the 10♣ arrives (a fan, 24 px, below the J♥'s) picks
    # the 10♣, though it is drawn elsewhere for now.
    await page.mouse.click(100, 10)  # off the board: nothing picked
    await page.mouse.click(x, y + 24)
    assert await page.eval_on_selector_all("#board .card.selected", picked) == ["TC", "9D"]
    assert page_errors(page) == []


async def test_an_unconfirmed_resign_is_forgotten_after_a_few_seconds(
    server: ServerProcess, browser: Browser
) -> None:
    """The first click on Resign asks "sure?"; left unanswered, the button is Resign again,
    so that a click much later asks again rather than ending the race."""
    base = server.url
    room, page = await solo_race(browser, base, game="shaula", seed=SEED)
    await page.click("#resign")
    assert await page.inner_text("#resign") == "Resign: sure?"
    await page.wait_for_function(
        "() => document.querySelector('#resign').textContent === 'Resign'", timeout=6_000
    )
    await page.click("#resign")  # asks again: the race goes on
    assert await page.inner_text("#resign") == "Resign: sure?"
    assert room_view(base, room)["status"] == "running"
    await page.click("#resign")
    await page.wait_for_selector("#results-table")
    assert page_errors(page) == []


async def test_the_race_pages_head_names_the_game_and_room_and_nothing_more(
    server: ServerProcess, browser: Browser
) -> None:
    """The head of a room that is not a daily attempt has no attempt tag: it showed the
    word "null" where the tag would be, in the waiting room and through the race."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=1))["id"]
    page = await new_page(browser)
    await take_seat(page, base, room, "ann")
    head = "() => document.querySelector('.race-head').textContent"
    expected = f"Shaula room {room}Rules of Shaulashare linkwatch linkkeys ?"
    assert await page.evaluate(head) == expected
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    await page.wait_for_selector("#move-input")
    assert "null" not in await page.evaluate(head)
    assert await page.locator("#attempt-rank").count() == 0
    assert page_errors(page) == []


async def test_a_bots_tag_is_drawn_as_a_tag_beside_its_board_and_in_the_results(
    server: ServerProcess, browser: Browser
) -> None:
    """The "bot" tag is a pill set apart from the name wherever it is shown: above a
    watched board and in the results it was bare text run into the name ("bot1bot")."""
    base = server.url
    room = (await create_room(base, game="stalactites", seats=1))["id"]
    spectator = await new_page(browser)
    await spectator.goto(f"{base}/watch/{room}")
    bot = start_bot(base, room, pace=0.05)
    try:
        await spectator.wait_for_selector(".watched h3 .tag.bot")
        await spectator.wait_for_selector("#results-table .tag.bot", timeout=30_000)
    finally:
        bot.kill()
        bot.wait(5)
    style = """tag => { const s = getComputedStyle(tag);
        return [s.paddingLeft, s.borderTopLeftRadius, s.backgroundColor]; }"""
    in_bar = await spectator.eval_on_selector("#players .bar .tag.bot", style)
    assert in_bar[0] != "0px" and in_bar[1] != "0px"
    for where in (".watched h3 .tag.bot", "#results-table .tag.bot"):
        assert await spectator.eval_on_selector(where, style) == in_bar, where
    gap = await spectator.evaluate(
        """() => { const h = document.querySelector('.watched h3');
        const r = document.createRange(); r.selectNodeContents(h.firstChild);
        return h.querySelector('.tag').getBoundingClientRect().left
          - r.getBoundingClientRect().right; }"""
    )
    assert gap >= 4, "the tag is set apart from the name"
    assert page_errors(spectator) == []


async def test_the_page_says_how_long_the_rematch_waits_for_a_player_gone(
    server: ServerProcess, browser: Browser
) -> None:
    """bo left after the end without voting: once ann voted, her page says how long the
    rematch waits for him, then the new round starts without him."""
    base = server.url
    room = (await create_room(base, game="shaula", seats=2, grace=3, countdown=1))["id"]
    page = await new_page(browser)
    async with WsClient.connect(base) as bo:
        await resigned_with(page, base, room, bo)
    await page.click("#rematch")
    await page.wait_for_function(
        "() => document.body.innerText.includes('bo away: the rematch goes on without them in')"
    )
    await page.wait_for_selector("#move-input", timeout=20_000)
    assert "round 2" in await page.inner_text(".room-title")
    assert "bo" not in await page.inner_text("#players")
    assert page_errors(page) == []


async def test_a_player_who_forfeited_away_is_not_said_to_be_waited_for_after_the_end(
    server: ServerProcess, browser: Browser
) -> None:
    """bo's socket drops mid-race and he forfeits once his grace is over, ending the race:
    nothing is waited for after the end but a rematch's votes (a player's grace is over with
    the race), so the page says the race is finished, and no rematch "goes on without" bo
    before anyone asked for one."""
    base = server.url
    room = (await create_room(base, seats=2, grace=2))["id"]
    page = await new_page(browser)
    async with WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await bo.send(p.Ready())
        await start_race(page, base, room)
    await page.wait_for_function(
        "() => document.querySelector('#status').textContent.includes('bo away')"
    )
    await page.click("#resign")
    await page.click("#resign")  # "sure?"
    await page.wait_for_selector("#results-table")
    await page.wait_for_timeout(300)  # a second's tick of the status line
    assert await page.inner_text("#status") == "Finished"
    assert page_errors(page) == []


async def test_back_after_leaving_the_seat_does_not_take_it_again(
    server: ServerProcess, browser: Browser
) -> None:
    """A room made in the lobby seats its creator (its address asks for it, ?sit=1). Who
    leaves the seat and goes Back to the room's page finds the seat free to take, not taken
    again behind their back; a reload of the room's page takes none either."""
    base = server.url
    page = await new_page(browser)
    await page.goto(base)
    await page.fill("input[name=seats]", "2")
    await page.click("#create button[type=submit]")
    await page.wait_for_selector("#ready")
    room = page.url.split("/play/")[1].split("?")[0]
    assert len(room_view(base, room)["players"]) == 1  # type: ignore[arg-type]
    await page.click("#leave")
    await page.wait_for_url(f"{base}/")
    assert room_view(base, room)["players"] == []
    await page.go_back()
    await page.wait_for_selector("#take-seat")
    await page.wait_for_timeout(500)  # a join sent on the socket is answered by then
    assert room_view(base, room)["players"] == []
    await page.reload()
    await page.wait_for_selector("#take-seat")
    await page.wait_for_timeout(500)
    assert room_view(base, room)["players"] == []
    assert page_errors(page) == []


async def test_a_shared_place_at_the_end_is_said_to_be_shared(
    server: ServerProcess, browser: Browser
) -> None:
    """Two racers who both resign before a move share 1st place: the end is announced as
    a tie, not as if this player alone were 1st."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=2))["id"]
    page = await new_page(browser)
    async with racing_ann(page, base, room) as ann:
        await ann.send(p.Resign())
        await page.click("#resign")
        await page.click("#resign")  # "sure?"
        await page.wait_for_function(
            "() => document.querySelector('#announce').textContent.startsWith('The race is over')"
        )
    said = await page.inner_text("#announce")
    assert said == "The race is over: you are 1st of 2, tied with ann.", said
    assert page_errors(page) == []
    await page.context.close()


async def test_a_newcomer_to_a_race_begun_or_over_is_told_which_not_that_it_is_full(
    server: ServerProcess, browser: Browser
) -> None:
    """A room of three whose host started with two: a newcomer was told "This race has no
    free seat", of a room with a seat empty. The page says why no seat can be taken as the
    server would: the race has started, or it is over."""
    base = server.url
    room = (await create_room(base, game="shaula", seed=SEED, seats=3))["id"]
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await bo.join(room, "bo")
        await ann.join(room, "ann")
        await bo.send(p.Start())  # the host, with a seat empty
        await ann.expect(p.RaceStarted)
        page = await new_page(browser)
        for status, said in (
            ("running", "This race has started"),
            ("finished", "This race is over"),
        ):
            if status == "finished":
                await ann.send(p.Resign())
                await bo.send(p.Resign())
                await bo.expect(p.RaceFinished)
            assert room_view(base, room)["status"] == status
            await page.goto(f"{base}/play/{room}")
            notice = await page.wait_for_selector("#seat-form .notice")
            assert notice is not None
            text = await notice.inner_text()
            assert said in text and "no free seat" not in text, text
            assert await page.locator("#seat-form a[href$='/watch/" + room + "']").count() == 1
    assert page_errors(page) == []


async def test_a_typed_move_refused_stays_in_the_box_to_be_mended(
    server: ServerProcess, browser: Browser
) -> None:
    """A typed move the server refuses is put back in the box, selected, so that a typo is
    mended, not typed again; one accepted leaves the box empty for the next."""
    base = server.url
    page = await new_page(browser)
    await solo_race_on(page, base, game="shaula", seed=SEED)
    game = core.new_game("shaula", SEED)
    legal = set(game.legal_moves())
    pairs = (f"t{a} t{b}" for a in range(1, 9) for b in range(1, 9) if a != b)
    wrong = next(move for move in pairs if move not in legal)
    await typed_move(page, wrong)
    await page.wait_for_function(
        "() => document.getElementById('message').dataset.code === 'illegal_move'", polling=20
    )
    assert await page.input_value("#move-input") == wrong
    assert await page.evaluate("() => document.activeElement.id") == "move-input"
    await typed_move(page, core.solve(game).moves[0])
    await wait_acks(page, 1)
    assert await page.input_value("#move-input") == ""
    assert page_errors(page) == []
