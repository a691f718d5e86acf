// The account page (/account): who this browser plays as, and what can be done about it —
// choose a name, claim the account with a password, sign in as another account, link a
// device with a one-time code, sign out (docs/protocol.md section 11).

import { h, add, clear } from "./dom.js";
import { authed, me, shownName, signedIn, signOut } from "./identity.js";

function form(id, title, fields, button, act) {
  const inputs = fields.map(([id, label, attrs]) => [label, h("input", { id, name: id, ...attrs })]);
  const message = h("p", { class: "message", role: "status" });
  const el = h(
    "form",
    { class: "account-form", id },
    h("h2", {}, title),
    inputs.map(([label, input]) => h("label", { class: "field" }, label, input)),
    h("button", { type: "submit" }, button),
    message,
  );
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.className = "message";
    message.textContent = "";
    try {
      message.textContent = await act(Object.fromEntries(inputs.map(([, i]) => [i.id, i.value])));
    } catch (error) {
      message.className = "message error";
      message.textContent = error.message + (error.code ? ` (${error.code})` : "");
    }
  });
  return el;
}

export async function render(root) {
  const player = await me();
  if (!player) {
    root.append(h("p", { class: "error" }, "The server could not be reached: try again in a moment."));
    return;
  }
  const { player: now, names } = await authed("GET", "/me");
  const redraw = async () => render(clear(root));
  add(
    root,
    h("h1", {}, shownName(now)),
    h("p", { class: "muted" },
      now.claimed ? "Your account has a password: sign in with it anywhere." :
        "Anonymous: this browser alone plays as you. Choose a name and a password to sign in elsewhere.",
      " ", h("a", { href: `/p/${encodeURIComponent(now.name)}` }, "Your profile")),
    names.length ? h("p", { class: "muted" }, `Formerly: ${names.map((n) => n.name).join(", ")}`) : null,
    form("rename", "Name", [["name", "New name", { value: now.name, maxlength: "20", required: true, autocomplete: "username" }]],
      "Change name", async ({ name }) => {
        const answer = await authed("POST", "/me/name", { name });
        await signedIn(null, answer.player);
        await redraw();
        return "";
      }),
    now.claimed ? null : form("claim", "Claim this account", [
      ["password", "Password", { type: "password", minlength: "8", required: true, autocomplete: "new-password" }],
      ["again", "Again", { type: "password", minlength: "8", required: true, autocomplete: "new-password" }],
    ], "Claim", async ({ password, again }) => {
      if (password !== again) throw new Error("the two passwords differ");
      const answer = await authed("POST", "/me/claim", { password });
      await signedIn(null, answer.player);
      await redraw();
      return "";
    }),
    form("make-code", "Link another device", [], "Make a code", async () => {
      const answer = await authed("POST", "/me/link");
      const minutes = Math.max(1, Math.round((answer.expires_at - Date.now() / 1000) / 60));
      return `On the other device, within ${minutes} minutes, enter the code ${answer.code}`;
    }),
    form("use-code", "Use a code from another device", [["code", "Code", { required: true, autocomplete: "off" }]],
      "Sign in", async ({ code }) => {
        const answer = await authed("POST", "/link", { code, label: navigator.userAgent.slice(0, 60) });
        await signedIn(answer.key, answer.player);
        location.reload();
        return "";
      }),
    form("sign-in", "Sign in to another account", [
      ["login-name", "Name", { required: true, autocomplete: "username" }],
      ["login-password", "Password", { type: "password", required: true, autocomplete: "current-password" }],
    ], "Sign in", async (values) => {
      const body = { name: values["login-name"], password: values["login-password"], label: navigator.userAgent.slice(0, 60) };
      const answer = await authed("POST", "/sign-in", body);
      await signedIn(answer.key, answer.player);
      location.reload();
      return "";
    }),
    form("sign-out", "Sign out", [], "Sign out of this browser", async () => {
      await signOut();
      location.reload();
      return "";
    }),
  );
}
