// Tiny DOM helpers shared by every page.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// el.append that skips null/false (el.append(null) would add the text "null").
export function add(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function fmtSeconds(s) {
  if (s === null || s === undefined) return "";
  const total = Math.max(0, Math.floor(s));
  const m = Math.floor(total / 60);
  const sec = String(total % 60).padStart(2, "0");
  return `${m}:${sec}`;
}

// Run `redraw` (which replaces what is in `container`) and give the keyboard focus back to
// the same control if it was in there: the element with the same id, or the element with
// the same classes in the element of the same data-room / data-tour / data-player /
// data-game, or the element with the same classes and name (aria-label).
export function keepFocus(container, redraw) {
  const active = document.activeElement;
  const inside = active && active !== document.body && container.contains(active);
  const owner = inside ? active.closest("[data-room], [data-tour], [data-player], [data-game]") : null;
  const key = owner ? Object.entries(owner.dataset)[0] : null;
  const tag = inside ? active.tagName.toLowerCase() + [...active.classList].map((c) => `.${c}`).join("") : null;
  const id = inside ? active.id : "";
  // A box of its own that scrolls a wide table (tabindex 0): known by its name.
  const label = inside ? active.getAttribute("aria-label") : null;
  redraw();
  if (!inside || active.isConnected) return;
  let again = null;
  if (id) again = document.getElementById(id);
  else if (key) again = container.querySelector(`[data-${key[0]}="${CSS.escape(key[1])}"] ${tag}`);
  else if (label) again = container.querySelector(`${tag}[aria-label="${CSS.escape(label)}"]`);
  again?.focus();
}

export function copyButton(label, text, name = null) {
  const button = h("button", { class: "small", type: "button", title: text, "aria-label": name }, label);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "copied";
    } catch {
      // No clipboard (plain http on a LAN): select the link for the user instead.
      window.prompt("Copy this link:", text);
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}
