// Short movements of the cards (a move, an autoplay cascade, an undo): the cards a move
// put on a pile slide there from where they were. Nothing moves under the player's
// prefers-reduced-motion setting. Drawing is never delayed: the board is already right
// when the slide starts (the Web Animations API; no style attribute, which the page's
// Content-Security-Policy refuses).

const DURATION = 140; // ms
const reduced = matchMedia("(prefers-reduced-motion: reduce)");

// Where each card of these piles is now, by card: read before the piles are redrawn.
export function positions(piles) {
  if (reduced.matches) return null;
  const where = new Map();
  for (const pile of piles) {
    for (const card of pile?.querySelectorAll(".card[data-card]") ?? []) {
      where.set(card.dataset.card, { el: card, rect: card.getBoundingClientRect() });
    }
  }
  return where;
}

// Slide each card drawn anew in these piles from where it was before.
export function animateFrom(before, piles) {
  if (!before || reduced.matches) return;
  for (const pile of piles) {
    for (const card of pile?.querySelectorAll(".card[data-card]") ?? []) {
      const was = before.get(card.dataset.card);
      if (!was || was.el === card) continue;
      const now = card.getBoundingClientRect();
      const dx = was.rect.left - now.left;
      const dy = was.rect.top - now.top;
      if (!dx && !dy) continue;
      // A card on its way is drawn over the others but takes no pointer: the pile under
      // the pointer is the one at rest there, and its card is found where the pile lays
      // it out (cards.js, pickAt).
      card.classList.add("moving");
      const slide = card.animate(
        [{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 50 }, { transform: "none", zIndex: 50 }],
        { duration: DURATION, easing: "ease-out" },
      );
      slide.onfinish = slide.oncancel = () => card.getAnimations().length || card.classList.remove("moving");
    }
  }
}
