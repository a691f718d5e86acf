// Cards and boards drawn with our own CSS (no card art), and the notation's meaning.
//
// A card is rank (A23456789TJQK) then suit (CDHS), as on the wire. A board is the engine's
// state (protocol section 5). Piles are grouped by their id's letters: f foundations,
// c cells, r reserves, t tableau (fanned). This file knows what a canonical move *says*
// ("t5 t2 3": three cards from t5 to t2) so it can draw an accepted move; whether a move
// is legal is never decided here: the server's engine does that.

import { h, clear, counted } from "./dom.js";
import { listenKeys } from "./board_keys.js";
import { animateFrom, positions } from "./motion.js";
import { TABLEAU_GROUPS, emptyText, foundationNote, pileKind, pileName } from "./table.js";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };

export function cardLabel(card) {
  const rank = card[0];
  return `${RANK_NAMES[rank] || rank} of ${SUIT_NAMES[card[1]]}`;
}

// "Q♦" for "QD", "10♠" for "TS": a card as the board shows it.
export function cardSymbol(card) {
  return `${card[0] === "T" ? "10" : card[0]}${SUITS[card[1]]}`;
}

// One element per card: the corner index and the big suit are CSS pseudo-elements drawn
// from data attributes (a watch page of 8 boards holds ~400 cards: fewer nodes, less
// style, layout and paint per frame).
export function cardEl(card) {
  if (typeof card !== "string" || !SUITS[card[1]]) {
    // A card a spectator may not see yet (hidden cards): drawn face down.
    const back = document.createElement("div");
    back.className = "card back";
    back.setAttribute("role", "img");
    back.setAttribute("aria-label", "a face-down card");
    return back;
  }
  const rank = card[0] === "T" ? "10" : card[0];
  const suit = SUITS[card[1]];
  const el = document.createElement("div");
  el.className = `card suit-${card[1]}`;
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", cardLabel(card));
  el.dataset.card = card;
  el.dataset.label = `${rank}${suit}`;
  el.dataset.pip = suit;
  return el;
}

export function kindOf(pile) {
  const letters = pile.replace(/[0-9]+$/, "");
  return { f: "foundation", c: "cell", r: "reserve", t: "tableau" }[letters] || "other";
}

// Read a canonical move: {src, dst, n}, {deal: true} or {undo: true}.
export function readMove(text) {
  if (text === "undo") return { undo: true };
  if (text === "deal") return { deal: true };
  const [src, dst, n] = text.split(" ");
  return { src, dst, n: n ? Number(n) : 1 };
}

// Draw an accepted move on a board object in place; returns the two piles it changed.
// Returns null when the board cannot follow it (a deal, whose cards only the server
// knows; an undo of a move we never saw): the caller then asks the server for the board.
export function applyMove(board, history, text) {
  const move = readMove(text);
  if (move.deal) return null;
  if (move.undo) {
    const last = history.pop();
    if (!last || last.deal) return null;
    const back = board.piles[last.dst].splice(-last.n, last.n);
    board.piles[last.src].push(...back);
    return [last.src, last.dst];
  }
  const from = board.piles[move.src];
  const to = board.piles[move.dst];
  if (!from || !to || from.length < move.n) return null;
  to.push(...from.splice(-move.n, move.n));
  history.push(move);
  return [move.src, move.dst];
}

// The undo history of a player's accepted moves (snapshot.moves), as applyMove keeps it.
export function historyOf(moves) {
  const history = [];
  for (const text of moves || []) {
    const move = readMove(text);
    if (move.undo) history.pop();
    else history.push(move);
  }
  return history;
}

// A board drawn into `root`. Options: interactive (click, drag or keys; calls
// onMove(text)), and the watch page's small boards (not interactive: no names to keep).
export class BoardView {
  constructor(root, { interactive = false, onMove = null, onDeal = null, onSelect = null } = {}) {
    this.root = root;
    this.interactive = interactive;
    this.onMove = onMove;
    this.onDeal = onDeal;
    this.onSelect = onSelect; // a card was picked up: the page may ask for its targets
    this.board = null;
    this.game = null;
    this.pileEls = {};
    this.cardEls = {};
    this.countEls = {};
    this.noteEl = null;
    this.selected = null; // {pile, index}
    this.focused = null; // the pile the keyboard is on (one tab stop for the whole board)
    this.drag = null;
    this.lastClick = { card: null, at: 0 };
    if (interactive) {
      root.setAttribute("role", "group");
      root.setAttribute("aria-label", "your board: arrow keys move between piles, Enter picks up and puts down, f sends to a foundation, Escape drops");
      this.listen();
      listenKeys(this);
    }
  }

  set(board) {
    const same =
      this.board &&
      board &&
      Object.keys(this.board.piles).join() === Object.keys(board.piles).join();
    this.board = board;
    if (!board) {
      clear(this.root);
      this.pileEls = {};
      this.cardEls = {};
      this.countEls = {};
      return;
    }
    this.game = board.game ?? this.game;
    if (!same) this.layout();
    for (const pile of Object.keys(board.piles)) this.drawPile(pile);
    this.drawTalon();
    this.drawNote();
  }

  layout() {
    clear(this.root);
    this.pileEls = {};
    this.cardEls = {}; // pile -> its card elements, bottom first
    this.countEls = {}; // pile -> its card count (piles that show only their top card)
    this.emptyEls = {}; // pile -> what an empty pile takes, in words
    const game = this.game;
    this.root.dataset.game = game ?? "";
    const groups = { foundation: [], cell: [], reserve: [], tableau: [], other: [] };
    for (const pile of Object.keys(this.board.piles)) groups[kindOf(pile)].push(pile);
    const make = (pile) => {
      const takes = emptyText(game, pile);
      const empty = takes ? h("span", { class: "pile-empty", "aria-hidden": "true" }, takes) : null;
      const el = h(
        "div",
        { class: `pile ${kindOf(pile)} kind-${pileKind(game, pile)}`, dataset: { pile } },
        h("span", { class: "pile-id", "aria-hidden": "true" }, pile),
        empty,
      );
      if (this.interactive) {
        el.setAttribute("role", "button");
        el.tabIndex = -1;
      }
      this.emptyEls[pile] = empty;
      this.pileEls[pile] = el;
      return el;
    };
    const top = h("div", { class: "row top" });
    const left = h("div", { class: "group" }, [...groups.cell, ...groups.reserve].map(make));
    top.append(left);
    if ("talon_count" in this.board) {
      this.talonEl = h("div", { class: "pile talon", dataset: { pile: "talon" } });
      if (this.interactive) {
        this.talonEl.setAttribute("role", "button");
        this.talonEl.tabIndex = -1;
      }
      this.pileEls.talon = this.talonEl;
      top.append(this.talonEl);
    } else {
      this.talonEl = null;
    }
    this.noteEl = h("p", { class: "board-note", id: this.interactive ? "board-note" : null });
    const many = groups.foundation.length > 8;
    const foundations = h(
      "div",
      { class: many ? "group grid" : "group" },
      groups.foundation.map(make),
    );
    if (!many) top.append(h("div", { class: "spacer" }), foundations);
    this.root.append(top, this.noteEl);
    if (many) this.root.append(foundations);
    const tableau = [...groups.tableau, ...groups.other];
    if (tableau.length) {
      const row = h("div", { class: "row tableau-row" });
      const kinds = TABLEAU_GROUPS[game];
      if (kinds) {
        kinds.forEach((group, k) => {
          if (k) row.append(h("div", { class: "divider", "aria-hidden": "true" }));
          row.append(
            h("div", { class: `tableau-group kind-${group.kind}` },
              h("p", { class: "group-rule" }, h("strong", {}, group.title), ` ${group.rule}`),
              h("div", { class: "group" }, group.piles.filter((p) => p in this.board.piles).map(make))),
          );
        });
      } else {
        row.append(...tableau.map(make));
      }
      this.root.append(row);
    }
    if (this.interactive) {
      const first = this.pileEls[this.focused] ? this.focused : Object.keys(this.pileEls)[0];
      this.focusPile(first, false);
    }
  }

  drawNote() {
    if (!this.noteEl) return;
    const text = foundationNote(this.game, this.board);
    if (this.noteEl.textContent !== text) this.noteEl.textContent = text;
    this.noteEl.hidden = !text;
  }

  // Bring a pile's cards in line with the board, touching only what changed: a move takes
  // cards off the top of one pile and puts them on another, so the cards below stay
  // (no new elements for them: less style, layout and paint in the frame that shows it).
  drawPile(pile) {
    const el = this.pileEls[pile];
    if (!el) return;
    const cards = this.board.piles[pile];
    const fanned = kindOf(pile) === "tableau";
    // Stalactites' foundations keep their base in sight under the cards built on it.
    const based = this.game === "stalactites" && pile.startsWith("f") && cards.length > 1;
    const shown = fanned ? cards : based ? [cards[0], cards[cards.length - 1]] : cards.slice(-1);
    const indexOf = (k) => (based && k === 0 ? 0 : cards.length - shown.length + k);
    const drawn = (this.cardEls[pile] ??= []);
    let keep = 0;
    while (
      keep < drawn.length &&
      keep < shown.length &&
      drawn[keep].dataset.card === shown[keep] &&
      drawn[keep].dataset.index === String(indexOf(keep))
    ) keep++;
    for (const card of drawn.splice(keep)) card.remove();
    const count = this.countEls[pile] ?? null;
    for (let k = keep; k < shown.length; k++) {
      const card = cardEl(shown[k]);
      card.dataset.index = String(indexOf(k));
      if (fanned) card.style.setProperty("--i", String(k));
      if (this.game === "stalactites" && pile.startsWith("f") && indexOf(k) === 0) {
        card.classList.add("base");
        if (based) card.classList.add("under");
      }
      el.insertBefore(card, count);
      drawn.push(card);
    }
    el.classList.toggle("empty", !cards.length);
    el.classList.toggle("based", based);
    if (fanned) {
      const n = String(Math.max(cards.length, 1));
      if (el.style.getPropertyValue("--n") !== n) el.style.setProperty("--n", n);
    } else if (cards.length > 1) {
      if (count) {
        if (count.textContent !== String(cards.length)) count.textContent = String(cards.length);
      } else {
        el.append((this.countEls[pile] = h("span", { class: "count", "aria-hidden": "true" }, String(cards.length))));
      }
    } else if (count) {
      count.remove();
      delete this.countEls[pile];
    }
    if (this.interactive) this.name(pile);
    if (this.selected && this.selected.pile === pile) this.markSelected();
  }

  // The words a screen reader speaks for a pile (the interactive board only).
  name(pile) {
    const el = this.pileEls[pile];
    const cards = this.board.piles[pile];
    let text = pileName(this.game, pile, cards, kindOf(pile) === "tableau");
    if (this.selected?.pile === pile) {
      const n = cards.length - this.selected.index;
      text += `; picked up: ${counted(n, "card")}`;
    }
    if (el.getAttribute("aria-label") !== text) el.setAttribute("aria-label", text);
  }

  drawTalon() {
    if (!this.talonEl) return;
    clear(this.talonEl);
    const count = this.board.talon_count ?? 0;
    this.talonEl.append(
      h("span", { class: "pile-id", "aria-hidden": "true" }, "talon"),
      count
        ? h("div", { class: "card back", title: "deal" }, h("span", { class: "count-in" }, count))
        : h("span", { class: "pile-empty" }, "empty"),
    );
    if (this.interactive) {
      this.talonEl.setAttribute("aria-label", count ? `talon, ${count} cards face down: deal` : "talon, empty");
    }
  }

  // Redraw only these piles of the board already drawn (what accepted moves changed),
  // the cards that moved sliding from where they were (not under reduced motion).
  drawPiles(piles) {
    const els = this.interactive ? [...piles].map((p) => this.pileEls[p]) : null;
    const before = els && positions(els);
    for (const pile of piles) this.drawPile(pile);
    this.drawNote();
    if (before) animateFrom(before, els);
  }

  highlight(text) {
    for (const el of this.root.querySelectorAll(".hinted")) el.classList.remove("hinted");
    if (!text) return;
    const move = readMove(text);
    for (const pile of [move.src, move.dst]) this.pileEls[pile]?.classList.add("hinted");
    if (move.deal) this.talonEl?.classList.add("hinted");
  }

  // A refused move: the cards picked up shake where they are, the target flashes.
  refused(text) {
    if (!text) return;
    const move = readMove(text);
    for (const pile of [move.src, move.dst]) {
      const el = this.pileEls[pile];
      if (!el) continue;
      el.classList.remove("refused");
      void el.offsetWidth; // restart the animation on a second refusal in a row
      el.classList.add("refused");
      setTimeout(() => el.classList.remove("refused"), 600);
    }
  }

  // The keyboard's pile: one tab stop for the board (a roving tabindex).
  focusPile(pile, focus = true) {
    const el = this.pileEls[pile];
    if (!el) return;
    for (const other of Object.values(this.pileEls)) if (other !== el) other.tabIndex = -1;
    el.tabIndex = 0;
    this.focused = pile;
    if (focus) el.focus();
  }

  // ------------------------------------------------------------ input

  select(sel) {
    const was = this.selected?.pile;
    this.selected = sel;
    this.markSelected();
    if (this.interactive && this.board) {
      for (const pile of new Set([was, sel?.pile])) if (pile && this.pileEls[pile] && pile !== "talon") this.name(pile);
    }
    this.markTargets([]);
    if (sel) this.onSelect?.(sel, this.moveText(sel, "DST"));
  }

  // Outline the piles the selected cards may go to (the server's list of legal moves).
  markTargets(piles) {
    for (const el of this.root.querySelectorAll(".target")) el.classList.remove("target");
    for (const pile of piles) this.pileEls[pile]?.classList.add("target");
  }

  markSelected() {
    for (const el of this.root.querySelectorAll(".selected")) el.classList.remove("selected");
    if (!this.selected) return;
    const el = this.pileEls[this.selected.pile];
    if (!el) return;
    for (const card of el.querySelectorAll(".card")) {
      if (Number(card.dataset.index) >= this.selected.index) card.classList.add("selected");
    }
  }

  // The move text for picking `sel` up and putting it on `dst`: the notation, no rules.
  moveText(sel, dst) {
    const n = this.board.piles[sel.pile].length - sel.index;
    return n > 1 ? `${sel.pile} ${dst} ${n}` : `${sel.pile} ${dst}`;
  }

  listen() {
    this.root.addEventListener("pointerdown", (event) => this.down(event));
    this.root.addEventListener("pointermove", (event) => this.moveDrag(event));
    this.root.addEventListener("pointerup", (event) => this.up(event));
    this.root.addEventListener("pointercancel", () => this.endDrag());
  }

  // The pile under the pointer and the card of it there (index null: none, or one face
  // down). The card is found where the pile lays it out, not where a slide draws it for
  // its 140 ms (motion.js): a click on a card that is still arriving picks it, and one on
  // a card that another is sliding over picks the card under, where the player aimed.
  pickAt(target, x, y) {
    const pileEl = target.closest(".pile");
    if (!pileEl) return null;
    const pile = pileEl.dataset.pile;
    if (pile === "talon") return { pile };
    const box = pileEl.getBoundingClientRect();
    let index = null;
    for (const card of pileEl.querySelectorAll(".card[data-index]")) {
      const left = box.left + card.offsetLeft;
      const top = box.top + card.offsetTop;
      if (x >= left && x < left + card.offsetWidth && y >= top && y < top + card.offsetHeight) {
        index = Number(card.dataset.index); // the later a card, the higher it lies
      }
    }
    return { pile, index };
  }

  down(event) {
    if (event.button !== 0 || !this.board) return;
    const pick = this.pickAt(event.target, event.clientX, event.clientY);
    if (!pick || pick.pile === "talon" || pick.index === null) return;
    this.drag = { pick, x: event.clientX, y: event.clientY, ghost: null, id: event.pointerId };
  }

  moveDrag(event) {
    const drag = this.drag;
    if (!drag || event.pointerId !== drag.id) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.ghost) {
      if (Math.hypot(dx, dy) < 6) return;
      this.root.setPointerCapture?.(drag.id);
      this.select(drag.pick);
      const ghost = h("div", { class: "drag-ghost" }); // not "ghost": a ghost racer's tag
      [...this.root.querySelectorAll(".selected")].forEach((el, k) => {
        const copy = el.cloneNode(true);
        copy.classList.remove("selected");
        copy.style.setProperty("--i", String(k));
        ghost.append(copy);
      });
      const rect = this.root.querySelector(".selected")?.getBoundingClientRect();
      drag.left = rect ? rect.left : drag.x;
      drag.top = rect ? rect.top : drag.y;
      drag.ghost = ghost;
      document.body.append(ghost);
      this.root.classList.add("dragging");
    }
    drag.ghost.style.transform = `translate(${drag.left + dx}px, ${drag.top + dy}px)`;
  }

  up(event) {
    const drag = this.drag;
    if (drag && drag.ghost) {
      const under = document.elementFromPoint(event.clientX, event.clientY);
      const target = under ? this.pickAt(under, event.clientX, event.clientY) : null;
      const sel = drag.pick;
      this.endDrag();
      this.select(null);
      if (target && target.pile !== sel.pile && target.pile !== "talon") {
        this.onMove?.(this.moveText(sel, target.pile));
      }
      return;
    }
    this.endDrag();
    this.click(event);
  }

  endDrag() {
    if (this.drag?.ghost) this.drag.ghost.remove();
    this.root.classList.remove("dragging");
    this.drag = null;
  }

  // Click a card, then its target pile; click a card twice quickly: to a foundation.
  click(event) {
    if (!this.board) return;
    const pick = this.pickAt(event.target, event.clientX, event.clientY);
    if (!pick) {
      this.select(null);
      return;
    }
    if (pick.pile === "talon") {
      this.select(null);
      this.onDeal?.();
      return;
    }
    const sel = this.selected;
    if (sel && sel.pile !== pick.pile) {
      this.select(null);
      this.onMove?.(this.moveText(sel, pick.pile));
      return;
    }
    const now = performance.now();
    const key = `${pick.pile}:${pick.index}`;
    if (sel && this.lastClick.card === key && now - this.lastClick.at < 400) {
      // The card clicked and those on it, as the keyboard's f sends them: on a covered
      // card the server says why not, rather than the top card going up instead.
      this.select(null);
      this.lastClick = { card: null, at: 0 };
      this.onMove?.(this.moveText(pick, "f"));
      return;
    }
    this.lastClick = { card: key, at: now };
    this.select(pick.index === null ? null : pick);
  }
}
