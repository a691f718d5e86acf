// Pieces the race, watch and TV pages share: the title, progress bars, clock, results.

import { h, clear, counted, duration, fmtSeconds } from "./dom.js";
import { games, parseJSON, request } from "./api.js";
import { playerHeaders } from "./identity.js";

export function roomTitle(room, known) {
  const title = known[room.game]?.title || room.game;
  const seed = room.seed ? ` #${room.seed}` : "";
  return h(
    "h1",
    { class: "room-title" },
    `${title}${seed}`,
    h("small", {}, ` room ${room.id}${room.round > 1 ? `, round ${room.round}` : ""}`),
  );
}

function playerState(p) {
  if (p.won) return "won";
  if (p.out) return p.out;
  if (p.stuck) return "stuck";
  if (!p.connected) return "away";
  return "";
}

// The progress at each split: the quarters of the game's cards (docs/protocol.md "Splits").
export function splitMarks(cards) {
  return [1, 2, 3, 4].map((k) => Math.floor((cards * k) / 4));
}

// A split as m:ss.t, or an en dash where it was not reached.
export function fmtSplit(s) {
  if (s === null || s === undefined) return "–";
  const tenths = Math.max(0, Math.floor(s * 10));
  return `${Math.floor(tenths / 600)}:${String(Math.floor(tenths / 10) % 60).padStart(2, "0")}.${tenths % 10}`;
}

// Ahead (-) or behind (+) one's best at a split, to a tenth, half a tenth away from zero
// in whole ms as the splits are counted: "-3.2 s", "+1.0 s", "±0.0 s".
export function fmtDelta(split, best) {
  const ms = Math.round(split * 1000) - Math.round(best * 1000);
  const tenths = Math.floor((Math.abs(ms) + 50) / 100);
  const sign = tenths === 0 ? "±" : ms < 0 ? "-" : "+";
  return `${sign}${Math.floor(tenths / 10)}.${tenths % 10} s`;
}

// "13 0:41.2 · 26 1:28.0 · 39 – · 52 –": every split after its mark; with `best` (one's
// own best splits), each reached split's delta to it: "13 0:41.2 (-3.2 s) · ...".
export function splitsText(splits, cards, best = null) {
  const marks = splitMarks(cards);
  return marks.map((mark, i) => {
    const s = splits?.[i];
    const b = best?.[i];
    const delta = s != null && b != null ? ` (${fmtDelta(s, b)})` : "";
    return `${mark} ${fmtSplit(s)}${delta}`;
  }).join(" · ");
}

// Set through the CSSOM: the page's Content-Security-Policy refuses style attributes.
function fill(percent) {
  const el = h("span", { class: "fill" });
  el.style.width = `${percent}%`;
  return el;
}

// The progress bars in `root`, updated in place (a watch page redraws them every frame).
export class Bars {
  constructor(root, known) {
    this.root = root;
    this.known = known;
    this.key = null;
    this.items = new Map(); // seat -> {fill, num, tags, li}
  }

  update(room, me, best = null) {
    const key = JSON.stringify([room.status, me, room.players.map((p) => [p.seat, p.name])]);
    if (key !== this.key) {
      this.key = key;
      clear(this.root).append(progressBars(room, this.known, me));
      this.items.clear();
      for (const li of this.root.querySelectorAll("li.bar")) {
        this.items.set(Number(li.dataset.seat), {
          li, fill: li.querySelector(".fill"), num: li.querySelector(".num"),
          splits: li.querySelector(".splits"), state: null,
        });
      }
    }
    const cards = this.known[room.game]?.cards || 52;
    for (const p of room.players) {
      const item = this.items.get(p.seat);
      if (!item) continue;
      const text = `${p.progress}/${cards}`;
      if (item.num.textContent !== text) {
        item.num.textContent = text;
        item.fill.style.width = `${(100 * p.progress) / cards}%`;
      }
      const splits = item.splits ? splitsText(p.splits, cards, p.seat === me ? best : null) : "";
      if (item.splits && item.splits.textContent !== splits) item.splits.textContent = splits;
      const state = `${playerState(p)}|${p.ready}`;
      if (item.state !== null && item.state !== state) {
        this.key = null; // a tag changed (won, out, away, ready): rebuild next time
      }
      item.state = state;
    }
    if (this.key === null) this.update(room, me, best);
  }
}

export function progressBars(room, known, me = null) {
  const cards = known[room.game]?.cards || 52;
  return h(
    "ul",
    { class: "bars" },
    room.players.map((p) => {
      const state = playerState(p);
      return h(
        "li",
        { class: `bar ${state}${p.seat === me ? " me" : ""}`, dataset: { seat: String(p.seat) } },
        h("span", { class: "who", title: p.name }, p.name, p.bot ? h("span", { class: "tag bot" }, "bot") : null, p.seat === me ? " (you)" : "",
          p.ghost ? h("span", { class: "tag ghost" }, "ghost") : null,
          room.status === "lobby" && !p.ghost ? h("span", { class: "tag" }, p.ready ? "ready" : "not ready") : null,
          state ? h("span", { class: "tag" }, state) : null),
        h("span", { class: "track" }, fill((100 * p.progress) / cards)),
        h("span", { class: "num" }, `${p.progress}/${cards}`),
        room.status === "running" || room.status === "finished"
          ? h("span", { class: "splits", title: "splits: when each quarter of the cards was up" },
            splitsText(p.splits, cards))
          : null,
      );
    }),
  );
}

// The status line and the big countdown over the board; writes the DOM only on change.
export function statusLine(line, overlay, room, now, me) {
  let text = "";
  let big = "";
  if (room.status === "lobby") {
    text = `Waiting for players: ${room.players.length}/${room.seats} seated, ${room.players.filter((p) => p.ready).length} ready`;
  } else if (room.status === "countdown" && room.start_at) {
    const left = Math.max(0, room.start_at - now);
    text = `Starting in ${Math.ceil(left)} s`;
    big = String(Math.ceil(left) || "Go");
  } else if (room.status === "running") {
    const elapsed = room.start_at ? now - room.start_at : 0;
    text = room.ends_at ? `${fmtSeconds(room.ends_at - now)} left` : `${fmtSeconds(elapsed)} elapsed`;
    if (me?.won) text += " · you won, waiting for the others";
    else if (me?.out) text += ` · you are out (${me.out})`;
    else if (me?.stuck) text += room.undo ? " · no move left: undo or resign" : " · no move left";
    const away = room.players.filter((p) => !p.connected && p.grace_until && !p.out);
    for (const p of away) text += ` · ${p.name} away, forfeits in ${duration(Math.ceil(p.grace_until - now))}`;
  } else if (room.status === "finished") {
    text = room.finish_reason === "time_up" ? "Finished: time is up" : "Finished";
    // Everyone here voted for the rematch: an away player who did not is waited for a while.
    const away = room.players.filter((p) => !p.connected && p.grace_until && !p.rematch);
    for (const p of away) text += ` · ${p.name} away: the rematch goes on without them in ${duration(Math.ceil(p.grace_until - now))}`;
  }
  if (line.textContent !== text) line.textContent = text;
  if (overlay.textContent !== big) {
    overlay.textContent = big;
    overlay.hidden = !big;
  }
}

// The results, narrow enough for the race page's side panel and a phone: the result, the
// moves and the splits under the name; a time only for those who finished (no "0:00" for the rest).
export function resultsTable(room, known, me = null) {
  const cards = known[room.game]?.cards || 52;
  return h(
    "table",
    { class: "results", id: "results-table" },
    h("caption", {}, "Results"),
    h("thead", {}, h("tr", {}, [["#", "Place"], ["Player"], ["Cards"], ["Time"]].map(([t, name]) => h("th", { scope: "col", "aria-label": name ?? null }, t)))),
    h(
      "tbody",
      {},
      room.results.map((r) =>
        h(
          "tr",
          { class: r.seat === me ? "me" : null },
          h("td", { class: "rank" }, r.rank),
          h("td", { class: "who" }, h("span", { class: "name", title: r.name },
            r.player && !r.bot ? h("a", { href: `/p/${encodeURIComponent(r.name)}` }, r.name) : r.name),
            r.bot ? h("span", { class: "tag bot" }, "bot") : null,
            h("small", {}, `${r.won ? "won" : r.out || (r.stuck ? "stuck" : "unfinished")} · ${counted(r.moves, "move")}`),
            h("small", { class: "splits" }, splitsText(r.splits, cards))),
          h("td", {}, `${r.progress}/${cards}`),
          h("td", {}, r.won && r.time !== null && r.time !== undefined ? fmtSeconds(r.time) : "–"),
        ),
      ),
    ),
  );
}

// A room that is gone (it expired after its race) whose race the records keep: a note
// leading to its replay, above its results (GET /rooms/{id}/results answers from the
// records too), or null. Both are asked as this player (a daily deal's replay is theirs
// only once their own attempt is over), the replay without its body (HEAD).
export async function archivedNote(roomId) {
  const headers = playerHeaders();
  let results = null;
  try {
    const response = await request(`/rooms/${roomId}/replay`, { method: "HEAD", headers });
    if (!response.ok) return null;
    const answer = await request(`/rooms/${roomId}/results`, { headers: { ...headers, Accept: "application/json" } });
    if (answer.ok) results = parseJSON(await answer.text());
  } catch {
    return null;
  }
  const known = results ? await games().catch(() => ({})) : {};
  return h("div", { id: "archived" },
    h("p", { class: "notice" }, "This race is over, and kept in the records: ",
      h("a", { href: `/replay/${roomId}` }, "watch its replay"), " or ", h("a", { href: "/" }, "find another room"), "."),
    results?.results ? resultsTable(results, known) : null);
}

// The time limit a page starts its ghost races with (docs/protocol.md "Ghost races"), in
// minutes as the lobby's rooms take it; empty: none. `seconds()`: the request's time_limit.
export function ghostLimitField() {
  const input = h("input", { id: "ghost-limit", name: "ghost_limit", type: "number", min: "0", max: "1440", step: "any", placeholder: "none" });
  const el = h("label", { class: "field ghost-limit" }, "Time limit of a ghost race (minutes) ", input);
  const seconds = () => {
    const minutes = Number(input.value);
    return input.value === "" || !(minutes > 0) ? null : Math.max(1, Math.round(minutes * 60));
  };
  return { el, seconds };
}

// A table too wide for a phone (style.css, table.fold-narrow) keeps its main columns there;
// the others (cells of class "minor") fold into a line under the player's name, and a long
// name is cut short, whole in its title. A tap on a name shows it whole, and keeps it so
// when the table is drawn again (the standings are, at every push).
const wholeNames = new Set();

export function nameLine(name, ...tags) {
  const el = h("span", { class: wholeNames.has(name) ? "name whole" : "name", title: name }, name);
  el.addEventListener("click", () => {
    const whole = el.classList.toggle("whole");
    if (whole) wholeNames.add(name);
    else wholeNames.delete(name);
  });
  return h("div", { class: "line" }, el, ...tags);
}

// The folded cells' line: shown on a phone only, where those cells are not.
export const folded = (...children) => h("span", { class: "folded" }, ...children);
