// What a page knows of one room, kept from the server's messages (protocol section 5):
// the ROOM view, the last event version, and the boards it can see. The race page (a
// player: their own board) and the watch and TV pages (a spectator: every board) share it.

import { applyMove, historyOf } from "./cards.js";

const clone = (board) => (board ? JSON.parse(JSON.stringify(board)) : null);

export class RoomModel {
  constructor(role, send) {
    this.role = role; // "player" or "spectator"
    this.send = send; // (message) => void, for resync
    this.room = null;
    this.version = null;
    this.seat = null;
    this.best = null; // one's own best splits in the room's game, from the welcome
    this.boards = {}; // seat -> board
    this.histories = {}; // seat -> undo history (canonical moves)
    this.changed = new Set(); // what to redraw: "all", "room", "players"
    this.dirty = new Map(); // seat -> Set of piles changed since the last draw, or "all"
    // A player's own moves reach the page twice (its `accepted` and its `progress`, same
    // version), and from another window on the same seat only as `progress`: each is
    // drawn once, by version. Moves up to `boardVersion` are in the board already.
    this.drawn = new Set();
    this.boardVersion = 0;
  }

  player(seat) {
    return this.room?.players.find((p) => p.seat === seat);
  }

  resync(since) {
    this.send(since === undefined || since === null ? { type: "resync" } : { type: "resync", since });
  }

  // Handle one server message; returns true when it was a room message.
  handle(m) {
    if (m.type === "welcome") {
      if (m.seat !== undefined) this.seat = m.seat;
      this.best = m.best?.splits ?? null; // one's own best splits here (protocol section 5)
      return true;
    }
    if (m.type === "snapshot") {
      this.room = m.room;
      this.version = m.version;
      this.boardVersion = m.version;
      this.drawn.clear();
      this.boards = {};
      this.histories = {};
      if (m.board && this.seat !== null) {
        this.boards[this.seat] = m.board;
        this.histories[this.seat] = historyOf(m.moves);
      }
      for (const [seat, board] of Object.entries(m.boards || {})) {
        this.boards[Number(seat)] = board;
        this.histories[Number(seat)] = []; // moves before the snapshot are not known
      }
      this.changed.add("all");
      this.dirty.clear();
      return true;
    }
    if (m.version === undefined || m.at === undefined) return false;
    if (this.version !== null && m.version <= this.version) return true; // seen already
    if (this.version !== null && m.version !== this.version + 1) {
      this.resync(this.version);
      return true;
    }
    this.version = m.version;
    this.event(m);
    return true;
  }

  // A win of one's own on record, faster than one's best, is one's best in the rounds after
  // it: their deltas are to it, as the welcome of a reload would say (section 3).
  bestOf(results) {
    const mine = this.role === "player" ? results?.find((r) => r.seat === this.seat) : null;
    if (!mine?.won || !mine.player || mine.bot || this.best?.[3] <= mine.time) return;
    this.best = mine.splits;
  }

  event(m) {
    const room = this.room;
    if (!room) return;
    const p = m.seat !== undefined ? this.player(m.seat) : null;
    if (m.type !== "progress") this.changed.add("room"); // progress: only the bars and a board
    switch (m.type) {
      case "joined":
        room.players = room.players.filter((x) => x.seat !== m.seat);
        room.players.push({
          seat: m.seat, name: m.name, ready: false, connected: true, grace_until: null,
          progress: 0, moves: 0, won: false, stuck: false, out: null, rematch: false,
          splits: [null, null, null, null], player: m.player ?? null, bot: m.bot ?? false,
        });
        room.players.sort((a, b) => a.seat - b.seat);
        room.host = Math.min(...room.players.map((x) => x.seat));
        break;
      case "left":
        room.players = room.players.filter((x) => x.seat !== m.seat);
        room.host = room.players.length ? Math.min(...room.players.map((x) => x.seat)) : null;
        break;
      case "player_ready":
        if (p) p.ready = m.ready;
        break;
      case "presence":
        if (p) Object.assign(p, { connected: m.connected, grace_until: m.grace_until ?? null });
        break;
      case "countdown":
        Object.assign(room, { status: "countdown", start_at: m.start_at });
        break;
      case "started":
        Object.assign(room, {
          status: "running", start_at: m.at, ends_at: m.ends_at ?? null, seed: m.seed ?? null,
        });
        this.boards = {};
        this.histories = {};
        this.boardVersion = m.version;
        this.drawn.clear();
        if (m.board) {
          // A ghost has no board: its progress comes without moves (a board would stay at the deal).
          const seats = this.role === "player" ? [this.seat] : room.players.filter((x) => !x.ghost).map((x) => x.seat);
          for (const seat of seats) {
            this.boards[seat] = clone(m.board);
            this.histories[seat] = [];
          }
          this.changed.add("all");
          this.dirty.clear();
        } else {
          this.resync(); // the deal comes in a snapshot: the page does not deal cards itself
        }
        break;
      case "progress":
        if (p) Object.assign(p, { progress: m.progress, moves: m.moves, won: m.won, stuck: m.stuck });
        if (p && m.splits) p.splits = m.splits;
        if (this.role === "spectator") this.spectate(m);
        else if (m.seat === this.seat && m.move !== undefined) this.own(m.version, m.move, null);
        this.changed.add("players");
        break;
      case "player_out":
        // Out, a player has no grace left to run (a forfeit is its end).
        if (p) Object.assign(p, { out: m.reason, grace_until: null });
        break;
      case "finished":
        Object.assign(room, {
          status: "finished", results: m.results, seed: m.seed ?? null, finish_reason: m.reason,
          finished_at: m.at,
        });
        // Every grace ends with the race (nothing is lost by being away after it): only a
        // rematch's vote gives an away player one again, by a `presence` (section 5).
        for (const x of room.players) x.grace_until = null;
        break;
      case "rematch_vote":
        if (p) p.rematch = true;
        break;
      case "new_round":
        this.bestOf(room.results);
        Object.assign(room, {
          round: m.round, status: "lobby", results: null, finish_reason: null,
          finished_at: null, start_at: null, ends_at: null, seed: null,
        });
        for (const x of room.players) {
          Object.assign(x, {
            progress: 0, moves: 0, won: false, stuck: false, out: null, rematch: false,
            splits: [null, null, null, null],
          });
        }
        this.boards = {};
        this.histories = {};
        this.changed.add("all");
        this.dirty.clear();
        break;
      default:
        break;
    }
  }

  // Note what changed on a seat's board: some piles, or all of it (a new board object).
  touch(seat, piles) {
    const dirty = this.dirty.get(seat);
    if (dirty === "all") return;
    if (piles === "all") this.dirty.set(seat, "all");
    else if (dirty) for (const pile of piles) dirty.add(pile);
    else this.dirty.set(seat, new Set(piles));
  }

  // Follow a seat's move: the board the server sent (Moojub), or the move drawn on ours.
  follow(seat, move, board) {
    if (board) {
      this.boards[seat] = board;
      this.touch(seat, "all");
      return;
    }
    if (!move || !this.boards[seat]) return;
    this.histories[seat] ??= [];
    const piles = applyMove(this.boards[seat], this.histories[seat], move);
    if (piles) this.touch(seat, piles);
    else this.resync();
  }

  spectate(m) {
    this.follow(m.seat, m.move, m.board);
  }

  // A player's own accepted move.
  accepted(m) {
    const p = this.player(this.seat);
    if (p) Object.assign(p, { progress: m.progress, moves: m.moves, won: m.won, stuck: m.stuck });
    this.own(m.version, m.move, m.board ?? null);
    this.changed.add("players");
  }

  // Draw one of this seat's moves once, whichever of its messages comes first.
  own(version, move, board) {
    if (version <= this.boardVersion || this.drawn.has(version)) {
      if (board) this.follow(this.seat, null, board); // Moojub: the board after it
      return;
    }
    this.drawn.add(version);
    this.follow(this.seat, move, board);
  }

  // What changed since the last call: {changed: Set, dirty: Map seat -> Set|"all"}.
  take() {
    const taken = { changed: this.changed, dirty: this.dirty };
    this.changed = new Set();
    this.dirty = new Map();
    return taken;
  }
}
