// The moments of a race as the race page marks them, found by comparing the room with
// what it was at the last draw: the start, someone finishing (a note for the others, the
// win screen for oneself, a sound), the others' progress by quarters (spoken, briefly),
// and the end with one's place. Words go to the live region (feedback.js).

import { fmtSeconds } from "./dom.js";
import { ordinal, toast, winScreen } from "./feedback.js";
import { play } from "./sounds.js";
import { splitsText } from "./widgets.js";

export class Moments {
  constructor({ announcer, over, cards }) {
    this.announcer = announcer;
    this.over = over; // where the win screen goes (over the board)
    this.cards = cards; // room -> the game's card total
    this.status = null;
    this.round = null;
    this.seen = new Map(); // seat -> {won, out, quarter}
    this.countdown = "";
  }

  say(text) {
    this.announcer.announce(text);
  }

  // The big countdown's text changed ("3", "2", "1", "Go"): say it.
  tick(big) {
    if (big === this.countdown) return;
    this.countdown = big;
    if (big) this.say(big === "Go" ? "Go!" : `Starting in ${big}`);
  }

  update(room, me, now) {
    if (room.round !== this.round) {
      this.round = room.round;
      this.seen.clear();
      this.status = null;
    }
    const was = this.status;
    this.status = room.status;
    const total = this.cards(room);
    const elapsed = room.start_at ? now - room.start_at : null;
    if (was === null) {
      // The page opened on this room: what is already so is not news.
      for (const p of room.players) this.seen.set(p.seat, mark(p, total));
      return;
    }
    if (room.status === "running" && was !== "running") this.say("The race has started.");
    const placed = room.players.filter((p) => p.won).length;
    for (const p of room.players) {
      const before = this.seen.get(p.seat) ?? mark({}, total);
      const after = mark(p, total);
      this.seen.set(p.seat, after);
      if (room.status !== "running") continue;
      if (after.won && !before.won) {
        if (p.seat === me) {
          play("win");
          const splits = p.splits ? splitsText(p.splits, total) : "";
          winScreen(this.over, { place: placed, time: elapsed, moves: p.moves, racers: room.players.length, splits });
          this.say(`You finished ${ordinal(placed)}${elapsed !== null ? ` in ${fmtSeconds(elapsed)}` : ""}.`);
        } else {
          const text = `${p.name} finished ${ordinal(placed)}${elapsed !== null ? ` in ${fmtSeconds(elapsed)}` : ""}`;
          toast(text, "finish");
          this.say(text);
        }
      } else if (after.out && !before.out && p.seat !== me) {
        this.say(`${p.name} is out (${p.out}).`);
      } else if (p.seat !== me && after.quarter > before.quarter && !after.won) {
        this.say(`${p.name}: ${p.progress} of ${total} cards.`);
      }
    }
    if (room.status === "finished" && was !== "finished") {
      const mine = room.results?.find((r) => r.seat === me);
      // A place shared (equal results rank alike) is said to be shared, and with whom.
      const tied = mine ? room.results.filter((r) => r.rank === mine.rank && r.seat !== me).map((r) => r.name) : [];
      const place = mine ? `you are ${ordinal(mine.rank)} of ${room.results.length}${tied.length ? `, tied with ${tied.join(" and ")}` : ""}` : "";
      this.say(mine ? `The race is over: ${place}.` : "The race is over.");
    }
  }
}

function mark(p, total) {
  return { won: !!p.won, out: !!p.out, quarter: Math.floor((4 * (p.progress ?? 0)) / total) };
}
