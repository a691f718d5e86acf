// The watch page: every board of a room live, side by side, with the spectator delay shown.
// `watchRoom` is also the TV page's screen.

import { h, clear, copyButton } from "./dom.js";
import { games } from "./api.js";
import { BoardView } from "./cards.js";
import { Socket, TRY_AGAIN } from "./net.js";
import { RoomModel } from "./room.js";
import { Bars, resultsTable, roomTitle, statusLine } from "./widgets.js";

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
        clear(root).append(h("p", { class: "error" }, m.message, " ", h("a", { href: "/" }, "Back to the lobby")));
        socket.close();
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
      el.delay.textContent = room.spectator_delay
        ? `You are watching ${room.spectator_delay} s behind the racers (spectator delay).`
        : "Live: no spectator delay.";
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

  // The cards' width for the boards' column: eight piles and their gaps across a board.
  function fitBoards() {
    const column = el.boards.querySelector(".watched")?.clientWidth;
    if (!column) return;
    const width = Math.max(30, Math.min(64, Math.floor((column - 20 - 8 * 4) / 8.3)));
    if (el.boards.style.getPropertyValue("--wcw") !== `${width}px`) el.boards.style.setProperty("--wcw", `${width}px`);
  }
  addEventListener("resize", fitBoards);

  function tick() {
    if (model.room) statusLine(el.status, el.overlay, model.room, socket.now() - (model.room.spectator_delay || 0), null);
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
  return { socket, model };
}
