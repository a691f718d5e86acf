// The watch page: every board of a room live, side by side, with the spectator delay shown.
// `watchRoom` is also the TV page's screen.

import { h, clear, copyButton } from "./dom.js";
import { games } from "./api.js";
import { BoardView } from "./cards.js";
import { Socket, TRY_AGAIN } from "./net.js";
import { RoomModel } from "./room.js";
import { Bars, archivedNote, resultsTable, roomTitle, statusLine } from "./widgets.js";

export async function render(root, { room }) {
  await watchRoom(root, room);
}

// Watch `roomId` in `root`; onEvent(model) after every room message (the TV listens).
export async function watchRoom(root, roomId, { onEvent = null } = {}) {
  const known = await games();
  const model = new RoomModel("spectator", (m) => socket.send(m));
  const el = {
    head: h("div", { class: "race-head" }),
    delay: h("p", { class: "delay", id: "delay" }),
    status: h("div", { class: "status-line", id: "status" }),
    overlay: h("div", { class: "overlay" }),
    boards: h("div", { class: "boards", id: "boards" }),
    players: h("div", { id: "players" }),
    results: h("div", { id: "results" }),
  };
  // Boards side by side across the whole window, however wide (style.css main.wide).
  root.closest("main")?.classList.add("wide");
  root.append(el.head, el.delay, el.status, el.players, h("div", { class: "board-wrap" }, el.boards, el.overlay), el.results);
  const views = new Map(); // seat -> {view, card}
  let pendingDraw = false;

  const socket = new Socket({
    room: roomId,
    hello: () => ({ type: "watch", room: roomId, since: model.version ?? undefined }),
    onMessage: (m) => {
      if (m.type === "error" && m.request === "watch" && TRY_AGAIN.has(m.code)) {
        socket.retry(); // refused for now (the server's storage is down): again, later
        return;
      }
      if (m.type === "error" && m.request === "watch") {
        socket.close();
        const refused = h("p", { class: "error" }, m.message, " ", h("a", { href: "/" }, "Back to the lobby"));
        if (m.code !== "unknown_room") clear(root).append(refused);
        else archivedNote(roomId).then((note) => clear(root).append(note ?? refused));
        return;
      }
      if (model.handle(m)) {
        // Many boards at the fastest bot pace: draw at most once a frame.
        if (!pendingDraw) {
          pendingDraw = true;
          requestAnimationFrame(draw);
        }
        onEvent?.(model);
      }
    },
  });

  function boardCard(seat) {
    const p = model.player(seat);
    const boardEl = h("div", { class: "board small" });
    const card = h("section", { class: "watched", dataset: { seat: String(seat) } }, h("h3", {}, p?.name ?? `seat ${seat}`, p?.bot ? h("span", { class: "tag bot" }, "bot") : null), boardEl);
    return { view: new BoardView(boardEl), card };
  }

  let lastHead = null;
  let lastResults = null;
  const bars = new Bars(el.players, known);
  function draw() {
    pendingDraw = false;
    const { changed, dirty } = model.take();
    const room = model.room;
    if (!room) return;
    const head = `${room.status}|${room.round}|${room.seed}`;
    if (head !== lastHead || changed.has("all")) {
      lastHead = head;
      clear(el.head).append(
        roomTitle(room, known),
        h("span", { class: "links" },
          h("a", { href: `/rules/${room.game}`, target: "_blank" }, `Rules of ${known[room.game]?.title}`),
          copyButton("share", `${location.origin}/watch/${room.id}`)),
      );
      // Once the race is over there is nothing live to say: its replay steps through it.
      if (room.status === "finished") {
        el.delay.replaceChildren("The race is over. ",
          h("a", { class: "button secondary", id: "replay-link", href: `/replay/${room.id}` }, "Watch the replay"));
      } else {
        el.delay.textContent = room.spectator_delay
          ? `You are watching ${room.spectator_delay} s behind the racers (spectator delay).`
          : "Live: no spectator delay.";
      }
      el.delay.dataset.delay = String(room.spectator_delay);
    }
    bars.update(room, null);
    if (room.results !== lastResults) {
      lastResults = room.results;
      clear(el.results);
      if (room.results) el.results.append(resultsTable(room, known));
    }
    const seats = Object.keys(model.boards).map(Number).sort((a, b) => a - b);
    if (changed.has("all") || seats.join() !== [...views.keys()].join()) {
      clear(el.boards);
      views.clear();
      for (const seat of seats) {
        const entry = boardCard(seat);
        views.set(seat, entry);
        el.boards.append(entry.card);
        entry.view.set(model.boards[seat]);
      }
      el.boards.dataset.count = String(seats.length);
      fitBoards();
    } else {
      // Only the piles the moves since the last frame changed (many boards, fast bots).
      for (const [seat, piles] of dirty) {
        const view = views.get(seat)?.view;
        if (!view) continue;
        if (piles === "all" || view.board !== model.boards[seat]) view.set(model.boards[seat]);
        else view.drawPiles(piles);
      }
    }
  }

  // The boards' layout, set once per layout (the boards drawn anew, the window resized),
  // not per frame: the columns and the cards' width (--wcw) that show every board in the
  // window below the bars at the largest cards that fit (a full room on a wide screen is
  // seen whole, two boards large); when no size from a phone's up fits them all, as many
  // columns as boards of 330 px fit, the page scrolled. A board is eight piles and their
  // gaps across: BOARD_EDGE + 8.3 cards wide.
  const GAP = 14; // the grid's gap (style.css .boards)
  const BOARD_EDGE = 52;
  const [SMALLEST, RACE_CARD, LARGEST] = [30, 64, 90];
  function fitBoards() {
    for (let pass = 0; pass < 3; pass++) {
      // Measured at the size drawn: fitted again from there until it holds.
      if (!fitOnce()) return;
    }
  }
  function fitOnce() {
    const cards = [...el.boards.querySelectorAll(".watched")];
    const width = el.boards.clientWidth;
    if (!cards.length || !width) return false;
    const count = cards.length;
    const now = parseFloat(el.boards.style.getPropertyValue("--wcw")) || 34;
    // A board's height goes with its cards' width; its piles grow as the race goes on.
    const tall = 1.15 * Math.max(...cards.map((c) => c.offsetHeight));
    const below = innerHeight - (el.boards.getBoundingClientRect().top + scrollY) - 16;
    const across = (cols) => Math.floor(((width - GAP * (cols - 1)) / cols - BOARD_EDGE) / 8.3);
    let fit = { cols: 1, card: 0 };
    for (let cols = 1; cols <= count; cols++) {
      const rows = Math.ceil(count / cols);
      const down = Math.floor((now * ((below - GAP * (rows - 1)) / rows)) / tall);
      const card = Math.min(LARGEST, across(cols), down);
      if (card > fit.card) fit = { cols, card };
    }
    if (fit.card < SMALLEST) {
      const cols = Math.max(1, Math.min(count, Math.floor((width + GAP) / (330 + GAP))));
      fit = { cols, card: Math.max(SMALLEST, Math.min(RACE_CARD, across(cols))) };
    }
    const style = el.boards.style;
    const column = `${Math.min(Math.floor((width - GAP * (fit.cols - 1)) / fit.cols), Math.ceil(8.3 * fit.card + BOARD_EDGE))}px`;
    if (style.getPropertyValue("--wcw") === `${fit.card}px` && el.boards.dataset.cols === String(fit.cols)) return false;
    style.setProperty("--wcw", `${fit.card}px`);
    style.setProperty("--cols", String(fit.cols));
    style.setProperty("--column", column);
    el.boards.dataset.cols = String(fit.cols);
    return true;
  }
  addEventListener("resize", fitBoards);

  function tick() {
    if (model.room) statusLine(el.status, el.overlay, model.room, socket.now() - (model.room.spectator_delay || 0), null);
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
  return { socket, model };
}
