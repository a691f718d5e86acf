// The race page: a seat in a room. Lobby (ready, start, leave), countdown on server time,
// the board (click a card then its target, drag it, or type a move in the engine's
// notation), undo/hint/autoplay where the room allows them, the other racers' progress,
// the results and rematch. Every move is checked by the server only: the board changes
// when a move is accepted, never before, so a refused move leaves it as it was.

import { h, add, clear, copyButton } from "./dom.js";
import { forgetSeat, games, getJSON, playerName, savedSeat, saveSeat, setPlayerName } from "./api.js";
import { BoardView } from "./cards.js";
import { Socket, TRY_AGAIN } from "./net.js";
import { RoomModel } from "./room.js";
import { Bars, resultsTable, roomTitle, statusLine } from "./widgets.js";

// What the tests and the bench read: ack-to-frame times (ms) of this page's moves.
// An `accepted` is drawn in the DOM at once, so the next frame shows it. ackToFrameStart:
// from its arrival to that frame's start (the frame's time; at or below 0 when that frame
// had begun but not yet drawn); ackToFrame: to this page's callback in that frame;
// ackDrawMs: the work done on it before that frame.
const stats = (window.__solrace ??= { ackToFrame: [] });
stats.ackDrawMs ??= [];
stats.ackToFrameStart ??= [];

export async function render(root, { room: roomId }) {
  const known = await games();
  let seat = savedSeat(roomId);
  const model = new RoomModel("player", (m) => socket.send(m));
  let seq = 0;
  let joined = false; // this socket's join was welcomed (moves before that: not_joined)
  const pending = new Map(); // seq -> message not answered yet
  const retried = new Set(); // seqs of moves sent again after a stale_seq (once only)
  let message = { text: "", kind: "" };
  let hintMove = null;
  let autoplaying = false;
  let drawFrame = 0; // a draw asked for the next frame (drawSoon)

  const el = {
    head: h("div", { class: "race-head" }),
    status: h("div", { class: "status-line", id: "status" }),
    overlay: h("div", { class: "overlay", id: "overlay" }),
    board: h("div", { class: "board", id: "board" }),
    side: h("aside", { class: "side" }),
    players: h("div", { id: "players" }),
    controls: h("div", { class: "controls", id: "controls" }),
    message: h("p", { class: "message", id: "message", role: "status" }),
    results: h("div", { id: "results" }),
    seatForm: h("div", { id: "seat-form" }),
  };
  root.append(
    el.head,
    el.status,
    el.seatForm,
    h("div", { class: "race" }, h("div", { class: "board-wrap" }, el.board, el.overlay), el.side),
  );
  el.side.append(el.players, el.controls, el.message, el.results);
  const bars = new Bars(el.players, known);

  // What each `legal` request was for, in order (answers come in order on one socket).
  const legalWanted = [];
  const view = new BoardView(el.board, {
    interactive: true,
    onMove: (text) => play(text),
    onDeal: () => play("deal"),
    onSelect: (sel, pattern) => {
      if (socket.send({ type: "legal" }, false)) legalWanted.push({ sel, pattern });
    },
  });

  const say = (text, kind = "") => {
    message = { text, kind };
    el.message.textContent = text;
    el.message.className = `message ${kind}`;
  };

  const socket = new Socket({
    room: roomId,
    hello: () => {
      joined = false;
      return seat ? { type: "join", room: roomId, token: seat.token, since: model.version ?? undefined } : null;
    },
    onMessage: (m, arrived) => receive(m, arrived),
    onStatus: (s) => {
      el.head.dataset.connection = s;
      if (s === "down") say("Connection lost: reconnecting…", "warn");
    },
  });

  // Above every seq this seat has used, also from another window on the same seat (the
  // clock in ms, as the terminal client does; protocol section 4).
  function nextSeq() {
    seq = Math.max(seq + 1, Date.now());
    return seq;
  }

  function play(text) {
    text = text.trim();
    if (!text) return;
    if (text.toLowerCase() === "undo") return undo();
    hintMove = null;
    view.highlight(null);
    const msg = { type: "move", seq: nextSeq(), move: text };
    pending.set(msg.seq, msg);
    socket.send(msg, false);
  }

  function undo() {
    const msg = { type: "undo", seq: nextSeq() };
    pending.set(msg.seq, msg);
    socket.send(msg, false);
  }

  function receive(m, arrived) {
    switch (m.type) {
      case "welcome":
        joined = true;
        if (m.token) {
          seat = { token: m.token, seat: m.seat };
          saveSeat(roomId, seat);
        }
        seq = Math.max(seq, m.last_seq ?? 0);
        model.handle(m);
        clear(el.seatForm);
        for (const msg of pending.values()) socket.send(msg, false); // answers we did not see
        if (message.kind === "warn") say("");
        break;
      case "accepted":
        pending.delete(m.seq);
        model.accepted(m);
        if (!autoplaying) say("");
        draw();
        stats.ackDrawMs.push(performance.now() - arrived);
        requestAnimationFrame((frame) => {
          stats.ackToFrameStart.push(frame - arrived);
          stats.ackToFrame.push(performance.now() - arrived);
        });
        return;
      case "refused": {
        const msg = pending.get(m.seq);
        pending.delete(m.seq);
        if (msg && (m.code === "unavailable" || m.code === "rate_limited")) {
          // Nothing changed: the same move, same seq, a moment later.
          pending.set(m.seq, msg);
          setTimeout(() => pending.has(m.seq) && socket.send(msg, false), 500);
          say("The server is busy: sending the move again…", "warn");
          return;
        }
        if (msg && m.code === "not_joined" && !joined) {
          // Sent before this socket's join was welcomed (or while it is being asked
          // again): not played; the welcome sends every pending move again.
          pending.set(m.seq, msg);
          return;
        }
        if (msg && m.code === "stale_seq" && !retried.has(m.seq)) {
          // Another window on this seat used that seq: the move was not played; again.
          const again = { ...msg, seq: nextSeq() };
          retried.add(again.seq);
          pending.set(again.seq, again);
          socket.send(again, false);
          return;
        }
        autoplaying = false;
        say(m.reason, "refused");
        el.message.dataset.code = m.code;
        return;
      }
      case "hint":
        hintMove = m.move ?? null;
        view.highlight(hintMove);
        say(hintMove ? `Hint: ${hintMove}` : "No move left.");
        return;
      case "legal": {
        const wanted = legalWanted.shift();
        if (wanted === "autoplay") autoplay(m.safe || []);
        else if (wanted && view.selected === wanted.sel) view.markTargets(targets(m.moves, wanted.pattern));
        return;
      }
      case "error":
        if (m.request === "join" && seat && !joined && TRY_AGAIN.has(m.code)) {
          // Our seat's join, refused for now (the server's storage is down): ask again
          // on a new socket, with backoff; pending moves wait for the welcome.
          say("The server cannot take you back yet: trying again…", "warn");
          socket.retry();
        } else if (m.request === "join" && (m.code === "bad_token" || m.code === "unknown_room")) {
          forgetSeat(roomId);
          seat = null;
          seatForm(m.code === "unknown_room" ? "This room does not exist (or expired)." : "");
        } else if (m.request === "legal") {
          legalWanted.shift(); // e.g. the race ended: no targets to show
        } else if (m.request === "join") {
          seatForm(m.message);
        } else {
          say(m.message, "refused");
        }
        return;
      default:
        break;
    }
    if (!model.handle(m)) return;
    // A change of this seat's own board (its move seen first as `progress`, or from
    // another window on the seat; a snapshot) is drawn at once, like an `accepted`; the
    // rest (the other racers' progress, the room's events) once in the next frame, however
    // many came: eight bots at full pace are hundreds of events a second.
    if (model.dirty.has(model.seat) || model.changed.has("all")) draw();
    else drawSoon();
  }

  function drawSoon() {
    drawFrame ||= requestAnimationFrame(() => {
      drawFrame = 0;
      draw();
    });
  }

  // The piles a picked-up group may go to: the legal moves that read "SRC DST [N]".
  function targets(moves, pattern) {
    const [src, , n] = pattern.split(" ");
    return moves
      .map((move) => move.split(" "))
      .filter(([s, , k]) => s === src && (k ?? null) === (n ?? null))
      .map(([, dst]) => dst);
  }

  async function autoplay(moves) {
    // The server listed the safe moves (the engine's autoplay); they go back as moves.
    if (!moves.length) {
      say("No safe move to play.");
      return;
    }
    autoplaying = true;
    for (const move of moves) if (autoplaying) play(move);
    autoplaying = false;
  }

  async function seatForm(reason = "") {
    clear(el.seatForm);
    let room = null;
    try {
      room = (await getJSON(`/rooms/${roomId}`)).room;
    } catch (err) {
      el.seatForm.append(h("p", { class: "error" }, reason || err.message, " ", h("a", { href: "/" }, "Back to the lobby")));
      return;
    }
    if (room.status !== "lobby" || room.players.length >= room.seats) {
      el.seatForm.append(
        h("p", { class: "notice" }, reason || "This race has no free seat. ",
          h("a", { href: `/watch/${roomId}` }, "Watch it"), " or ", h("a", { href: "/" }, "find another room"), "."),
      );
      return;
    }
    const name = h("input", { id: "seat-name", maxlength: "32", value: playerName(), placeholder: "your name" });
    const take = () => {
      setPlayerName(name.value.trim());
      socket.send({ type: "join", room: roomId, name: name.value.trim() });
    };
    el.seatForm.append(
      h("form", { class: "seat", onsubmit: (e) => { e.preventDefault(); take(); } },
        reason ? h("p", { class: "error" }, reason) : null,
        h("label", {}, `Take a seat in this ${known[room.game]?.title || room.game} room as `, name),
        h("button", { type: "submit", id: "take-seat" }, "Take a seat"),
        " or ", h("a", { href: `/watch/${roomId}` }, "watch")),
    );
    if (new URLSearchParams(location.search).has("sit")) take();
  }

  function drawControls() {
    const room = model.room;
    clear(el.controls);
    if (!room || model.seat === null) return;
    const me = model.player(model.seat);
    const status = room.status;
    const button = (id, text, action, opts = {}) =>
      h("button", { type: "button", id, onclick: action, ...opts }, text);
    if (status === "lobby") {
      add(el.controls, 
        button("ready", me?.ready ? "Not ready" : "Ready", () => socket.send({ type: "ready", ready: !me?.ready })),
        room.host === model.seat ? button("start", "Start now", () => socket.send({ type: "start" }), { class: "secondary" }) : null,
        button("leave", "Leave seat", () => {
          socket.send({ type: "leave" });
          forgetSeat(roomId);
          location.assign("/");
        }, { class: "secondary" }),
      );
      return;
    }
    if (status === "running" && me && !me.out && !me.won) {
      const input = h("input", {
        id: "move-input", autocomplete: "off", spellcheck: "false",
        placeholder: known[room.game]?.hidden ? "r1 f1, deal" : "t5 t2 3, t1 f",
        "aria-label": "type a move",
      });
      const form = h("form", { class: "typed", onsubmit: (e) => { e.preventDefault(); play(input.value); input.value = ""; } },
        input, h("button", { type: "submit" }, "Move"));
      add(el.controls, 
        form,
        h("div", { class: "buttons" },
          room.undo ? button("undo", "Undo", undo) : null,
          room.hints ? button("hint", "Hint", () => socket.send({ type: "hint" })) : null,
          // Moojub has no safe move (a hidden talon): no autoplay, as in the terminal client.
          known[room.game]?.hidden ? null : button("autoplay", "Autoplay", () => {
            if (socket.send({ type: "legal" }, false)) legalWanted.push("autoplay");
          }, { title: "play the safe moves to the foundations (the server lists them)" }),
          button("resign", "Resign", (e) => {
            if (e.target.dataset.sure) socket.send({ type: "resign" });
            else {
              e.target.dataset.sure = "1";
              e.target.textContent = "Resign: sure?";
            }
          }, { class: "danger" })),
      );
      return;
    }
    if (status === "finished" && room.tournament) {
      // A tournament's race has no rematch: the next race comes from the tournament.
      add(el.controls, h("a", { class: "button", id: "back-to-tour", href: `/tour/${room.tournament}` }, "Back to the tournament"));
      return;
    }
    if (status === "finished") {
      const voted = room.players.filter((p) => p.rematch).map((p) => p.name);
      add(el.controls, 
        button("rematch", me?.rematch ? "Rematch: vote sent" : "Rematch", () => socket.send({ type: "rematch" }), { disabled: me?.rematch }),
        voted.length ? h("p", { class: "muted" }, `Rematch votes: ${voted.join(", ")}`) : null,
      );
    }
  }

  let lastHead = null;
  let lastControls = null;
  function draw() {
    if (drawFrame) {
      cancelAnimationFrame(drawFrame); // this draw takes every change so far
      drawFrame = 0;
    }
    const { changed, dirty } = model.take();
    const room = model.room;
    if (!room) return;
    const me = model.seat;
    const p = model.player(me);
    // The controls are rebuilt only when what they offer changes: a rebuild would drop
    // what the player is typing.
    const controls = JSON.stringify([
      room.status, room.host, me, p?.ready, p?.out, p?.won, p?.rematch,
      room.players.map((x) => x.rematch),
    ]);
    if (controls !== lastControls) {
      lastControls = controls;
      drawControls();
    }
    const head = `${room.status}|${room.round}|${room.seed}|${room.results ? 1 : 0}`;
    if (changed.has("all") || head !== lastHead) {
      lastHead = head;
      clear(el.head).append(
        roomTitle(room, known),
        h("span", { class: "links" },
          h("a", { href: `/rules/${room.game}`, target: "_blank" }, `Rules of ${known[room.game]?.title}`),
          copyButton("share link", `${location.origin}/play/${room.id}`),
          copyButton("watch link", `${location.origin}/watch/${room.id}`)),
      );
      clear(el.results);
      if (room.results) el.results.append(resultsTable(room, known, me));
    }
    const piles = dirty.get(me);
    if (changed.has("all") || piles === "all" || view.board !== (model.boards[me] ?? null)) {
      view.set(model.boards[me] ?? null);
    } else if (piles) {
      view.drawPiles(piles); // an accepted move: its two piles, nothing else
    }
    bars.update(room, me);
  }

  // The clock: countdown to the start and the race's time, on server time.
  function tick() {
    const room = model.room;
    if (room) statusLine(el.status, el.overlay, room, socket.now(), model.player(model.seat));
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);

  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement) return;
    if (e.key === "u" && model.room?.undo) undo();
    if (e.key === "Escape") view.select(null);
  });

  if (!seat) seatForm();
}
