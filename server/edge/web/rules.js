// The rules page: each game's rules in plain words, the same text the terminal client shows
// (served by GET /games/GAME/rules from the package). A small Markdown reader draws it.

import { h, clear } from "./dom.js";
import { games } from "./api.js";

export async function render(root, { game }) {
  const known = await games();
  const shown = game || Object.keys(known)[0];
  const nav = h("p", { class: "rule-games" }, "Games: ",
    Object.entries(known).map(([name, g], i) => [i ? " · " : "", h("a", { href: `/rules/${name}`, class: name === shown ? "here" : null }, g.title)]));
  root.append(nav);
  if (game && !Object.hasOwn(known, game)) {
    // A name no game has (a mistyped address): said so, never another game's rules.
    root.append(h("p", { class: "error", id: "no-such-game" }, `No such game: ${game}. The games are listed above.`));
    return;
  }
  const body = h("article", { class: "rules", id: "rules" });
  root.append(body);
  const response = await fetch(`/games/${shown}/rules`);
  if (!response.ok) {
    body.append(h("p", { class: "error" }, `No rules text for ${shown} yet.`));
    return;
  }
  clear(body).append(...markdown(await response.text()));
}

// Headings, paragraphs, lists, `code`, **bold**, *emphasis*, code blocks and tables:
// what the rules texts use. Text only (no HTML passes through).
export function markdown(text) {
  const out = [];
  const lines = text.replace(/\r/g, "").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const code = [];
      i += 1;
      while (i < lines.length && !/^```/.test(lines[i])) code.push(lines[i++]);
      i += 1;
      out.push(h("pre", {}, code.join("\n")));
    } else if (/^#{1,6} /.test(line)) {
      const level = Math.min(line.match(/^#+/)[0].length + 1, 6);
      out.push(h(`h${level}`, {}, inline(line.replace(/^#+ /, ""))));
      i += 1;
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      while (i < lines.length && /^\s*([-*]|\d+\.) /.test(lines[i])) {
        let item = lines[i++].replace(/^\s*([-*]|\d+\.) /, "");
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*]|\d+\.) /.test(lines[i])) item += ` ${lines[i++].trim()}`;
        items.push(h("li", {}, inline(item)));
      }
      out.push(h(ordered ? "ol" : "ul", {}, items));
    } else if (/^\|/.test(line)) {
      const rows = [];
      while (i < lines.length && /^\|/.test(lines[i])) rows.push(lines[i++]);
      const cells = (row) => row.replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
      const body = rows.filter((r) => !/^\|[\s:|-]+\|$/.test(r));
      out.push(h("table", {}, body.map((r, k) => h("tr", {}, cells(r).map((c) => h(k ? "td" : "th", {}, inline(c)))))));
    } else if (line.trim() === "") {
      i += 1;
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() !== "" && !/^(#|```|\||\s*([-*]|\d+\.) )/.test(lines[i])) para.push(lines[i++]);
      out.push(h(/^>/.test(para[0]) ? "blockquote" : "p", {}, inline(para.join(" ").replace(/^> ?/, ""))));
    }
  }
  return out;
}

function inline(text) {
  const parts = [];
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*]+\*)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parts.push(text.slice(last, match.index));
    const token = match[0];
    if (token.startsWith("`")) parts.push(h("code", {}, token.slice(1, -1)));
    else if (token.startsWith("**")) parts.push(h("strong", {}, token.slice(2, -2)));
    else parts.push(h("em", {}, token.slice(1, -1)));
    last = match.index + token.length;
  }
  parts.push(text.slice(last));
  return parts;
}
