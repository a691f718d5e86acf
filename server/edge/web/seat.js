// A seat in a room as the race page holds it: the browser twin of the terminal client's
// client_cli/seat.py. It owns the socket, the seat's token (kept in localStorage), the
// room's model and the requests waiting for their answer: moves and undos by seq (sent
// again, same seq, after a reconnect or a "not now"), and the legal-move lists in the order
// they were asked. The page only draws: it calls move(), undo(), ready() ... and hears back
// through the callbacks below. Every move is refereed by the server (protocol section 4).
//
// Callbacks (all optional):
//   onWelcome()        this socket's join was welcomed: the page is in its seat
//   onChange(now)      the model changed: now=true for this seat's own board (draw at once),
//                      false for the rest (draw in the next frame)
//   onAccepted(m)      one of this seat's moves was accepted (after onChange(true))
//   onRefused(m, sent) a move was refused for good (m.reason, m.code; what was sent), or
//                      another request (m.request: ready, start, ...; sent undefined)
//   onHint(move|null)  the answer to hint()
//   onNotice(text, kind)  a passing state in words ("warn"), or "" when it is over
//   onSeatless(reason, code) the page has no seat here: offer one ("" when there is no
//     reason; `code`: the refusal's, such as unknown_room)
//   onElsewhere()      the seat is held by another window now: offer to play here (rejoin)
//   onStatus(status)   the socket's state: "connecting", "open", "down"

import { forgetSeat, savedSeat, saveSeat } from "./api.js";
import { Socket, TRY_AGAIN } from "./net.js";
import { RoomModel } from "./room.js";

const BUSY_RETRY = 500; // ms before a move the server was too busy for is sent again
const SEAT_LATER = "The server cannot seat you right now: try again in a few seconds.";

export class Seat {
  constructor(roomId, callbacks = {}) {
    this.roomId = roomId;
    this.on = callbacks;
    this.token = savedSeat(roomId); // {token, seat} or null
    this.model = new RoomModel("player", (m) => this.socket.send(m));
    this.seq = 0;
    this.joined = false; // this socket's join was welcomed (moves before that: not_joined)
    this.pending = new Map(); // seq -> move or undo not answered yet
    this.retried = new Set(); // seqs of moves sent again after a stale_seq (once only)
    this.legalWanted = []; // resolvers of legal(), in order (answers come in order)
    this.socket = new Socket({
      room: roomId,
      hello: () => this.hello(),
      onMessage: (m) => this.receive(m),
      onStatus: (s) => this.emit("onStatus", s),
    });
  }

  emit(name, ...args) {
    this.on[name]?.(...args);
  }

  get seated() {
    return this.token !== null;
  }

  hello() {
    this.joined = false;
    if (!this.token) return null;
    return { type: "join", room: this.roomId, token: this.token.token ?? undefined, since: this.model.version ?? undefined };
  }

  // Above every seq this seat has used, also from another window on the same seat (the
  // clock in ms, as the terminal client does; protocol section 4).
  nextSeq() {
    this.seq = Math.max(this.seq + 1, Date.now());
    return this.seq;
  }

  request(message) {
    const msg = { ...message, seq: this.nextSeq() };
    this.pending.set(msg.seq, msg);
    this.socket.send(msg, false);
  }

  // ------------------------------------------------------------ what the page asks

  move(text) {
    text = text.trim();
    if (!text) return;
    if (text.toLowerCase() === "undo") this.undo();
    else this.request({ type: "move", move: text });
  }

  undo() {
    this.request({ type: "undo" });
  }

  take(name) {
    this.socket.send({ type: "join", room: this.roomId, name });
  }

  ready(flag) {
    this.socket.send({ type: "ready", ready: flag });
  }

  start() {
    this.socket.send({ type: "start" });
  }

  leave() {
    this.socket.send({ type: "leave" });
    forgetSeat(this.roomId);
    this.token = null;
  }

  hint() {
    this.socket.send({ type: "hint" });
  }

  resign() {
    this.socket.send({ type: "resign" });
  }

  rematch() {
    this.socket.send({ type: "rematch" });
  }

  // The legal moves now ({moves, safe}), or null when they cannot be asked or listed.
  legal() {
    return new Promise((resolve) => {
      if (this.socket.send({ type: "legal" }, false)) this.legalWanted.push(resolve);
      else resolve(null);
    });
  }

  // Take the seat back in this window after it went to another one: its token as that
  // window saved it (the same browser), else the player's identity (protocol section 11).
  rejoin() {
    this.token = savedSeat(this.roomId) ?? { token: null, seat: this.model.seat };
    this.socket.send(this.hello());
  }

  // Server time, seconds (the countdown and the clock).
  now() {
    return this.socket.now();
  }

  // ------------------------------------------------------------ what the server says

  receive(m) {
    switch (m.type) {
      case "welcome":
        this.joined = true;
        if (m.token || (m.role === "player" && !this.token)) {
          // No token: the player's identity gave the seat back (protocol section 11); the
          // same join without a token does again after a drop or a reload.
          this.token = { token: m.token ?? null, seat: m.seat };
          saveSeat(this.roomId, this.token);
        }
        this.seq = Math.max(this.seq, m.last_seq ?? 0);
        this.model.handle(m);
        for (const msg of this.pending.values()) this.socket.send(msg, false); // answers we did not see
        this.emit("onWelcome");
        this.emit("onChange", false);
        return;
      case "accepted":
        this.pending.delete(m.seq);
        this.model.accepted(m);
        this.emit("onChange", true);
        this.emit("onAccepted", m);
        return;
      case "refused":
        this.refused(m);
        return;
      case "hint":
        this.emit("onHint", m.move ?? null);
        return;
      case "legal":
        this.legalWanted.shift()?.(m);
        return;
      case "error":
        this.error(m);
        return;
      default:
        break;
    }
    if (!this.model.handle(m)) return;
    // A change of this seat's own board (its move seen first as `progress`, or from
    // another window on the seat; a snapshot) is drawn at once, like an `accepted`; the
    // rest (the other racers' progress, the room's events) once in the next frame, however
    // many came: eight bots at full pace are hundreds of events a second.
    const model = this.model;
    this.emit("onChange", model.dirty.has(model.seat) || model.changed.has("all"));
  }

  refused(m) {
    const msg = this.pending.get(m.seq);
    this.pending.delete(m.seq);
    if (msg && (m.code === "unavailable" || m.code === "rate_limited")) {
      // Not stored, or stored with its answer lost (unavailable): the same move, same
      // seq, a moment later, which gets the stored answer if there is one.
      this.pending.set(m.seq, msg);
      setTimeout(() => this.pending.has(m.seq) && this.socket.send(msg, false), BUSY_RETRY);
      this.emit("onNotice", "The server is busy: sending the move again…", "warn");
      return;
    }
    if (m.code === "not_joined" && this.joined) {
      // Welcomed, and now holding nothing: the seat went to another window (a daily
      // attempt opened again gives its seat a new token). The move, made on this window's
      // board, is dropped; the page offers to play here again (rejoin).
      this.joined = false;
      this.pending.clear();
      this.emit("onElsewhere");
      return;
    }
    if (msg && m.code === "not_joined" && !this.joined) {
      // Sent before this socket's join was welcomed (or while it is being asked again):
      // not played; the welcome sends every pending move again.
      this.pending.set(m.seq, msg);
      return;
    }
    if (msg && m.code === "stale_seq" && !this.retried.has(m.seq)) {
      // Another window on this seat used that seq: the move was not played; again.
      const again = { ...msg, seq: this.nextSeq() };
      this.retried.add(again.seq);
      this.pending.set(again.seq, again);
      this.socket.send(again, false);
      return;
    }
    this.emit("onRefused", m, msg);
  }

  error(m) {
    if (m.request === "join" && this.token && !this.joined && TRY_AGAIN.has(m.code)) {
      // Our seat's join, refused for now (the server's storage is down): ask again on a
      // new socket, with backoff; pending moves wait for the welcome.
      this.emit("onNotice", "The server cannot take you back yet: trying again…", "warn");
      this.socket.retry();
    } else if (m.request === "join" && (m.code === "bad_token" || m.code === "unknown_room")) {
      // A seat this page held is gone: freed while the player was away longer than the
      // room waits (the lobby, a rematch that went on), or its token replaced elsewhere.
      const held = this.token !== null;
      forgetSeat(this.roomId);
      this.token = null;
      const reason = m.code === "unknown_room" ? "This room does not exist (or expired)."
        : held ? "Your seat here is gone: you were away longer than the room waits, or it was taken back on another device. "
        : "";
      this.emit("onSeatless", reason, m.code);
    } else if (m.request === "legal") {
      this.legalWanted.shift()?.(null); // e.g. the race ended: no moves to list
    } else if (m.request === "join") {
      // Refused for now (storage away, or this socket's identify not checked yet): the
      // seat form stays, to ask again; said in words, the protocol's text is a client's.
      this.emit("onSeatless", TRY_AGAIN.has(m.code) ? SEAT_LATER : m.message);
    } else {
      this.emit("onRefused", { reason: m.message, code: m.code, request: m.request });
    }
  }
}
