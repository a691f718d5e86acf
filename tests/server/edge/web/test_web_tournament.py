"""Tournament pages: registration in the browser, live standings, the current round's races
to watch, the knockout bracket, and a registered player's race played from the page."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
from playwright.async_api import Browser, Page, Route
from support.finished import finish_identified_race
from support.http import get_json, post_ok
from support.players import call, new_player
from support.server_processes import ServerProcess
from support.tour_bots import FINISH, Plan, TourBot, always, create, register
from support.web import (
    new_page,
    open_tournament_form,
    page_errors,
    room_view,
    seen,
    typed_move,
    wait_acks,
)

import core


async def test_a_knockout_in_the_browser_from_registration_to_the_bracket(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    # The grace runs from the race's opening: ann's page must have taken her seat within
    # it (after the audience's checks below), on a loaded machine too, or she forfeits.
    created = await post_ok(
        base + "/tournaments",
        {"name": "Web cup", "format": "knockout", "games": ["shaula"], "winnable": False,
         "countdown": 1, "pause": 2, "time_limit": 120, "grace": 10, "spectator_delay": 0},
    )  # fmt: skip
    tid, organiser = created["tournament"]["id"], created["organiser_token"]
    ann, audience = await new_page(browser), await new_page(browser)
    await ann.goto(f"{base}/tour/{tid}")
    await ann.fill("#tour-name", "ann")
    await ann.click("#register")
    await ann.wait_for_selector("#tour-mine .mine")
    assert "You are in as ann" in await ann.inner_text("#tour-mine")
    for name in ("bo", "cy", "di"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": name})
    await audience.goto(f"{base}/tour/{tid}")
    await audience.wait_for_function(
        "() => document.querySelectorAll('#standings tbody tr').length === 4"
    )
    assert await audience.locator("#register").count() == 1  # the audience may still enter
    # The lobby lists it.
    lobby = await new_page(browser)
    await lobby.goto(base)
    await lobby.wait_for_selector(f'#tournaments tr[data-tour="{tid}"]')
    await post_ok(base + f"/tournaments/{tid}/start", {"organiser_token": organiser})
    # Live: the bracket and the races being raced appear without a reload.
    await audience.wait_for_selector("#bracket .match")
    assert await audience.locator("#bracket .match").count() >= 2
    bracket = await audience.inner_text("#bracket")
    assert all(name in bracket for name in ("ann", "bo", "cy", "di"))
    # Both races of the first round, each listed as its room comes (one may come later).
    await audience.wait_for_function(
        "() => document.querySelectorAll(\"#tour-live li a[href^='/watch/']\").length === 2"
    )
    assert await audience.locator("#tour-live li").count() == 2
    # ann plays her race from the tournament page: her seat is reserved for her token.
    await ann.click("#play-race")
    await ann.wait_for_url("**/play/*")
    await ann.wait_for_selector("#board .card", timeout=20_000)
    # She puts a card up (the solver's line to its first foundation move), then resigns:
    # more progress than her opponent, who never came, wins the match.
    room = ann.url.split("/play/")[1]
    seed = room_view(base, room)["seed"]
    assert isinstance(seed, int)
    line = core.solve(core.new_game("shaula", seed), shorten=True).moves
    assert line
    for i, move in enumerate(line):
        await typed_move(ann, move)
        await wait_acks(ann, i + 1)
        if move.split()[1].startswith("f"):
            break
    await ann.click("#resign")
    await ann.click("#resign")  # "sure?"
    # Her opponent never came: they forfeit after the grace period; the race ends and the
    # page leads back to the tournament (no rematch in a tournament).
    await ann.wait_for_selector("#back-to-tour", timeout=30_000)
    # A finished race's page links to its replay (README), a tournament's race's too.
    assert await ann.get_attribute("#replay-link", "href") == f"/replay/{room}"
    await ann.click("#back-to-tour")
    await ann.wait_for_selector("#standings")
    # The audience's standings moved on by themselves: ann has won her match.
    await audience.wait_for_function(
        "() => [...document.querySelectorAll('#standings tbody tr')]"
        ".some(r => r.children[1].textContent.startsWith('ann')"
        " && r.children[2].textContent === '1')",
        timeout=30_000,
    )
    assert "ann" in await audience.inner_text("#bracket .winner")
    # Her finished race stays on the page: its round, deal, winner and replay.
    race = audience.locator(f'#tour-races-table tr[data-room="{room}"]')
    await race.wait_for(timeout=30_000)
    cells = await race.locator("td").all_inner_texts()
    assert cells[:3] == ["1", "Shaula", f"#{seed}"]
    assert "ann 1 card" in cells[3].split(" · ")
    assert await race.locator("a.replay").get_attribute("href") == f"/replay/{room}"
    assert "null" not in await audience.inner_text("main")
    assert page_errors(ann, audience, lobby) == []


async def test_a_name_another_player_has_is_refused_and_registers_nobody(
    server: ServerProcess, browser: Browser
) -> None:
    """The name typed is the one the standings show for the whole tournament: when it
    cannot be this browser's player's (another player has it), the page says so and
    registers nobody, not its player under its old name."""
    base = server.url
    await new_player(base, "wendy")
    created = await post_ok(base + "/tournaments", {"name": "Names"})
    tid = created["tournament"]["id"]
    ann = await new_page(browser)
    await ann.goto(f"{base}/tour/{tid}")
    await ann.fill("#tour-name", "wendy")
    await ann.click("#register")
    await ann.wait_for_function(
        "() => document.querySelector('#message').textContent.includes('wendy')"
    )
    await ann.wait_for_timeout(500)  # a registration would be answered by now
    assert "wendy" in await ann.inner_text("#message")
    assert await ann.locator("#tour-mine .mine").count() == 0
    _, standings = await get_json(f"{base}/tournaments/{tid}/standings")
    assert standings["standings"] == []
    # Another name: in, as that name.
    await ann.fill("#tour-name", "ann_w")
    await ann.click("#register")
    await ann.wait_for_selector("#tour-mine .mine")
    assert "You are in as ann_w" in await ann.inner_text("#tour-mine")
    _, standings = await get_json(f"{base}/tournaments/{tid}/standings")
    assert [row["name"] for row in standings["standings"]] == ["ann_w"]
    assert await ann.inner_text("#message") == ""
    assert page_errors(ann) == []


async def test_a_name_being_typed_to_register_stays_while_others_register(
    server: ServerProcess, browser: Browser
) -> None:
    """Each registration pushes the standings, and the page draws them again: the name a
    player is typing in the registration form stays as typed. The form was drawn anew with
    the name the browser had, and the player registered under that one."""
    base = server.url
    created = await post_ok(base + "/tournaments", {"name": "Busy"})
    tid = created["tournament"]["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    await page.fill("#tour-name", "ann_t")
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "bo"})
    await page.wait_for_function(
        "() => document.querySelectorAll('#standings tbody tr').length === 1"
    )
    assert await page.input_value("#tour-name") == "ann_t"
    await page.click("#register")
    await page.wait_for_selector("#tour-mine .mine")
    assert "You are in as ann_t" in await page.inner_text("#tour-mine")
    assert page_errors(page) == []


async def _account(page: Page, base: str) -> tuple[str, str]:
    """The page's player (its key from the page's storage) and its name as the server has
    it."""
    await page.wait_for_function("() => localStorage.getItem('solrace.player')")
    key = json.loads(await page.evaluate("localStorage.getItem('solrace.player')"))["key"]
    status, body, _ = await call(base, "GET", "/me", key=key)
    assert status == 200, body
    return key, body["player"]["name"]


async def test_a_double_click_on_register_registers_once_under_the_name_typed(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on Register asks once: the second click's registration, refused
    (the player is in already), said so on the page of a player just registered and put
    back the name the player had before, under which the tournament no longer knew them."""
    base = server.url
    tid = (await post_ok(base + "/tournaments", {"name": "Twice"}))["tournament"]["id"]
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    key, _ = await _account(page, base)
    status, _, _ = await call(base, "POST", "/me/name", {"name": "zed_d"}, key)
    assert status == 200
    await page.reload()
    await page.wait_for_function("() => document.getElementById('who').textContent === 'zed_d'")
    await page.fill("#tour-name", "ann_d")
    await page.dblclick("#register")
    await page.wait_for_selector("#tour-mine .mine")

    def registrations() -> list[str]:
        return [u for u in seen(page).requests if u.endswith(f"/tournaments/{tid}/players")]

    for _ in range(20):  # a second registration would have been asked by now
        if len(registrations()) > 1:
            break
        await page.wait_for_timeout(100)
    assert len(registrations()) == 1, registrations()
    assert await page.inner_text("#message") == ""
    assert (await _account(page, base))[1] == "ann_d"
    assert page_errors(page) == []


async def test_a_refused_registration_leaves_the_players_name_as_it_was(
    server: ServerProcess, browser: Browser
) -> None:
    """The name typed to register becomes the player's name only with a registration: one
    the tournament refuses (the name is another registration's, the tournament is full, or
    it is refused after the page's checks) leaves the account's name as it was."""
    base = server.url
    taken = (await post_ok(base + "/tournaments", {"name": "Taken"}))["tournament"]["id"]
    await post_ok(base + f"/tournaments/{taken}/players", {"name": "bo"})  # without a key
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{taken}")
    key, guest = await _account(page, base)
    assert guest.startswith("Guest-")
    await page.fill("#tour-name", "bo")
    await page.click("#register")
    await page.wait_for_function("() => document.querySelector('#message').textContent")
    assert "bo" in await page.inner_text("#message")
    assert (await _account(page, base))[1] == guest
    _, free, _ = await call(base, "GET", "/names/bo")
    assert free["available"], free  # nobody became 'bo'
    # A chosen name stays too, when the tournament is full.
    status, _, _ = await call(base, "POST", "/me/name", {"name": "ann_r"}, key)
    assert status == 200
    full = await post_ok(base + "/tournaments", {"name": "Full", "max_players": 2})
    fid = full["tournament"]["id"]
    for name in ("cy", "di"):
        await post_ok(base + f"/tournaments/{fid}/players", {"name": name})
    await page.goto(f"{base}/tour/{fid}")
    await page.fill("#tour-name", "eve_r")
    await page.click("#register")
    await page.wait_for_function("() => document.querySelector('#message').textContent")
    assert "full" in await page.inner_text("#message")
    assert (await _account(page, base))[1] == "ann_r"
    # Refused only by the registration itself (the tournament filled up after the page
    # looked): the name the player had is put back.
    late = await post_ok(base + "/tournaments", {"name": "Late", "max_players": 2})
    lid = late["tournament"]["id"]
    await post_ok(base + f"/tournaments/{lid}/players", {"name": "gus"})
    await page.goto(f"{base}/tour/{lid}")
    await page.wait_for_selector("#register")

    async def meanwhile(route: Route) -> None:
        await post_ok(base + f"/tournaments/{lid}/players", {"name": "hal"})
        await route.continue_()

    await page.route(f"**/tournaments/{lid}/players", meanwhile)
    await page.fill("#tour-name", "fay_r")
    await page.click("#register")
    await page.wait_for_function("() => document.querySelector('#message').textContent")
    assert "full" in await page.inner_text("#message")
    await page.wait_for_function("() => document.querySelector('#who').textContent === 'ann_r'")
    assert (await _account(page, base))[1] == "ann_r"
    assert await page.locator("#tour-mine .mine").count() == 0
    # The one refusal the page could not foresee is the only one it met.
    assert [e for e in page_errors(page) if "status of 409" not in e] == []
    assert len(page_errors(page)) == 1


async def test_an_organiser_runs_a_tournament_from_the_browser(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    organiser = await new_page(browser)
    await open_tournament_form(organiser, base)
    await organiser.fill("input[name=tour_name]", "Club night")
    await organiser.select_option("select[name=format]", "rounds")
    await organiser.fill("input[name=rounds]", "2")
    await organiser.click("#tour-create button[type=submit]")
    await organiser.wait_for_url("**/tour/*")
    tid = organiser.url.rsplit("/", 1)[1]
    for name in ("bo", "cy", "di"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": name})
    await organiser.wait_for_function(
        "() => document.querySelectorAll('#standings tbody tr').length === 3"
    )
    await organiser.click("#standings button[data-remove]")  # the first row's player
    await organiser.wait_for_selector("#standings .tag")
    assert "removed" in await organiser.inner_text("#standings")
    await organiser.click("#tour-start")
    await organiser.wait_for_selector("#tour-pause")
    with urllib.request.urlopen(f"{base}/tournaments/{tid}", timeout=5) as answer:
        tour = json.load(answer)["tournament"]
    assert tour["status"] == "running" and tour["format"] == "rounds" and tour["rounds"] == 2
    assert page_errors(organiser) == []


async def organised(organiser: Page, base: str, name: str, kept: bool = False) -> str:
    """A tournament organised on the lobby's form, its page shown to the organiser, and bo
    and cy registered over HTTP once it is; its id. `kept`: Start now is marked before they
    register (`kept` on the element), to be found again if it was not drawn anew."""
    await open_tournament_form(organiser, base)
    await organiser.fill("input[name=tour_name]", name)
    await organiser.click("#tour-create button[type=submit]")
    await organiser.wait_for_selector("#tour-start")
    tid = organiser.url.rsplit("/", 1)[1]
    if kept:
        await organiser.evaluate("() => { document.querySelector('#tour-start').kept = 1; }")
    for player in ("bo", "cy"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": player})
    await organiser.wait_for_function(
        "() => document.querySelectorAll('#standings tbody tr').length === 2"
    )
    return tid


async def test_the_organisers_buttons_stay_as_they_are_while_players_register(
    server: ServerProcess, browser: Browser
) -> None:
    """A registration changes nothing the organiser's buttons offer: Start now stays the
    same button. It was drawn anew at every push, and a click pressed on the old button and
    let go on the new, as players registered, was lost."""
    base = server.url
    organiser = await new_page(browser)
    await organised(organiser, base, "Busy night", kept=True)
    assert await organiser.evaluate("() => document.querySelector('#tour-start').kept") == 1
    assert page_errors(organiser) == []


async def test_a_double_click_on_an_organisers_button_asks_once(
    server: ServerProcess, browser: Browser
) -> None:
    """A double click on Start now starts once, and on Pause after this round pauses
    once: the second start was refused (the tournament has started already), and the
    refusal said on the organiser's page as the tournament began."""
    base = server.url
    organiser = await new_page(browser)
    tid = await organised(organiser, base, "Twice started")

    def asked(action: str) -> list[str]:
        return [u for u in seen(organiser).requests if u.endswith(f"/tournaments/{tid}/{action}")]

    await organiser.dblclick("#tour-start")
    await organiser.wait_for_selector("#tour-pause")  # answered, and pushed
    assert asked("start") == [f"{base}/tournaments/{tid}/start"]
    await organiser.dblclick("#tour-pause")
    await organiser.wait_for_selector("#tour-resume")
    assert asked("pause") == [f"{base}/tournaments/{tid}/pause"]
    assert await organiser.inner_text("#message") == ""
    assert page_errors(organiser) == []


async def test_a_player_withdraws_comes_back_and_is_removed_from_the_page(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    created = await post_ok(base + "/tournaments", {"name": "Leavers"})
    tid, organiser = created["tournament"]["id"], created["organiser_token"]
    ann = await new_page(browser)
    await ann.goto(f"{base}/tour/{tid}")
    await ann.fill("#tour-name", "ann")
    await ann.click("#register")
    await ann.click("#withdraw")
    await ann.wait_for_selector("#return")
    assert "(withdrawn)" in await ann.inner_text("#tour-mine")
    await ann.click("#return")
    await ann.wait_for_selector("#withdraw")
    assert "withdrawn" not in await ann.inner_text("#tour-mine")
    # Removed by the organiser: the page says so and offers nothing the server would
    # refuse (no withdraw, no come back).
    await post_ok(
        base + f"/tournaments/{tid}/remove", {"organiser_token": organiser, "player": "ann"}
    )
    await ann.wait_for_function(
        "() => document.querySelector('#tour-mine').textContent.includes('removed')"
    )
    assert await ann.locator("#tour-mine button").count() == 0
    assert page_errors(ann) == []


async def test_an_arena_page_shows_the_time_left_not_rounds(
    server: ServerProcess, browser: Browser
) -> None:
    base = server.url
    created = await post_ok(
        base + "/tournaments",
        {"name": "Arena night", "format": "arena", "duration": 300, "winnable": False},
    )
    tid, organiser = created["tournament"]["id"], created["organiser_token"]
    for name in ("bo", "cy"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": name})
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_selector("#standings")
    await post_ok(base + f"/tournaments/{tid}/start", {"organiser_token": organiser})
    await page.wait_for_function(
        "() => /^Arena: [45]:\\d\\d left/.test(document.querySelector('#tour-status').textContent)"
    )
    assert "round" not in (await page.inner_text("#tour-status")).lower()
    assert page_errors(page) == []


async def test_the_status_says_a_round_being_raced_is_the_last_before_a_pause(
    server: ServerProcess, browser: Browser
) -> None:
    """The organiser's pause while a round is raced holds the next one: the page says so
    while the round goes on, not only once it has ended; the resume takes it back."""
    base = server.url
    created = await post_ok(
        base + "/tournaments",
        {
            "name": "Held",
            "rounds": 2,
            "winnable": False,
            "countdown": 1,
            "time_limit": 60,
            "grace": 5,
            "pause": 1,
        },
    )
    tid, organiser = created["tournament"]["id"], created["organiser_token"]
    for name in ("bo", "cy"):
        await post_ok(base + f"/tournaments/{tid}/players", {"name": name})
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_selector("#standings")
    await post_ok(base + f"/tournaments/{tid}/start", {"organiser_token": organiser})
    status = "document.querySelector('#tour-status').textContent"
    await page.wait_for_function(f"() => {status} === 'Round 1 of 2 is being raced'")
    await post_ok(base + f"/tournaments/{tid}/pause", {"organiser_token": organiser})
    await page.wait_for_function(f"() => {status}.includes('paused')")
    said = await page.inner_text("#tour-status")
    assert said.startswith("Round 1 of 2 is being raced") and "next round" in said, said
    _, answer = await get_json(f"{base}/tournaments/{tid}")
    assert answer["tournament"]["racing"] and answer["tournament"]["paused"]
    await post_ok(base + f"/tournaments/{tid}/resume", {"organiser_token": organiser})
    await page.wait_for_function(f"() => {status} === 'Round 1 of 2 is being raced'")
    # In the last round there is no next one to hold.
    round_two = "Round 2 of 2 is being raced"
    await page.wait_for_function(f"() => {status} === '{round_two}'", timeout=30_000)
    await post_ok(base + f"/tournaments/{tid}/pause", {"organiser_token": organiser})
    _, answer = await get_json(f"{base}/tournaments/{tid}")
    assert answer["tournament"]["paused"] and answer["tournament"]["round"] == 2
    await page.wait_for_timeout(500)  # the pause's push has come by now
    assert await page.inner_text("#tour-status") == round_two
    assert page_errors(page) == []


@pytest.mark.parametrize("fmt", ["rounds", "arena"])
async def test_a_finished_tournament_names_its_winner_and_podium(
    server: ServerProcess, browser: Browser, fmt: str
) -> None:
    """Once a Rounds or Arena tournament is over its page says who won, from the final
    standings (as a Knockout's names its champion), and shows the first three places."""
    base = server.url
    # A grace of seconds, not the quick settings' half second: a bot slow to reach its race
    # on a loaded machine would forfeit it, and the podium be a tie of nobody's results.
    tid, organiser = await create(
        base, format=fmt, rounds=1, duration=2, arena_heat=3, time_limit=60, countdown=1, grace=10
    )
    names = ["ann", "bo", "cy"]
    tokens = {name: await register(base, tid, name) for name in names}
    plans = {
        "ann": always(FINISH),
        "bo": always(Plan(pace=0.05)),  # finishes too, later
        "cy": always(Plan(moves=3, resign=True)),
    }
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_function(
        "() => document.querySelectorAll('#standings tbody tr').length === 3"
    )
    bots = [TourBot([base], tid, n, tokens[n], plans[n]) for n in names]
    running = [asyncio.create_task(bot.run(timeout=60)) for bot in bots]
    async with asyncio.timeout(30):  # every bot follows the tournament before it starts
        while not all(bot.states for bot in bots):
            await asyncio.sleep(0.05)
    await post_ok(base + f"/tournaments/{tid}/start", {"organiser_token": organiser})
    await asyncio.gather(*running)
    _, answer = await get_json(f"{base}/tournaments/{tid}/standings")
    assert [(r["rank"], r["name"]) for r in answer["standings"]] == [
        (1, "ann"), (2, "bo"), (3, "cy")
    ]  # fmt: skip
    await page.wait_for_function(
        "() => document.querySelector('#tour-status').textContent.startsWith('Finished')"
    )
    assert await page.inner_text("#tour-status") == "Finished: ann wins."
    podium = page.locator("#podium li")
    assert await podium.all_inner_texts() == ["1st ann", "2nd bo", "3rd cy"]
    # A player opening the page only now sees the same.
    late = await new_page(browser)
    await late.goto(f"{base}/tour/{tid}")
    await late.wait_for_selector("#podium li")
    assert await late.inner_text("#tour-status") == "Finished: ann wins."
    await late.screenshot(path=f"/tmp/webp-finished-{fmt}.png", full_page=True)
    assert page_errors(page, late) == []


async def test_a_tournament_of_one_player_says_one_player(
    server: ServerProcess, browser: Browser
) -> None:
    """The tournament's head and the lobby's list count its players in words: "1 player",
    then "2 players"."""
    base = server.url
    created = await post_ok(base + "/tournaments", {"name": "Small cup", "winnable": False})
    tid = created["tournament"]["id"]
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "ann"})
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_selector("#standings")
    assert (await page.inner_text("h1 small")).endswith("· 1 player")
    await page.goto(base)
    row = page.locator(f'#tournaments tr[data-tour="{tid}"]')
    await row.wait_for()
    assert (await row.locator("td").all_inner_texts())[-1] == "1 player"
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "bo"})
    await page.goto(f"{base}/tour/{tid}")
    await page.wait_for_function(
        "() => document.querySelector('h1 small')?.textContent.endsWith('· 2 players')"
    )
    assert page_errors(page) == []


async def test_a_provisional_rating_in_the_standings_has_its_question_mark(
    server: ServerProcess, browser: Browser
) -> None:
    """A rating is shown with "?" while it is provisional on every page: in a tournament's
    standings too (as it was when the player registered)."""
    base = server.url
    keys = [(await new_player(base, name))[0] for name in ("pia", "pol")]
    await finish_identified_race([base], keys, [0, 1])
    async with asyncio.timeout(20):  # archived, and rated, a moment after its end
        while not (profile := (await get_json(f"{base}/players/pia"))[1])["ratings"]:
            await asyncio.sleep(0.1)
    rating = profile["ratings"][0]["rating"]
    created = await post_ok(base + "/tournaments", {"name": "Rated cup", "winnable": False})
    tid = created["tournament"]["id"]
    status, _, _ = await call(base, "POST", f"/tournaments/{tid}/players", {}, keys[0])
    assert status == 201
    await post_ok(base + f"/tournaments/{tid}/players", {"name": "bo"})  # no rating at all
    page = await new_page(browser)
    await page.goto(f"{base}/tour/{tid}")
    cell = page.locator('#standings tr:has-text("pia") td.rating')
    await cell.wait_for()
    assert await cell.inner_text() == f"{rating}?"
    # None is an en dash, as where the row folds on a phone, not a blank.
    unrated = page.locator('#standings tr:has-text("bo") td.rating')
    assert await unrated.inner_text() == "\u2013"
    assert page_errors(page) == []


async def test_the_status_line_is_drawn_with_each_push_not_only_on_animation_frames(
    server: ServerProcess, browser: Browser
) -> None:
    """A page in a background tab runs no animation frames (and a busy one runs them late):
    the status line came only from them, so such a page said nothing, or had its podium
    drawn a moment before the line saying who won."""
    base = server.url
    created = await post_ok(base + "/tournaments", {"name": "Framed", "winnable": False})
    page = await new_page(browser)
    await page.add_init_script("window.requestAnimationFrame = () => 0;")  # frames never run
    await page.goto(f"{base}/tour/{created['tournament']['id']}")
    await page.wait_for_selector("#tour-standings:has-text('Nobody has registered yet')")
    status = page.locator("#tour-status")
    assert await status.inner_text() == "Registration is open until the organiser starts."
    assert page_errors(page) == []
