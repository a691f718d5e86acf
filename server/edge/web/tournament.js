// A tournament's page: registration, live standings (tour_watch), the current round's
// races to watch (and the player's own race to play), the bracket of a knockout, and the
// organiser's start/pause/resume when this browser created it.

import { h, clear, copyButton, counted, fmtSeconds, keepFocus, leavingOnce } from "./dom.js";
import { games, getJSON, playerName, postJSON, saveSeat, setPlayerName } from "./api.js";
import { authed, isGuestName, me, signedIn, useName } from "./identity.js";
import { Socket } from "./net.js";
import { folded, nameLine } from "./widgets.js";

// The tournament token of this browser's player, and the organiser token of its creator.
const KEY = (id) => `solrace.tour.${id}`;
export const saveTour = (id, data) =>
  localStorage.setItem(KEY(id), JSON.stringify({ ...loadTour(id), ...data }));
function loadTour(id) {
  try {
    return JSON.parse(localStorage.getItem(KEY(id)) || "{}") || {};
  } catch {
    return {};
  }
}

const playerCount = (n) => counted(n, "player");

// Each format's columns of the standings; the first is what ranks them, the one kept on a
// phone beside the rank and the name (the others fold under the name there, with the rating).
const COLUMNS = {
  rounds: [["points", "Points"], ["wins", "Round wins"], ["time", "Time"], ["progress", "Cards"], ["rounds", "Rounds"]],
  arena: [["score", "Score"], ["wins", "Heat wins"], ["heats", "Heats"], ["streak", "Streak"], ["progress", "Cards"]],
  knockout: [["wins", "Wins"], ["out_round", "Out in round"]],
};

export async function render(root, { tour: id }) {
  const known = await games();
  let last = null; // the latest `tournament` message
  const el = {
    head: h("div", { class: "race-head" }),
    status: h("div", { class: "status-line", id: "tour-status" }),
    podium: h("section", { id: "tour-podium" }),
    mine: h("div", { id: "tour-mine" }),
    organiser: h("div", { id: "tour-organiser" }),
    live: h("section", { id: "tour-live" }),
    races: h("section", { id: "tour-races" }),
    bracket: h("section", { id: "tour-bracket" }),
    standings: h("section", { id: "tour-standings" }),
    message: h("p", { class: "message", id: "message" }),
  };
  root.append(el.head, el.status, el.podium, el.message, el.mine, el.organiser, el.live, el.bracket, el.standings, el.races);

  const say = (text, kind = "refused") => {
    el.message.textContent = text;
    el.message.className = `message ${kind}`;
  };

  const socket = new Socket({
    hello: () => ({ type: "tour_watch", tournament: id, token: loadTour(id).token, top: 100 }),
    onMessage: (m) => {
      if (m.type === "tournament") {
        if (last && m.version < last.version) return; // stale (protocol 10)
        last = m;
        draw();
      } else if (m.type === "error" && m.request === "tour_watch") {
        clear(root).append(h("p", { class: "error" }, m.message, " ", h("a", { href: "/" }, "Back to the lobby")));
        socket.close();
      }
    },
  });

  async function act(path, body) {
    try {
      // With the player key: the registration is this browser's player's (section 11).
      const answer = await authed("POST", `/tournaments/${id}/${path}`, body);
      say("", "");
      return answer;
    } catch (err) {
      say(err.message);
      return null;
    }
  }

  // A button's action asked once: the button is off from its click until it is drawn anew
  // (the push of what it changed), or given back by a refusal. A second click (a double
  // click) asked again: Start now's was refused (started already) and said so as the
  // tournament began.
  const once = (path, body) => async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    if (!(await act(path, body))) button.disabled = false;
  };

  // A push redraws the page every few seconds: the keyboard's focus stays where it was.
  function draw() {
    keepFocus(root, redraw);
  }

  function redraw() {
    const t = last.tournament;
    const mine = loadTour(id);
    clear(el.head).append(
      h("h1", { class: "room-title" }, t.name,
        h("small", {}, ` ${t.format} · ${t.games.map((g) => known[g]?.title || g).join(", ")} · ${playerCount(t.players)}`)),
      h("span", { class: "links" },
        ...t.games.map((g) => h("a", { href: `/rules/${g}`, target: "_blank" }, `Rules of ${known[g]?.title || g}`)),
        copyButton("share", `${location.origin}/tour/${id}`),
        h("a", { href: `/tournaments/${id}/standings?format=csv` }, "CSV")),
    );
    drawMine(t, mine);
    drawOrganiser(t, mine);
    drawPodium(t);
    drawStatus();
    drawLive(t);
    drawBracket(t);
    drawStandings(t);
    drawRaces(t);
  }

  // Every finished race of the tournament (a finished tournament keeps them all): its
  // round, game and deal, who raced and who won, and its replay. Read again when a race
  // may have finished (the live races changed), not on every push.
  let racesKey = null;
  async function drawRaces(t) {
    const key = `${t.status}|${t.round}|${t.live.map((r) => r.room).join()}`;
    if (key === racesKey) return;
    racesKey = key;
    let races = [];
    try {
      races = (await getJSON(`/tournaments/${id}/standings?format=json`)).races ?? [];
    } catch {
      return; // the next change asks again
    }
    if (key !== racesKey) return; // a later draw asked meanwhile
    // Read after the push that asked (not within its redraw): the focus is kept here.
    keepFocus(el.races, () => drawRaceList(t, races));
  }

  function drawRaceList(t, races) {
    clear(el.races);
    if (!races.length) return;
    // Each racer's result as the race's replay proves it (who finished, in what time; the
    // cards of the others): the ranking itself is the standings' business.
    const outcome = (race) =>
      race.results
        ? race.results.map((r) => `${r.name} ${r.won ? `finished in ${fmtSeconds(r.time)}` : counted(r.progress, "card")}`).join(" · ")
        : race.players.join(", ");
    const heads = [t.format === "arena" ? "Wave" : "Round", "Game", "Deal", "Results", ""];
    el.races.append(
      h("h2", {}, "Races"),
      h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "the tournament's races" }, h("table", { class: "rooms races stack-narrow", id: "tour-races-table" },
        h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, races.map((race) =>
          h("tr", { dataset: { room: race.room } }, [
            race.round,
            known[race.game]?.title || race.game,
            race.seed !== null && race.seed !== undefined ? `#${race.seed}` : "–",
            outcome(race),
            h("a", { class: "replay", href: `/replay/${race.room}` }, "Replay"),
          ].map((cell, i) => h("td", { dataset: { label: heads[i] } }, cell))))))),
    );
  }

  // The player's own part is drawn again only when what it says or offers changes: a push
  // for another's registration would otherwise draw the registration form anew, losing
  // the name being typed in it (and a click landing on a control just replaced).
  let mineDrawn = null;
  function drawMine(t, mine) {
    const you = last.you;
    const row = you?.standing;
    const key = JSON.stringify([
      mine.token ?? null, mine.name ?? null, t.status, you?.room ?? null, you?.seat ?? null,
      row?.rank ?? null, row?.status ?? null,
    ]);
    if (key === mineDrawn) return;
    mineDrawn = key;
    clear(el.mine);
    if (!mine.token) {
      if (t.status !== "registration") return;
      const name = h("input", { id: "tour-name", maxlength: "32", value: playerName(), placeholder: "your name" });
      // One registration at a time, and none once made (the form goes at the next push): a
      // second (a double click) was refused, the player being in already, said so on their
      // page, and put back the name they had before. true: registered.
      let busy = false;
      const register = async () => {
        const wanted = name.value.trim();
        // The registration is under the player's name (with a key, section 11), shown
        // all tournament long: the name typed becomes the player's before it registers.
        // A rename is not undone for certain (a guest's name cannot be chosen back, and
        // an old name is free for others), so what the tournament would refuse is asked
        // first, and a registration refused all the same puts a chosen name back.
        const before = (await me())?.name;
        const renaming = Boolean(wanted && before && wanted !== before);
        if (renaming) {
          const refusal = await registrationRefusal(wanted);
          if (refusal) {
            say(refusal);
            return false;
          }
        }
        const problem = await useName(wanted);
        if (problem) {
          say(`${problem}. Choose another name to register.`);
          return false;
        }
        const answer = await act("players", { name: wanted });
        if (answer) {
          setPlayerName(wanted);
          saveTour(id, { token: answer.token, name: answer.player.name });
          socket.restart(); // watch again with the token: our own line comes in `you`
          return true;
        }
        if (renaming) await putBack(before, wanted);
        return false;
      };
      el.mine.append(
        h("form", { class: "seat", onsubmit: async (e) => {
          e.preventDefault();
          if (busy) return;
          busy = true;
          let registered = false;
          try {
            registered = await register();
          } finally {
            busy = registered;
          }
        } }, h("label", {}, "Enter as ", name), h("button", { type: "submit", id: "register" }, "Register")),
      );
      return;
    }
    const marked = row && row.status !== "active" ? ` (${row.status})` : "";
    const parts = [h("span", {}, `You are in as ${mine.name}`, row ? `, rank ${row.rank}` : "", marked)];
    if (you?.room) {
      parts.push(h("a", {
        class: "button", id: "play-race", href: `/play/${you.room}`,
        onclick: () => saveSeat(you.room, { token: mine.token, seat: you.seat }),
      }, "Play your race"));
    }
    if (t.status !== "finished" && row?.status !== "removed") {
      if (row?.status === "withdrawn") {
        parts.push(h("button", { class: "secondary", id: "return", onclick: once("return", { token: mine.token }) }, "Come back"));
      } else if (row) {
        parts.push(h("button", { class: "danger", id: "withdraw", onclick: once("withdraw", { token: mine.token }) }, "Withdraw"));
      }
    }
    el.mine.append(h("div", { class: "notice mine" }, parts));
  }

  // Why the tournament would refuse a registration under `wanted` now (section 10:
  // registration closed, full, the name another registration's): "" when it would not,
  // or when it cannot be asked (the registration then answers for itself).
  async function registrationRefusal(wanted) {
    let data;
    try {
      data = await getJSON(`/tournaments/${id}/standings?format=json`);
    } catch {
      return "";
    }
    const t = data.tournament;
    if (t.status !== "registration") return "Registration has closed: the tournament has started.";
    if (t.players >= t.max_players) return "The tournament is full.";
    const folded = wanted.toLowerCase();
    if (data.standings.some((row) => row.name.toLowerCase() === folded)) {
      return `The name '${wanted}' is another player's in this tournament. Choose another name to register.`;
    }
    return "";
  }

  // After a refused registration: the player's name as it was before `wanted`, when it
  // can be chosen again (a guest's cannot); the message says which name they now have.
  async function putBack(before, wanted) {
    const refused = el.message.textContent;
    if (!isGuestName(before)) {
      try {
        const answer = await authed("POST", "/me/name", { name: before });
        await signedIn(null, answer.player);
        return;
      } catch {
        // taken meanwhile by another player: the player keeps the new name
      }
    }
    say(`${refused} (you now play as ${wanted})`);
  }

  // The organiser's buttons too: drawn anew at every push, a click pressed on one and let
  // go on its replacement (players registering by the second) was lost.
  let organiserDrawn = null;
  function drawOrganiser(t, mine) {
    const key = JSON.stringify([mine.organiser ?? null, t.status, t.paused]);
    if (key === organiserDrawn) return;
    organiserDrawn = key;
    clear(el.organiser);
    if (!mine.organiser || t.status === "finished") return;
    const token = { organiser_token: mine.organiser };
    const buttons = [];
    if (t.status === "registration") buttons.push(h("button", { id: "tour-start", onclick: once("start", token) }, "Start now"));
    else if (t.paused) buttons.push(h("button", { id: "tour-resume", onclick: once("resume", token) }, "Resume"));
    else buttons.push(h("button", { class: "secondary", id: "tour-pause", onclick: once("pause", token) }, "Pause after this round"));
    el.organiser.append(h("div", { class: "organiser" }, h("b", {}, "Organiser: "), buttons));
  }

  // The final standings' first three places, once the tournament is over.
  function drawPodium(t) {
    clear(el.podium);
    const rows = finalRows(t, last.standings).filter((row) => row.rank <= 3);
    if (!rows.length) return;
    const place = (rank) => `${rank}${["st", "nd", "rd"][rank - 1] || "th"}`;
    el.podium.append(h("ol", { class: "podium", id: "podium", "aria-label": "podium" },
      rows.map((row) => h("li", { class: `place-${row.rank}` }, h("b", {}, place(row.rank)), " ", row.name))));
  }

  function drawLive(t) {
    clear(el.live);
    if (!t.live.length) return;
    el.live.append(
      h("h2", {}, t.format === "arena" ? "Heats being raced" : `Round ${t.round}: races being raced`),
      h("ul", { class: "live-races" }, t.live.map((race) =>
        h("li", { dataset: { room: race.room } },
          h("span", {}, `${known[race.game]?.title || race.game}: ${race.players.join(" vs ")}`),
          " ", h("a", { class: "button secondary", href: `/watch/${race.room}` }, "Watch")))),
    );
  }

  function drawBracket(t) {
    clear(el.bracket);
    if (t.format !== "knockout" || !t.matches.length) return;
    const rounds = new Map();
    for (const match of t.matches) {
      if (!rounds.has(match.round)) rounds.set(match.round, []);
      rounds.get(match.round).push(match);
    }
    const name = (match, who) => {
      const player = match[who];
      if (player === null || player === undefined) return h("span", { class: "muted" }, match.how === "bye" ? "bye" : "…");
      return h("span", { class: match.winner && match.winner === player ? "winner" : null }, player);
    };
    el.bracket.append(
      h("h2", {}, "Bracket"),
      h("div", { class: "bracket", id: "bracket" }, [...rounds.entries()].sort((a, b) => a[0] - b[0]).map(([round, matches]) =>
        h("div", { class: "bracket-round" }, h("h3", {}, `Round ${round}`),
          matches.sort((a, b) => a.slot - b.slot).map((match) =>
            h("div", { class: "match", dataset: { match: String(match.id) } },
              name(match, "a"), name(match, "b"),
              match.how === "walkover" ? h("small", { class: "muted" }, "walkover") : null))))),
    );
    if (t.champion) el.bracket.append(h("p", { class: "champion" }, `Champion: ${t.champion}`));
  }

  function drawStandings(t) {
    clear(el.standings);
    const columns = COLUMNS[t.format] || [];
    const cell = (row, key) => {
      const value = row[key];
      if (key === "time") return value ? fmtSeconds(value) : "–"; // never finished: no 0:00
      if (key === "streak" && row.fire) return `${value} (double)`;
      return value ?? "";
    };
    const me = last.you?.player;
    const organiser = loadTour(id).organiser;
    const remove = (row) =>
      organiser && t.status !== "finished" && row.status !== "removed"
        ? h("button", { class: "small", dataset: { remove: String(row.player) },
          onclick: once("remove", { organiser_token: organiser, player: row.player }) }, "remove")
        : null;
    const minor = (i) => (i ? "minor" : null);
    // A rating provisional when it was registered is shown with "?", as on every page.
    const rating = (row) => (row.rating === null || row.rating === undefined ? null : `${row.rating}${row.provisional ? "?" : ""}`);
    const foldedLine = (row) => [...columns.slice(1).map(([key, label]) => [label, cell(row, key)]), ["Rating", rating(row) ?? "–"]]
      .map(([label, value]) => `${label} ${value === "" ? "–" : value}`).join(" · ");
    el.standings.append(
      h("h2", {}, "Standings"),
      last.standings.length
        ? h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "standings" }, h("table", { class: "rooms standings fold-narrow", id: "standings" },
          h("thead", {}, h("tr", {}, h("th", { class: "rank" }, "#"), h("th", { class: "player" }, "Player"),
            columns.map((c, i) => h("th", { class: minor(i) }, c[1])), h("th", { class: "minor" }, "Rating"),
            organiser ? h("th", {}, "") : null)),
          h("tbody", {}, last.standings.map((row) =>
            h("tr", { class: row.player === me ? "me" : null, dataset: { player: String(row.player) } },
              h("td", { class: "rank" }, row.rank),
              h("td", { class: "player" }, nameLine(row.name, row.status !== "active" ? h("span", { class: "tag" }, row.status) : null,
                row.bot ? h("span", { class: "tag bot" }, "bot") : null), folded(foldedLine(row))),
              columns.map(([key], i) => h("td", { class: minor(i) }, cell(row, key))),
              h("td", { class: "rating minor", title: row.provisional ? "provisional: not settled yet" : "" }, rating(row) ?? "–"),
              organiser ? h("td", {}, remove(row)) : null)))))
        : h("p", { class: "muted" }, "Nobody has registered yet."),
    );
  }

  // The status line: drawn with each push, and again on every animation frame for its
  // countdowns (a background tab runs no frames, a busy one runs them late: the push's own
  // draw keeps the line true with the rest of the page).
  function drawStatus() {
    if (last) {
      const t = last.tournament;
      let text = "";
      if (t.status === "registration") text = "Registration is open until the organiser starts.";
      else if (t.status === "finished") text = finishedText(t, last.standings);
      else if (t.format === "arena" && t.ends_at) {
        // An Arena has no rounds: heats are paired until ends_at, and those under way finish.
        const left = t.ends_at - socket.now();
        if (left <= 0) text = "The Arena is over: the last heats are finishing.";
        else text = `Arena: ${fmtSeconds(left)} left${t.paused ? " (paused: no new heats)" : ""}`;
      } else if (t.racing) {
        // A pause asked for during a round holds the next one: said now, not at its end.
        const of = t.format === "rounds" ? ` of ${t.rounds}` : "";
        const final = t.format === "rounds"
          ? t.round >= t.rounds
          : t.matches.length > 0 && t.round >= Math.max(...t.matches.map((m) => m.round));
        const held = t.paused && !final ? " (paused: the next round waits for the organiser)" : "";
        text = `Round ${t.round}${of} is being raced${held}`;
      }
      else if (t.paused) text = "Paused by the organiser.";
      else if (t.next_at) text = `Next round in ${Math.ceil(Math.max(0, t.next_at - socket.now()))} s`;
      else text = "Preparing the next round…";
      if (el.status.textContent !== text) el.status.textContent = text;
    }
  }
  function tick() {
    drawStatus();
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
}

// The rows a finished tournament ranks (its standings, section 10): those who raced in it
// and were not removed; none before its end, nor for a Knockout without a champion.
function finalRows(t, standings) {
  if (t.status !== "finished") return [];
  if (t.format === "knockout" && !t.champion) return [];
  const raced = (row) => (t.format === "rounds" ? row.rounds > 0 : t.format === "arena" ? row.heats > 0 : true);
  return standings.filter((row) => row.status !== "removed" && raced(row));
}

function finishedText(t, standings) {
  if (t.format === "knockout") return t.champion ? `Finished: ${t.champion} wins.` : "Finished.";
  const first = finalRows(t, standings).filter((row) => row.rank === 1).map((row) => row.name);
  if (!first.length) return "Finished.";
  if (first.length === 1) return `Finished: ${first[0]} wins.`;
  return `Finished: ${first.slice(0, -1).join(", ")} and ${first.at(-1)} share first place.`;
}

// The lobby's part: the tournaments list and a form to organise one.
export async function tournamentsSection(known) {
  const list = h("div", { id: "tournaments" });
  const refresh = async () => {
    try {
      const { tournaments } = await getJSON("/tournaments");
      const open = tournaments.filter((t) => t.status !== "finished").slice(0, 20);
      keepFocus(list, () => clear(list).append(open.length
        ? h("table", { class: "rooms cards-narrow" }, h("tbody", {}, open.map((t) =>
          h("tr", { dataset: { tour: t.id } },
            h("td", {}, h("a", { href: `/tour/${t.id}` }, t.name)),
            h("td", {}, t.format), h("td", {}, t.games.map((g) => known[g]?.title || g).join(", ")),
            h("td", {}, t.status), h("td", {}, playerCount(t.players))))))
        : h("p", { class: "muted" }, "No tournament open right now.")));
    } catch (err) {
      clear(list).append(h("p", { class: "error" }, err.message));
    }
  };
  const name = h("input", { name: "tour_name", required: true, maxlength: "60", placeholder: "Sunday cup" });
  const format = h("select", { name: "format" }, ["rounds", "arena", "knockout"].map((f) => h("option", { value: f }, f)));
  const game = h("select", { name: "tour_game" }, Object.entries(known).map(([n, g]) => h("option", { value: n }, g.title)));
  const rounds = h("input", { name: "rounds", type: "number", min: "1", max: "100", value: "3" });
  // The server's bounds in the fields' own units: its refusal would speak in seconds.
  const limit = h("input", { name: "tour_time_limit", type: "number", min: "1", max: "1440", value: "5" });
  const delay = h("input", { name: "tour_delay", type: "number", min: "0", max: "3600", value: "10" });
  const error = h("p", { class: "error", id: "tour-error" });
  const field = (label, input) => h("label", { class: "field" }, h("span", {}, label), input);
  const form = h("form", { class: "create", id: "tour-create" },
    field("Name", name), field("Format", format), field("Game", game), field("Rounds (or arena minutes)", rounds),
    field("Minutes per race", limit), field("Spectator delay (s)", delay),
    h("div", { class: "submit" }, h("button", { type: "submit" }, "Organise"), error));
  // One tournament per asking: a second submit (a double click) organised a second, listed
  // for everyone to find, which its organiser never saw.
  const organise = leavingOnce(async () => {
    const answer = await postJSON("/tournaments", {
      name: name.value.trim(), format: format.value, games: [game.value],
      rounds: Number(rounds.value), duration: Number(rounds.value) * 60,
      time_limit: Number(limit.value) * 60, spectator_delay: Number(delay.value),
    });
    saveTour(answer.tournament.id, { organiser: answer.organiser_token });
    location.assign(`/tour/${answer.tournament.id}`);
  }, (err) => (error.textContent = err.message));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    organise();
  });
  await refresh();
  setInterval(refresh, 5000);
  return h("section", {}, h("h2", {}, "Tournaments"), list, h("details", {}, h("summary", {}, "Organise a tournament"), form));
}
