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

// A span as people say it, for what is not a race's clock: "30 s", "1 min 30 s", "4 h 2 min"
// (past an hour the seconds say nothing), as the terminal client says it. Rounded down.
export function duration(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const [hours, minutes, rest] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
  if (hours) return `${hours} h${minutes ? ` ${minutes} min` : ""}`;
  if (minutes) return `${minutes} min${rest ? ` ${rest} s` : ""}`;
  return `${rest} s`;
}

// `n` of `word`, in the plural but for one: "1 card", "3 moves", "0 days".
export function counted(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// A time that ranks to the millisecond (a daily board's): "1:05.744".
export function fmtMillis(s) {
  if (s === null || s === undefined) return "";
  const ms = Math.max(0, Math.round(s * 1000));
  return `${fmtSeconds(Math.floor(ms / 1000))}.${String(ms % 1000).padStart(3, "0")}`;
}

// Run `redraw` (which replaces what is in `container`) and give the keyboard focus back to
// the same control if it was in there, found in the new drawing by `finder`.
export function keepFocus(container, redraw) {
  const active = document.activeElement;
  const inside = active && active !== document.body && container.contains(active);
  const selector = inside ? finder(active) : null;
  redraw();
  if (!inside || active.isConnected || !selector) return;
  container.querySelector(selector)?.focus();
}

// How to find a control again once drawn anew: its id; else its tag and classes in the
// element of the same data-room / data-tour / data-player / data-game (a list's row); else
// its tag and classes with the same name (aria-label), link or title.
function finder(el) {
  if (el.id) return `#${CSS.escape(el.id)}`;
  const tag = el.tagName.toLowerCase() + [...el.classList].map((c) => `.${CSS.escape(c)}`).join("");
  const owner = el.closest("[data-room], [data-tour], [data-player], [data-game]");
  if (owner) {
    const [key, value] = Object.entries(owner.dataset)[0];
    return `[data-${key}="${CSS.escape(value)}"] ${tag}`;
  }
  for (const attr of ["aria-label", "href", "title"]) {
    const value = el.getAttribute(attr);
    if (value) return `${tag}[${attr}="${CSS.escape(value)}"]`;
  }
  return null;
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

// An action that ends by leaving the page (location.assign), asked once: a second call
// while it is on its way (a double click) is dropped, where it made a second room (or
// attempt, or tournament), which its maker never saw. A failure, handed to `failed` with
// the call's arguments, frees it, and so does the page shown again from the back button.
export function leavingOnce(action, failed) {
  let busy = false;
  addEventListener("pageshow", () => (busy = false));
  return async (...args) => {
    if (busy) return;
    busy = true;
    try {
      await action(...args);
    } catch (err) {
      busy = false;
      failed(err, ...args);
    }
  };
}
