// The daily deal, /daily (docs/protocol.md section 13): today's deal of each game, its board
// (live as attempts end), past days' boards, your streaks; start (or come back to) your
// ranked attempt, or practise once it is over. What makes an attempt unranked, and that its
// clock does not stop, is said before the start.
//
// Acting as a player is identity.js's: its key goes in the Authorization header only.

import { h, clear, counted, fmtMillis, keepFocus, leavingOnce } from "./dom.js";
import { games, saveSeat } from "./api.js";
import { authed, me } from "./identity.js";
import { folded, ghostLimitField, nameLine } from "./widgets.js";

const REFRESH = 5000; // ms between readings of today's boards

// A request as this browser's player (made on the first start if there is none yet).
async function request(method, path, body = undefined, { needKey = false } = {}) {
  if (needKey) await me();
  return authed(method, path, body);
}

function loadStyle() {
  if (document.getElementById("replay-style")) return;
  document.head.append(h("link", { rel: "stylesheet", href: "/static/replay.css", id: "replay-style" }));
}

export async function render(root, { date = null } = {}) {
  loadStyle();
  const known = await games();
  const today = await request("GET", "/daily");
  const shown = date || today.date;
  const el = {
    streaks: h("p", { class: "streaks", id: "daily-streaks" }),
    cards: h("div", { class: "daily-games", id: "daily-games" }),
    proof: h("details", { class: "daily-proof" }),
  };
  const limit = ghostLimitField(); // for every "race its ghost" of the page
  const picker = h("input", { type: "date", id: "daily-date", value: shown, max: today.date, "aria-label": "day" });
  picker.addEventListener("change", () => {
    if (picker.value) location.assign(picker.value === today.date ? "/daily" : `/daily/${picker.value}`);
  });
  root.append(
    h("div", { class: "race-head" }, h("h1", {}, shown === today.date ? "Today's deals" : `The deals of ${shown}`),
      h("label", { class: "field" }, "day ", picker)),
    el.streaks,
    h("p", { class: "muted" },
      "One deal a game for everyone, proved winnable before the day began (UTC). Your first attempt at each is ranked: by won, then time, then moves. ",
      "Undo makes it unranked, hints are off; the clock is the server's and does not stop, even with the page closed."),
    limit.el,
    el.cards,
    el.proof,
  );
  async function draw() {
    const current = shown === today.date ? await request("GET", "/daily") : today;
    if (current.streaks) {
      const { played, won } = current.streaks;
      el.streaks.textContent = played
        ? `Your streaks: ${counted(played, "day")} in a row played; ${won ? `${counted(won, "day")} in a row won` : "no day won in a row yet"}.`
        : "No streak running: an attempt today starts one.";
    }
    const boards = await Promise.all(Object.keys(known).map((game) => request("GET", `/daily/${shown}/${game}`)));
    // Drawn again every few seconds: the control the keyboard is on keeps the focus.
    keepFocus(el.cards, () => clear(el.cards).append(...boards.map((board) => gameCard(board, known, shown === today.date, limit))));
    keepFocus(el.proof, () => clear(el.proof).append(
      h("summary", { id: "daily-proof-summary" }, "How the deals are chosen, and how to check them"),
      h("p", {}, `Commitment of ${shown} (the SHA-256 of its key): `, h("code", {}, boards[0].commitment)),
      boards[0].key
        ? h("p", {}, "Its key, published once the day was over: ", h("code", { class: "key" }, boards[0].key))
        : h("p", {}, `Yesterday's key (${today.yesterday.date}): `, h("code", { class: "key" }, today.yesterday.key)),
      h("p", {}, "Each game's candidates are HMAC-SHA256(key, \"GAME n\") (first 8 bytes, modulo 2^63-1, plus 1); the deal is the first the solver proves winnable within 20,000 positions. ",
        h("a", { href: "/rules" }, "Rules of the games")),
    ));
  }
  try {
    await draw();
  } catch (err) {
    // A day not begun yet, or no date at all, in the address: the server's reason.
    el.proof.remove();
    clear(el.cards).append(h("p", { class: "error", id: "daily-error" }, `No deals for ${shown}: ${err.message}`));
    return;
  }
  if (shown === today.date) setInterval(() => draw().catch(() => {}), REFRESH);
}

// An attempt (or a practice) asked for, and not refused: the page goes to its race. Once
// for the page (the boards are drawn anew every few seconds): a second ask (a double
// click) opened the attempt again, which hands its seat a new token (a second window's),
// and the page went to the race with the first one's, no longer the seat's: it found the
// seat gone while the attempt's clock ran.
const start = leavingOnce(async (game, practice) => {
  const answer = await request("POST", `/daily/${game}`, practice ? { practice: true } : {}, { needKey: true });
  saveSeat(answer.room.id, { token: answer.token, seat: answer.seat });
  location.assign(`/play/${answer.room.id}`);
}, (err, game, practice, say) => (say.textContent = err.message));

// A ghost race against an attempt's run (open once your own attempt is over).
const raceGhost = leavingOnce(async (room, say, limit) => {
  const answer = await authed("POST", "/rooms", { ghost: room, time_limit: limit.seconds() });
  location.assign(`/play/${answer.room.id}?sit=1`); // its creator races the ghost
}, (err, room, say) => (say.textContent = err.message));

function gameCard(board, known, isToday, limit) {
  const game = board.game;
  const title = known[game]?.title || game;
  const mine = board.you;
  const action = h("div", { class: "daily-action" });
  const say = h("p", { class: "message", role: "status" });
  if (isToday) {
    if (!mine) {
      action.append(h("button", { type: "button", class: "daily-start", dataset: { game }, onclick: () => start(game, false, say) },
        "Start my ranked attempt"));
    } else if (!mine.finished) {
      action.append(h("button", { type: "button", class: "daily-start", dataset: { game }, onclick: () => start(game, false, say) },
        `Back to my attempt (running since ${new Date(mine.started_at * 1000).toLocaleTimeString()})`));
    } else {
      action.append(
        h("span", {}, mine.won ? `You won in ${fmtMillis(mine.time)}, ${mine.moves} moves` : `You ended with ${counted(mine.progress, "card")} up`,
          mine.ranked ? "" : " (unranked: undo)"),
        " ",
        h("button", { type: "button", class: "secondary daily-practice", onclick: () => start(game, true, say) }, "Practise this deal"),
      );
    }
  }
  const rows = board.board.map((r) =>
    h("tr", { class: mine && r.room === mine.room ? "me" : null, dataset: { room: r.room ?? "" } },
      h("td", {}, r.place),
      h("td", { class: "player" }, nameLine(r.name, r.bot ? h("span", { class: "tag bot" }, "bot") : null), folded(counted(r.moves, "move"))),
      h("td", {}, r.won ? fmtMillis(r.time) : counted(r.progress, "card")),
      h("td", { class: "minor" }, r.moves),
      h("td", { class: "links" }, r.room ? [h("a", { href: `/replay/${r.room}` }, "replay"), " · ",
        h("button", { type: "button", class: "small daily-ghost", title: "race this run as a ghost (not ranked)",
          onclick: () => raceGhost(r.room, say, limit) }, "race its ghost")] : "")));
  return h("section", { class: "daily-game", dataset: { game } },
    h("h2", {}, title, board.seed ? h("small", { class: "muted" }, ` #${board.seed}`) : null),
    action, say,
    h("div", { class: "table-scroll" },
      // On a phone its rows fold (style.css): an empty board needs no folding.
      h("table", { class: rows.length ? "results daily-board fold-narrow" : "results daily-board" },
        h("caption", {}, `Board: ${board.board.length} ranked`, board.running ? `, ${board.running} racing now` : "",
          board.unranked ? `, ${board.unranked} unranked` : ""),
        h("thead", {}, h("tr", {}, ["#", "Player", "Time", "Moves", ""].map((t, i) =>
          h("th", { class: [null, "player", null, "minor", null][i] }, t)))),
        h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: "5", class: "muted" },
          isToday ? "No attempt is over yet." : "Nobody was ranked that day."))))));
}
