// What the race page tells a player besides the board: a live region a screen reader
// speaks (accepted moves, the others' progress, the countdown, the end), short notes that
// come and go (someone finished), and the win screen.

import { h, fmtSeconds } from "./dom.js";

// A polite live region, visually hidden: each announce() is read once.
export class Announcer {
  constructor(root) {
    this.el = h("div", { class: "visually-hidden", id: "announce", "aria-live": "polite", "aria-atomic": "true" });
    root.append(this.el);
  }

  announce(text) {
    // The same words twice in a row are still read: change the node, not only its text.
    this.el.textContent = "";
    this.el.append(h("span", {}, text));
  }
}

// A short note over the page's corner, gone after a few seconds.
export function toast(text, kind = "") {
  let box = document.getElementById("toasts");
  if (!box) {
    box = h("div", { id: "toasts", class: "toasts" });
    document.body.append(box);
  }
  const note = h("div", { class: `toast ${kind}` }, text);
  box.append(note);
  setTimeout(() => note.remove(), 5000);
}

export function ordinal(n) {
  const tail = n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${tail}`;
}

// The win screen over the board: place, time, moves, the splits; closed by its button or Escape.
export function winScreen(over, { place, time, moves, racers, splits = "" }) {
  const close = h("button", { type: "button", id: "win-close" }, "See the board");
  const panel = h(
    "div",
    { class: "win", id: "win", role: "dialog", "aria-modal": "false", "aria-labelledby": "win-title" },
    h("h2", { id: "win-title" }, place === 1 ? "You won!" : `You finished ${ordinal(place)}`),
    h("p", { class: "win-line" },
      `${ordinal(place)} of ${racers}`,
      time !== null && time !== undefined ? ` · ${fmtSeconds(time)}` : "",
      moves ? ` · ${moves} moves` : ""),
    splits ? h("p", { class: "win-splits" }, `Splits: ${splits}`) : null,
    close,
  );
  const done = () => {
    panel.remove();
    document.removeEventListener("keydown", onKey);
  };
  const onKey = (e) => e.key === "Escape" && done();
  close.addEventListener("click", done);
  document.addEventListener("keydown", onKey);
  over.append(panel);
  close.focus();
  return panel;
}
