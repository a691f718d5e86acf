// The board from the keyboard alone, as the terminal client's cursor plays it: the arrow
// keys move between piles (the nearest pile that way on screen), Enter or Space picks up
// a pile's top card (again on the same pile: one more card of it), then puts the cards
// down on the pile it is pressed on; f sends the picked-up cards (or the pile's top card)
// to a foundation; Escape puts them back. Enter on the talon deals.

const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

// The pile nearest `from` in direction (dx, dy): straight that way first, then aside.
function nearest(view, from, [dx, dy]) {
  const centre = (el) => {
    const r = el.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + Math.min(r.height, 40) / 2];
  };
  const [x0, y0] = centre(view.pileEls[from]);
  let best = null;
  let bestScore = Infinity;
  for (const [pile, el] of Object.entries(view.pileEls)) {
    if (pile === from) continue;
    const [x, y] = centre(el);
    const along = (x - x0) * dx + (y - y0) * dy;
    if (along <= 4) continue;
    const aside = Math.abs((x - x0) * dy) + Math.abs((y - y0) * dx);
    const score = along + aside * 3;
    if (score < bestScore) {
      bestScore = score;
      best = pile;
    }
  }
  return best;
}

export function listenKeys(view) {
  view.root.addEventListener("focusin", (event) => {
    const pile = event.target.closest?.(".pile")?.dataset.pile;
    if (pile && pile !== view.focused) view.focusPile(pile, false);
  });
  view.root.addEventListener("keydown", (event) => {
    if (!view.board || event.altKey || event.ctrlKey || event.metaKey) return;
    const pile = event.target.closest?.(".pile")?.dataset.pile;
    if (!pile) return;
    if (ARROWS[event.key]) {
      event.preventDefault();
      const next = nearest(view, pile, ARROWS[event.key]);
      if (next) view.focusPile(next);
    } else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      press(view, pile);
    } else if (event.key === "f") {
      event.preventDefault();
      const from = view.selected?.pile ?? pile;
      const n = view.selected ? view.board.piles[from].length - view.selected.index : 1;
      view.select(null);
      if (from !== "talon" && view.board.piles[from]?.length) {
        view.onMove?.(n > 1 ? `${from} f ${n}` : `${from} f`);
      }
    } else if (event.key === "Escape" && view.selected) {
      event.preventDefault();
      event.stopPropagation();
      view.select(null);
    }
  });
}

function press(view, pile) {
  if (pile === "talon") {
    view.select(null);
    view.onDeal?.();
    return;
  }
  const sel = view.selected;
  const cards = view.board.piles[pile];
  if (sel && sel.pile !== pile) {
    view.select(null);
    view.onMove?.(view.moveText(sel, pile));
  } else if (sel) {
    // Again on the picked-up pile: one more card of it, round to the top card alone.
    view.select({ pile, index: sel.index > 0 ? sel.index - 1 : cards.length - 1 });
  } else if (cards.length) {
    view.select({ pile, index: cards.length - 1 });
  }
}
