// The race page's keyboard shortcuts, listed on a `?` overlay as the terminal client's
// help screen lists its keys.

import { h } from "./dom.js";

export const SHORTCUTS = [
  ["← → ↑ ↓", "move between piles (Tab reaches the board)"],
  ["Enter or Space", "pick up the top card; again: one more card; on another pile: put it there"],
  ["f", "send the picked-up cards (or the pile's top card) to a foundation"],
  ["Escape", "put the picked-up cards back; close this list"],
  ["double click", "send a card to a foundation"],
  ["u", "undo (where the room allows it)"],
  ["h", "hint (where the room allows it)"],
  ["a", "autoplay: the safe moves to the foundations"],
  ["n", "deal (Moojub)"],
  ["m", "type a move (t5 t2 3, c1 f, deal)"],
  ["?", "this list"],
];

let dialog = null;

export function showShortcuts() {
  if (!dialog) {
    dialog = h(
      "dialog",
      { id: "shortcuts", class: "shortcuts", "aria-labelledby": "shortcuts-title" },
      h("h2", { id: "shortcuts-title" }, "Keyboard shortcuts"),
      h("dl", {}, SHORTCUTS.map(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)])),
      h("form", { method: "dialog" }, h("button", { type: "submit" }, "Close")),
    );
    document.body.append(dialog);
  }
  if (!dialog.open) dialog.showModal();
}
