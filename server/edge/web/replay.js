// The replay page, /replay/RACE (RACE: an archived race's id, ROOM.ROUND, or a room's id: its
// latest finished race): the deal and
// every racer's moves on one timeline. ←/→ step one move, Home/End jump to the ends, space
// plays at 1x/4x/16x of the race's own pace; ?move=N or ?t=SECONDS opens at a move or a
// time, and the address follows the position so that it can be shared. Boards side by side
// or one at a time.
//
// The replay's text (NDJSON, docs/protocol.md "Replays") is checked here: every line's
// `prev` must be the SHA-256 of the line before (Web Crypto), and the boards the server
// computed for the page must be of this very text (their `replay_hash`). The page has no
// rules engine: the boards are the server's (GET .../replay/boards), move by move.

import { h, clear, fmtSeconds } from "./dom.js";
import { games, parseJSON, request } from "./api.js";
import { BoardView } from "./cards.js";
import { authed, playerHeaders } from "./identity.js";
import { fmtSplit, ghostLimitField, splitMarks } from "./widgets.js";

const SPEEDS = [1, 4, 16];

// RACE: an archived race's id ("ROOM.ROUND"), or a room's (its latest finished race).
function sources(race) {
  const id = encodeURIComponent(race);
  const base = race.includes(".") ? `/races/${id}` : `/rooms/${id}`;
  return { text: `${base}/replay`, boards: `${base}/replay/boards` };
}

// As this browser's player: a daily attempt's replay opens to them once theirs is over.
async function fetchText(path) {
  const response = await request(path, { headers: playerHeaders() });
  const text = await response.text();
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    try {
      message = parseJSON(text)?.error?.message || message;
    } catch {
      // not JSON: the status says it
    }
    throw new Error(message);
  }
  return text;
}

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// The chain: {ok, lines, last (the last line's hash), problem}.
export async function checkChain(lines) {
  if (!globalThis.crypto?.subtle) {
    return { ok: null, problem: "this browser offers no Web Crypto on this address (https or localhost is needed)" };
  }
  let previous = null;
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) {
      let record;
      try {
        record = parseJSON(lines[i]);
      } catch {
        return { ok: false, problem: `line ${i + 1} is not JSON` };
      }
      if (record?.prev !== previous) {
        return { ok: false, problem: `line ${i + 1} does not carry the hash of line ${i}: the replay was changed` };
      }
    }
    previous = await sha256(lines[i]);
  }
  return { ok: true, last: previous };
}

function loadStyle() {
  if (document.getElementById("replay-style")) return;
  document.head.append(h("link", { rel: "stylesheet", href: "/static/replay.css", id: "replay-style" }));
}

export async function render(root, { race }) {
  loadStyle();
  const known = await games();
  const src = sources(race);
  let text;
  try {
    text = await fetchText(src.text);
  } catch (err) {
    root.append(h("h1", {}, "Replay"), h("p", { class: "error", id: "replay-error" }, `No replay of ${race}: ${err.message}`),
      h("p", {}, h("a", { href: "/" }, "Back to the lobby")));
    return;
  }
  const lines = text.split("\n").filter((line) => line.trim());
  let header;
  let results;
  const moves = [];
  try {
    header = parseJSON(lines[0]);
    results = parseJSON(lines[lines.length - 1]);
    for (const line of lines.slice(1, -1)) {
      const m = parseJSON(line);
      moves.push({ seat: m.seat, move: m.move, t: m.t });
    }
  } catch {
    root.append(h("p", { class: "error", id: "replay-error" }, "This replay cannot be read."));
    return;
  }
  const [chain, boards] = await Promise.all([
    checkChain(lines),
    fetchText(src.boards).then(parseJSON).catch((err) => ({ error: err.message })),
  ]);
  new ReplayPage(root, { race, known, text, header, results: results.results || [], moves, chain, boards }).start();
}

class ReplayPage {
  constructor(root, { race, known, text, header, results, moves, chain, boards }) {
    Object.assign(this, { root, race, known, text, header, results, moves, chain, data: boards });
    this.players = header.players || [];
    this.names = Object.fromEntries(this.players.map((p) => [p.seat, p.bot ? `${p.name} (bot)` : p.name]));
    this.cards = known[header.game]?.cards || 52;
    this.pos = 0; // moves played: 0 is the deal
    this.playing = false;
    this.speed = 1;
    this.clock = 0; // the replay's time while playing (seconds since the start)
    this.layout = this.players.length > 1 ? "side" : "one";
    this.focus = this.players[0]?.seat ?? 0;
    this.views = new Map(); // seat -> {view, card}
  }

  // What the page says about the checks: verified, not verified, or not checked.
  verdict() {
    const { chain, data } = this;
    if (chain.ok === false) return { ok: false, text: `Not verified: ${chain.problem}.` };
    if (data.error) return { ok: false, text: `Not verified: the boards could not be loaded (${data.error}).` };
    if (chain.ok === null) return { ok: null, text: `Not checked: ${chain.problem}.` };
    if (data.replay_hash !== chain.last) {
      return { ok: false, text: "Not verified: this text is not the replay the server's boards were computed from." };
    }
    return {
      ok: true,
      text: `Verified: ${this.moves.length + 2} lines, each carrying the SHA-256 of the one before; the last is ${chain.last.slice(0, 16)}….`,
    };
  }

  start() {
    this.ghostLimit = ghostLimitField();
    const verdict = this.verdict();
    const title = this.known[this.header.game]?.title || this.header.game;
    this.el = {
      verify: h("p", { class: `verify ${verdict.ok ? "ok" : verdict.ok === false ? "bad" : "unknown"}`, id: "verify",
        dataset: { verified: String(verdict.ok) }, role: "status" },
      verdict.ok ? "✓ " : verdict.ok === false ? "✗ " : "? ", verdict.text),
      clock: h("span", { class: "replay-clock", id: "replay-clock" }),
      where: h("span", { class: "replay-where", id: "replay-where" }),
      slider: h("input", { type: "range", min: "0", max: String(this.moves.length), value: "0", id: "replay-slider",
        "aria-label": "position in the replay" }),
      play: h("button", { id: "replay-play", type: "button" }, "▶ play"),
      speed: h("select", { id: "replay-speed", "aria-label": "speed" }, SPEEDS.map((s) => h("option", { value: String(s) }, `${s}x`))),
      layout: h("button", { id: "replay-layout", type: "button", class: "secondary" }),
      seat: h("select", { id: "replay-seat", "aria-label": "whose board" },
        this.players.map((p) => h("option", { value: String(p.seat) }, this.names[p.seat]))),
      bars: h("ul", { class: "bars replay-bars", id: "replay-bars" }),
      boards: h("div", { class: "boards replay-boards", id: "replay-boards" }),
      list: h("ol", { class: "timeline", id: "timeline", start: "1" }),
    };
    const button = (label, title, action, id) =>
      h("button", { type: "button", class: "secondary", title, "aria-label": title, id, onclick: action }, label);
    const controls = h("div", { class: "replay-controls" },
      button("«", "the deal (Home)", () => this.go(0), "replay-first"),
      button("‹", "one move back (←)", () => this.go(this.pos - 1), "replay-back"),
      this.el.play,
      button("›", "one move on (→)", () => this.go(this.pos + 1), "replay-next"),
      button("»", "the end (End)", () => this.go(this.moves.length), "replay-last"),
      this.el.speed, this.el.clock, this.el.where);
    this.root.append(
      h("div", { class: "race-head" },
        h("h1", { class: "room-title" }, `Replay: ${title} #${this.header.seed}`,
          h("small", {}, ` room ${this.header.room ?? this.race}`)),
        h("span", { class: "links" }, h("a", { href: `/rules/${this.header.game}`, target: "_blank" }, "Rules"),
          // The text this page read and checked, saved as it is: a link asking for it again
          // goes without the player's key, and a daily attempt's replay is refused (403)
          // until the day is over.
          h("a", { href: URL.createObjectURL(new Blob([this.text], { type: "application/x-ndjson" })),
            download: `${this.race}.ndjson` }, "download (NDJSON)"))),
      this.el.verify,
      controls,
      this.el.slider,
      h("div", { class: "replay-view" }, this.el.layout, this.el.seat),
      this.el.bars,
      h("div", { class: "replay-main" }, this.el.boards,
        h("aside", { class: "replay-side" }, h("h2", {}, "Moves"), this.el.list)),
      this.ghostLimit.el,
      this.resultsTable(),
    );
    this.el.play.addEventListener("click", () => this.toggle());
    this.el.speed.addEventListener("change", () => (this.speed = Number(this.el.speed.value)));
    this.el.slider.addEventListener("input", () => this.go(Number(this.el.slider.value)));
    this.el.layout.addEventListener("click", () => {
      this.layout = this.layout === "side" ? "one" : "side";
      this.drawBoards();
    });
    this.el.seat.addEventListener("change", () => {
      this.focus = Number(this.el.seat.value);
      this.drawBoards();
    });
    document.addEventListener("keydown", (event) => this.key(event));
    this.drawTimeline();
    if (this.data.error) {
      this.el.boards.append(h("p", { class: "error" }, `No boards: ${this.data.error}`));
      this.boards = null;
    } else {
      this.prepare();
    }
    const query = new URLSearchParams(location.search);
    let at = 0;
    // ?move=N takes a whole number alone: "1e400" is no move 1, "2.5" no move 2 (the deal).
    if (query.has("move")) at = /^\d+$/.test(query.get("move")) ? Number(query.get("move")) : 0;
    else if (query.has("t")) at = this.moveAtTime(Number.parseFloat(query.get("t")) || 0);
    this.drawBoards();
    this.go(at, { history: false });
  }

  // Every step's effect both ways: applying step i sets its piles; going back restores
  // what it replaced (computed once, forwards from the deal).
  prepare() {
    const start = this.data.start;
    this.boards = {};
    for (const p of this.players) this.boards[p.seat] = JSON.parse(JSON.stringify(start));
    const shadow = JSON.parse(JSON.stringify(this.boards));
    const stats = Object.fromEntries(this.players.map((p) => [p.seat, { progress: 0, moves: 0, talon_count: start.talon_count }]));
    this.before = this.data.steps.map((step) => {
      const board = shadow[step.seat];
      const back = { piles: {}, progress: stats[step.seat].progress, moves: stats[step.seat].moves,
        talon_count: stats[step.seat].talon_count };
      for (const [pile, cards] of Object.entries(step.piles)) {
        back.piles[pile] = board.piles[pile];
        board.piles[pile] = cards;
      }
      stats[step.seat] = { progress: step.progress, moves: step.moves, talon_count: step.talon_count ?? stats[step.seat].talon_count };
      return back;
    });
    this.stats = Object.fromEntries(this.players.map((p) => [p.seat, { progress: 0, moves: 0 }]));
  }

  moveAtTime(t) {
    let n = 0;
    while (n < this.moves.length && this.moves[n].t <= t) n++;
    return n;
  }

  key(event) {
    if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
    if (event.target instanceof HTMLSelectElement) return;
    // Space on a focused control is that control's (a button is pressed by it): the page's
    // play/pause was started instead of the step, the layout or the ghost race asked for.
    if (event.key === " " && event.target instanceof Element && event.target.closest("button, a, summary")) return;
    const actions = {
      ArrowLeft: () => this.go(this.pos - 1),
      ArrowRight: () => this.go(this.pos + 1),
      Home: () => this.go(0),
      End: () => this.go(this.moves.length),
      " ": () => this.toggle(),
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  }

  // Stand after `n` moves; the boards change by the steps in between.
  go(n, { history = true, playing = false } = {}) {
    if (!playing && this.playing) this.stop();
    n = Math.max(0, Math.min(this.moves.length, n));
    const changed = new Map(); // seat -> Set of piles
    const touch = (seat, piles) => {
      if (!changed.has(seat)) changed.set(seat, new Set());
      for (const pile of piles) changed.get(seat).add(pile);
    };
    if (this.boards) {
      while (this.pos < n) {
        const step = this.data.steps[this.pos];
        const board = this.boards[step.seat];
        Object.assign(board.piles, step.piles);
        if (step.talon_count !== undefined) board.talon_count = step.talon_count;
        this.stats[step.seat] = { progress: step.progress, moves: step.moves };
        touch(step.seat, Object.keys(step.piles));
        this.pos++;
      }
      while (this.pos > n) {
        this.pos--;
        const step = this.data.steps[this.pos];
        const back = this.before[this.pos];
        const board = this.boards[step.seat];
        Object.assign(board.piles, back.piles);
        if (back.talon_count !== undefined) board.talon_count = back.talon_count;
        this.stats[step.seat] = { progress: back.progress, moves: back.moves };
        touch(step.seat, Object.keys(back.piles));
      }
    } else {
      this.pos = n;
    }
    if (!playing) this.clock = this.timeAt(this.pos);
    for (const [seat, piles] of changed) {
      const entry = this.views.get(seat);
      if (!entry) continue;
      if (piles.size > 12) entry.view.set(this.boards[seat]);
      else {
        entry.view.drawPiles([...piles]);
        entry.view.drawTalon();
      }
    }
    this.drawPosition(history);
  }

  timeAt(pos) {
    return pos > 0 ? this.moves[pos - 1].t : 0;
  }

  toggle() {
    if (this.playing) {
      this.stop();
      return;
    }
    if (this.pos >= this.moves.length) this.go(0);
    this.playing = true;
    this.el.play.textContent = "⏸ pause";
    this.clock = this.timeAt(this.pos);
    let last = performance.now();
    const frame = (now) => {
      if (!this.playing) return;
      this.clock += ((now - last) / 1000) * this.speed;
      last = now;
      const n = this.moveAtTime(this.clock);
      if (n !== this.pos) this.go(n, { history: false, playing: true });
      else this.drawClock();
      if (this.pos >= this.moves.length) {
        this.stop();
        return;
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }

  stop() {
    this.playing = false;
    this.el.play.textContent = "▶ play";
    this.drawPosition(true);
  }

  drawClock() {
    this.el.clock.textContent = `${fmtSeconds(this.clock)}.${Math.floor((this.clock % 1) * 10)}`;
    this.drawBars();
  }

  drawPosition(history) {
    this.el.slider.value = String(this.pos);
    this.el.where.textContent = `move ${this.pos} of ${this.moves.length}`;
    this.root.dataset.pos = String(this.pos);
    this.drawClock();
    const current = this.el.list.querySelector("li.current");
    current?.classList.remove("current");
    if (this.pos > 0) {
      const li = this.el.list.children[this.pos - 1];
      li.classList.add("current");
      this.scrollTo(li);
    } else {
      this.el.list.scrollTop = 0; // the deal: the first moves in sight, as at the start
    }
    for (const [seat, entry] of this.views) {
      const last = this.pos > 0 ? this.moves[this.pos - 1] : null;
      entry.card.classList.toggle("moved", last?.seat === seat);
      entry.last.textContent = this.lastMoveOf(seat);
    }
    if (history && !this.playing) {
      const url = new URL(location.href);
      url.search = this.pos ? `?move=${this.pos}` : "";
      window.history.replaceState(null, "", url);
    }
  }

  // Keep the current move in sight in the list (the list scrolls, never the page).
  scrollTo(li) {
    const list = this.el.list;
    const top = li.offsetTop;
    if (top < list.scrollTop || top + li.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 2);
    }
  }

  lastMoveOf(seat) {
    for (let i = this.pos - 1; i >= 0; i--) {
      if (this.moves[i].seat === seat) return `${this.moves[i].move} at ${fmtSeconds(this.moves[i].t)}`;
    }
    return "the deal";
  }

  drawBars() {
    const marks = splitMarks(this.cards);
    const rows = this.players.map((p) => {
      const stats = this.stats?.[p.seat] ?? { progress: 0, moves: 0 };
      const splits = this.data.splits?.[String(p.seat)] ?? [];
      const shown = marks.map((mark, i) => {
        const s = splits[i];
        return `${mark} ${s !== null && s !== undefined && s <= this.clock + 1e-9 ? fmtSplit(s) : "–"}`;
      }).join(" · ");
      return JSON.stringify([p.seat, stats.progress, stats.moves, shown]);
    });
    const key = rows.join("|");
    if (key === this.barsKey) return;
    this.barsKey = key;
    clear(this.el.bars).append(...rows.map((row) => {
      const [seat, progress, moves, shown] = JSON.parse(row);
      const fill = h("span", { class: "fill" });
      fill.style.width = `${(100 * progress) / this.cards}%`;
      return h("li", { class: "bar", dataset: { seat: String(seat) } },
        h("span", { class: "who" }, this.names[seat]),
        h("span", { class: "track" }, fill),
        h("span", { class: "num" }, `${progress}/${this.cards} · ${moves} mv`),
        h("span", { class: "splits" }, shown));
    }));
  }

  drawTimeline() {
    const multi = this.players.length > 1;
    clear(this.el.list).append(...this.moves.map((m, i) =>
      h("li", { dataset: { n: String(i + 1) }, onclick: () => this.go(i + 1) },
        h("span", { class: "t" }, fmtSeconds(m.t)),
        multi ? h("span", { class: "who" }, this.names[m.seat]) : null,
        h("code", {}, m.move))));
  }

  drawBoards() {
    this.el.layout.textContent = this.layout === "side" ? "one board at a time" : "boards side by side";
    this.el.layout.hidden = this.players.length < 2;
    this.el.seat.hidden = this.layout === "side" || this.players.length < 2;
    this.el.seat.value = String(this.focus);
    this.el.boards.dataset.layout = this.layout;
    if (!this.boards) return;
    clear(this.el.boards);
    this.views.clear();
    const seats = this.layout === "side" ? this.players.map((p) => p.seat) : [this.focus];
    for (const seat of seats) {
      const boardEl = h("div", { class: this.layout === "side" && seats.length > 1 ? "board small" : "board" });
      const last = h("span", { class: "last-move" });
      const card = h("section", { class: "watched", dataset: { seat: String(seat) } },
        h("h3", {}, this.names[seat] ?? `seat ${seat}`, " ", last), boardEl);
      const view = new BoardView(boardEl);
      view.set(this.boards[seat]);
      this.views.set(seat, { view, card, last });
      this.el.boards.append(card);
    }
    this.drawPosition(false);
  }

  // A ghost race against this racer's run: a new room, then its race page. The button is
  // off until the answer (a second click made a second room), and on again when the page
  // is shown anew from the back button.
  async raceGhost(seat, button) {
    button.disabled = true;
    addEventListener("pageshow", () => (button.disabled = false), { once: true });
    try {
      const answer = await authed("POST", "/rooms", { ghost: this.race, ghost_seat: seat, time_limit: this.ghostLimit.seconds() });
      location.assign(`/play/${answer.room.id}?sit=1`); // its creator races the ghost
    } catch (err) {
      button.disabled = false;
      button.after(h("span", { class: "error" }, ` ${err.message}`));
    }
  }

  resultsTable() {
    const rows = [...this.results].sort((a, b) => (b.won - a.won) || ((a.time ?? 0) - (b.time ?? 0)) || (b.progress - a.progress));
    // On a phone each racer's row stacks, each value under its column's name (style.css,
    // stack-narrow): the page never scrolls sideways, nor does the table in its box.
    const heads = ["Player", "Result", "Cards", "Moves", "Splits", ""];
    const cell = (i, attrs, ...content) => h("td", { ...attrs, dataset: { label: heads[i] } }, ...content);
    return h("div", { class: "table-scroll" }, h("table", { class: "results replay-results stack-narrow", id: "replay-results" },
      h("caption", {}, "Results (as the moves give them)"),
      h("thead", {}, h("tr", {}, heads.map((t) => h("th", {}, t)))),
      h("tbody", {}, rows.map((r) => {
        const splits = this.data.splits?.[String(r.seat)] ?? [];
        return h("tr", {},
          cell(0, {}, r.name),
          cell(1, {}, r.won ? `won in ${fmtSeconds(r.time)}` : "unfinished"),
          cell(2, {}, `${r.progress}/${this.cards}`),
          cell(3, {}, r.moves),
          cell(4, { class: "splits" }, splitMarks(this.cards).map((mark, i) => `${mark} ${fmtSplit(splits[i])}`).join(" · ")),
          cell(5, {}, h("button", { type: "button", class: "small race-ghost", dataset: { seat: String(r.seat) },
            title: `race ${r.name}'s run on this deal, by its recorded times (never rated)`,
            onclick: (event) => this.raceGhost(r.seat, event.currentTarget) }, "race this ghost")));
      }))));
  }
}
