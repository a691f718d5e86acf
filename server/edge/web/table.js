// Each game's table as its players know it (docs/rules.md): what a pile is called, what an
// empty one takes, the one-line reminders drawn on the board, and the words a screen reader
// speaks. Words only: whether a move is legal is decided by the server's engine alone.

import { cardLabel, cardSymbol } from "./cards.js";
import { counted } from "./dom.js";

const SHAULA_TABLEAU = (n) => (n <= 4 ? "fortythieves" : "freecell");

// kind -> [the pile's name in words, what an empty one takes]
const KINDS = {
  shaula: {
    f: ["foundation", "an Ace"],
    c: ["cell", "any card"],
    fortythieves: ["Forty Thieves pile", "a King"],
    freecell: ["FreeCell pile", "any card"],
  },
  stalactites: {
    f: ["foundation", ""],
    c: ["cell", "any card"],
    t: ["tableau pile", "nothing: stays empty"],
  },
  moojub: {
    f: ["foundation", ""],
    r: ["reserve", "the next deal"],
  },
};

// The tableau's groups, each with its reminder of how it builds (as PySolFC draws Shaula).
export const TABLEAU_GROUPS = {
  shaula: [
    { piles: ["t1", "t2", "t3", "t4"], kind: "fortythieves", title: "Forty Thieves", rule: "down in suit · empty: a King" },
    { piles: ["t5", "t6", "t7", "t8"], kind: "freecell", title: "FreeCell", rule: "down, alternate colours · empty: any card" },
  ],
};

export function pileKind(game, pile) {
  const letters = pile.replace(/[0-9]+$/, "");
  if (game === "shaula" && letters === "t") return SHAULA_TABLEAU(Number(pile.slice(1)));
  return letters;
}

function kindWords(game, pile) {
  return KINDS[game]?.[pileKind(game, pile)] ?? ["pile", ""];
}

// What may go on this pile while it is empty ("a King"), "" when nothing is worth saying;
// `spoken`: for its name. Moojub's 32 foundations say it in their names only: on the board
// the line above the grid tells the order (`foundationNote`), and 32 labels crowd it.
export function emptyText(game, pile, spoken = false) {
  if (game === "moojub" && pile.startsWith("f")) return moojubStart(Number(pile.slice(1)), spoken);
  return kindWords(game, pile)[1];
}

// An empty Moojub foundation is started in order (docs/rules.md): f1 by any card; fK once
// f(K-1) is, by the suit of the base of the foundation left of it, or in the first
// column by a suit no base there has; and only by a card that plays nowhere else.
function moojubStart(k, spoken) {
  if (!spoken) return "";
  if (k === 1) return "the first card that plays nowhere else";
  const suit = k > 4 ? `f${k - 4}'s base suit` : "a suit no other first-column base has";
  return `a card of ${suit}, once f${k - 1} is started`;
}

// "t5, FreeCell pile, 6 cards, top: queen of spades" (and, for a fanned pile, the cards
// under the top one, top down, so that a covered card can be found by ear too).
export function pileName(game, pile, cards, fanned) {
  const [kind] = kindWords(game, pile);
  const count = cards.length;
  let text = `${pile}, ${kind}, `;
  if (!count) {
    const takes = emptyText(game, pile, true);
    return `${text}empty${takes ? `, takes ${takes}` : ""}`;
  }
  text += `${counted(count, "card")}, top: ${spoken(cards[count - 1])}`;
  if (game === "stalactites" && pile.startsWith("f")) text += `, base: ${spoken(cards[0])}`;
  if (fanned && count > 1) {
    text += `; under it: ${cards.slice(0, -1).reverse().map(spoken).join(", ")}`;
  }
  return text;
}

function spoken(card) {
  return typeof card === "string" && card.length === 2 ? cardLabel(card) : "a face-down card";
}

// Stalactites: how the race builds its foundations, read off the cards already on them
// (the first card put on any foundation decided it for the game), or null before that.
export function stalactitesStep(piles) {
  const ranks = "A23456789TJQK";
  for (const [pile, cards] of Object.entries(piles)) {
    if (!pile.startsWith("f") || cards.length < 2) continue;
    const step = (ranks.indexOf(cards[1][0]) - ranks.indexOf(cards[0][0]) + 13) % 13;
    if (step === 1 || step === 2) return step;
  }
  return null;
}

// The line over a game's foundations: how they build.
export function foundationNote(game, board) {
  if (game === "moojub") return "Foundations open in order from f1, down each column: f1–f4, then f5–f8 …";
  if (game !== "stalactites") return "";
  const step = board.step ?? stalactitesStep(board.piles);
  if (step === 1) return "Foundations build by ones (7, 8, 9 …), any suit, K then A";
  if (step === 2) return "Foundations build by twos (7, 9, J …), any suit, round the corner";
  return "By ones or by twos: the first card you put on a foundation decides";
}

// A refusal's reason with its cards as on the board: "Q♦ does not go on J♥". What the
// player typed, quoted back ("could not read move 'QD JH'"), stays as typed (an apostrophe
// within a word, "f1's", opens no quote).
export function withSymbols(text) {
  return text.replace(/(?<![A-Za-z0-9])'[^']*'(?![A-Za-z0-9])|\b([A2-9TJQK])([CDHS])\b/g, (found, rank) => (rank ? cardSymbol(found) : found));
}

// An accepted move in words, read on the board after it: "queen of spades, t5 to t2".
export function moveWords(board, text) {
  if (text === "deal") return "Dealt a card to each reserve.";
  if (text === "undo") return "Move undone.";
  const [src, dst, n] = text.split(" ");
  const pile = board?.piles?.[dst];
  const count = n ? Number(n) : 1;
  if (!pile || pile.length < count) return `${src} to ${dst}.`;
  const first = pile[pile.length - count];
  const what = count > 1 ? `${count} cards from ${spoken(first)}` : spoken(first);
  return `${what}, ${src} to ${dst}.`;
}
