// The local workspace page: renders the workspace state (messages with their Block Kit JSON,
// ephemeral notes, open modals) and sends what the person does to /_local/*, where the
// emulator turns it into Slack's signed deliveries to the bot.
"use strict";

const EMOJI = {
  lock: "🔒", white_check_mark: "✅", no_entry_sign: "🚫", question: "❓", warning: "⚠️",
  hourglass: "⌛", hourglass_flowing_sand: "⏳", x: "❌", eyes: "👀", memo: "📝",
  pencil: "✏️", pencil2: "✏️", robot_face: "🤖", heavy_check_mark: "✔️", lock_with_ink_pen: "🔏",
  alarm_clock: "⏰", information_source: "ℹ️", bust_in_silhouette: "👤", tada: "🎉",
  stopwatch: "⏱️", clock3: "🕒", calendar: "📆", mag: "🔍", money_with_wings: "💸",
  ticket: "🎫", wastebasket: "🗑️", speech_balloon: "💬", key: "🔑", arrow_right: "➡️",
};

const state = {
  user: localStorage.getItem("countersign.user") || "",
  since: -1,
  data: null,
  thread: null, // ts of the open thread
  viewKey: "",
};

const $ = (id) => document.getElementById(id);
const el = (tag, cls, html) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (html !== undefined) node.innerHTML = html;
  return node;
};

// -- mrkdwn --------------------------------------------------------------------------------
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;")
  .replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const unesc = (s) => String(s).replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

function nameOf(id) {
  const data = state.data;
  if (data && id === data.bot.id) return data.bot.name;
  const person = data && data.people.find((p) => p.id === id);
  return person ? person.name : id;
}

function formatDate(epoch, format, fallback) {
  const date = new Date(Number(epoch) * 1000);
  if (Number.isNaN(date.getTime())) return esc(fallback || "");
  const day = date.toLocaleDateString(undefined, { month: "short", day: "numeric", year: "numeric" });
  const time = date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return esc(format.replace(/\{date[a-z_]*\}/g, day).replace(/\{time[a-z_]*\}/g, time));
}

function control(inner) {
  const [target, label] = inner.split("|", 2).concat([undefined]).slice(0, 2);
  if (target.startsWith("@")) return `<span class="mention">@${esc(nameOf(target.slice(1)))}</span>`;
  if (target.startsWith("#")) return `<span class="mention">#${esc(unesc(label || target.slice(1)))}</span>`;
  if (target.startsWith("!date^")) {
    const [, epoch, format] = target.split("^");
    return formatDate(epoch, format || "{date} {time}", label && unesc(label));
  }
  if (target.startsWith("!")) return `<span class="mention">@${esc(target.slice(1).split("^")[0])}</span>`;
  const url = unesc(target);
  if (/^(https?:|mailto:)/.test(url)) {
    return `<a href="${esc(url)}" target="_blank" rel="noopener">${esc(unesc(label || target))}</a>`;
  }
  return esc(unesc(label || target));
}

function mrkdwn(raw) {
  const slots = [];
  const hold = (html) => `\u0000${slots.push(html) - 1}\u0000`;
  let s = String(raw || "").replace(/\u0000/g, "");
  s = s.replace(/```([\s\S]*?)```/g, (_, c) => hold(`<pre><code>${esc(unesc(c.replace(/^\n/, "")))}</code></pre>`));
  s = s.replace(/`([^`\n]+)`/g, (_, c) => hold(`<code>${esc(unesc(c))}</code>`));
  s = s.replace(/<([^<>\n]+)>/g, (_, c) => hold(control(c)));
  s = esc(unesc(s));
  s = s.replace(/(^|[^\w*])\*([^*\n]+)\*(?![\w*])/g, "$1<b>$2</b>");
  s = s.replace(/(^|[^\w_])_([^_\n]+)_(?![\w_])/g, "$1<i>$2</i>");
  s = s.replace(/(^|[^\w~])~([^~\n]+)~(?![\w~])/g, "$1<s>$2</s>");
  s = s.replace(/:([a-z0-9_+-]+):/g, (m, n) => EMOJI[n] || m);
  s = s.replace(/\n/g, "<br>");
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => slots[Number(i)]);
}

const textObject = (t) => (!t ? "" : t.type === "mrkdwn" ? mrkdwn(t.text) : esc(t.text));

// -- Block Kit -----------------------------------------------------------------------------
function button(element, onClick) {
  const b = el("button", "btn" + (element.style ? " " + element.style : ""), textObject(element.text));
  b.type = "button";
  b.dataset.actionId = element.action_id || "";
  b.addEventListener("click", () => onClick(element, b));
  return b;
}

function renderBlocks(blocks, onClick) {
  const out = el("div", "blocks");
  blocks.forEach((block) => {
    let node = null;
    if (block.type === "section") {
      node = el("div", "block section");
      if (block.text) node.appendChild(el("div", "text", textObject(block.text)));
      if (block.fields) {
        const grid = el("div", "block fields");
        block.fields.forEach((f) => grid.appendChild(el("div", "text", textObject(f))));
        node.appendChild(grid);
      }
      if (block.accessory && block.accessory.type === "button") node.appendChild(button(block.accessory, onClick));
    } else if (block.type === "context") {
      node = el("div", "block context");
      (block.elements || []).forEach((e) => {
        if (e.type === "image") node.appendChild(el("span", "", esc(e.alt_text || "")));
        else node.appendChild(el("span", "text", textObject(e)));
      });
    } else if (block.type === "actions") {
      node = el("div", "block actions");
      node.dataset.blockId = block.block_id || "";
      (block.elements || []).forEach((e) => {
        if (e.type === "button") node.appendChild(button(e, onClick));
      });
    } else if (block.type === "header") {
      node = el("div", "block header", textObject(block.text));
    } else if (block.type === "divider") {
      node = el("hr", "block divider");
    } else if (block.type === "image") {
      node = el("div", "block context", esc(block.alt_text || ""));
    }
    if (node) out.appendChild(node);
  });
  return out;
}

// -- messages and threads ------------------------------------------------------------------
const clock = (ts) => new Date(Number(ts) * 1000).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

function messageNode(message, replies) {
  const bot = Boolean(message.bot_id);
  const node = el("div", "message" + (message.ephemeral ? " ephemeral" : ""));
  node.dataset.ts = message.ts;
  node.dataset.testid = message.blocks.some((b) => b.type === "actions") ? "card" : "message";
  const name = nameOf(message.user);
  node.appendChild(el("div", "avatar " + (bot ? "bot" : "person"), esc(name.slice(0, 1).toUpperCase())));
  const body = el("div", "body");
  body.appendChild(el("div", "meta", `<span class="name">${esc(name)}</span>` +
    (bot ? '<span class="app">APP</span> ' : "") + esc(clock(message.ts))));
  if (message.ephemeral) body.appendChild(el("div", "only-you", "Only visible to you"));
  if (message.blocks.length) {
    body.appendChild(renderBlocks(message.blocks, (element, b) => click(message, element, b)));
  } else {
    body.appendChild(el("div", "text", mrkdwn(message.text)));
  }
  if (replies !== undefined && replies > 0) {
    const link = el("button", "replies", `${replies} ${replies === 1 ? "reply" : "replies"}`);
    link.addEventListener("click", () => openThread(message.ts));
    body.appendChild(link);
  }
  node.appendChild(body);
  return node;
}

function keepScroll(container, fill) {
  const atBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 40;
  const top = container.scrollTop;
  container.innerHTML = "";
  fill();
  container.scrollTop = atBottom ? container.scrollHeight : top;
}

function render() {
  const data = state.data;
  $("model").textContent = data.model;
  $("channel-name").textContent = data.channel.name;
  $("channel-title").textContent = data.channel.name;
  const select = $("user-select");
  if (!select.options.length) {
    data.people.forEach((p) => select.appendChild(new Option(p.name, p.id)));
  }
  select.value = data.user;
  const roots = data.messages.filter((m) => !m.thread_ts || m.thread_ts === m.ts);
  keepScroll($("messages"), () => roots.forEach((m) => {
    const replies = data.messages.filter((r) => r.thread_ts === m.ts && r.ts !== m.ts && !r.ephemeral).length;
    $("messages").appendChild(messageNode(m, replies));
  }));
  if (state.thread) {
    const thread = data.messages.filter((m) => m.ts === state.thread || m.thread_ts === state.thread);
    keepScroll($("thread-messages"), () => thread.forEach((m) => $("thread-messages").appendChild(messageNode(m))));
  }
  renderView(data.views[data.views.length - 1]);
}

function openThread(ts) {
  state.thread = ts;
  $("thread").classList.remove("hidden");
  $("thread").dataset.ts = ts;
  if (state.data) render();
}

// -- talking to the emulator ---------------------------------------------------------------
async function send(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ user: state.user, ...body }),
  });
  return response.ok ? response.json() : { ok: false, status: response.status };
}

async function click(message, element, b) {
  if (element.confirm && !(await confirmDialog(element.confirm))) return;
  b.disabled = true;
  try {
    await send("/_local/actions", { ts: message.ts, action_id: element.action_id });
  } finally {
    setTimeout(() => { b.disabled = false; }, 300);
  }
}

async function post(textarea, threadTs) {
  const text = textarea.value.trim();
  if (!text) return;
  textarea.value = "";
  const answer = await send("/_local/messages", { text, thread_ts: threadTs });
  if (answer.ok && !threadTs) openThread(answer.ts);
}

async function poll() {
  for (;;) {
    try {
      const query = new URLSearchParams({ user: state.user, since: String(state.since) });
      const response = await fetch(`/_local/state?${query}`);
      if (!response.ok) throw new Error(String(response.status));
      const data = await response.json();
      if (data.user !== state.user && state.user) continue;
      state.data = data;
      state.user = data.user;
      state.since = data.version;
      render();
    } catch (error) {
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// -- modals --------------------------------------------------------------------------------
function renderView(view) {
  const overlay = $("overlay");
  const key = view ? `${view.id}:${view.hash}:${JSON.stringify(view.blocks)}` : "";
  if (key === state.viewKey) return;
  state.viewKey = key;
  overlay.innerHTML = "";
  overlay.classList.toggle("hidden", !view);
  if (!view) return;
  const modal = el("form", "modal");
  modal.dataset.testid = "modal";
  modal.dataset.callbackId = view.callback_id || "";
  modal.appendChild(el("div", "title", textObject(view.title)));
  const content = el("div", "content");
  const inputs = [];
  (view.blocks || []).forEach((block, i) => {
    if (block.type === "input") inputs.push(inputBlock(block, i, content));
    else content.appendChild(renderBlocks([block], () => {}));
  });
  modal.appendChild(content);
  const buttons = el("div", "buttons");
  const close = el("button", "btn", textObject(view.close || { type: "plain_text", text: "Cancel" }));
  close.type = "button";
  close.dataset.role = "close";
  close.addEventListener("click", () => send(`/_local/views/${view.id}/close`, {}));
  buttons.appendChild(close);
  if (view.submit) {
    const submit = el("button", "btn primary", textObject(view.submit));
    submit.type = "submit";
    submit.dataset.role = "submit";
    buttons.appendChild(submit);
  }
  modal.appendChild(buttons);
  modal.addEventListener("submit", async (event) => {
    event.preventDefault();
    inputs.forEach((i) => i.showError(""));
    const missing = inputs.filter((i) => !i.optional && i.empty());
    missing.forEach((i) => i.showError("Please complete this required field."));
    if (missing.length) return;
    const values = {};
    inputs.forEach((i) => { values[i.blockId] = { [i.actionId]: i.value() }; });
    const answer = await send(`/_local/views/${view.id}/submit`, { values });
    if (answer.errors) inputs.forEach((i) => i.showError(answer.errors[i.blockId] || ""));
  });
  overlay.appendChild(modal);
}

function inputBlock(block, index, parent) {
  const e = block.element || {};
  const blockId = block.block_id || `b${index}`;
  const actionId = e.action_id || `a${index}`;
  const box = el("div", "input");
  box.dataset.blockId = blockId;
  const label = el("label", "label", textObject(block.label) +
    (block.optional ? ' <span class="optional">(optional)</span>' : ""));
  box.appendChild(label);
  const read = inputElement(e, box, `${blockId}-${actionId}`);
  label.htmlFor = `${blockId}-${actionId}`;
  if (block.hint) box.appendChild(el("div", "hint", textObject(block.hint)));
  const error = el("div", "error");
  box.appendChild(error);
  parent.appendChild(box);
  return {
    blockId, actionId, optional: Boolean(block.optional),
    value: read.value, empty: read.empty,
    showError: (message) => { error.textContent = message; },
  };
}

function inputElement(e, box, id) {
  const optionOf = (o) => ({ text: o.text, value: o.value });
  const options = (e.options || []).concat(...(e.option_groups || []).map((g) => g.options));
  if (e.type === "static_select") {
    const select = el("select");
    select.id = id;
    select.appendChild(new Option(e.placeholder ? e.placeholder.text : "Choose…", ""));
    options.forEach((o) => select.appendChild(new Option(o.text.text, o.value)));
    if (e.initial_option) select.value = e.initial_option.value;
    box.appendChild(select);
    const chosen = () => options.find((o) => o.value === select.value);
    return {
      value: () => ({ type: e.type, selected_option: chosen() ? optionOf(chosen()) : null }),
      empty: () => !chosen(),
    };
  }
  if (e.type === "checkboxes" || e.type === "radio_buttons") {
    const kind = e.type === "checkboxes" ? "checkbox" : "radio";
    const initial = (e.initial_options || (e.initial_option ? [e.initial_option] : [])).map((o) => o.value);
    const boxes = options.map((o, i) => {
      const input = el("input");
      input.type = kind;
      input.name = id;
      input.id = `${id}-${i}`;
      input.value = o.value;
      input.checked = initial.includes(o.value);
      const wrap = el("label", "choice");
      wrap.appendChild(input);
      wrap.appendChild(el("span", "", " " + textObject(o.text)));
      box.appendChild(wrap);
      return input;
    });
    const picked = () => options.filter((o, i) => boxes[i].checked).map(optionOf);
    return {
      value: () => (kind === "checkbox"
        ? { type: e.type, selected_options: picked() }
        : { type: e.type, selected_option: picked()[0] || null }),
      empty: () => picked().length === 0,
    };
  }
  const multiline = e.type === "plain_text_input" && e.multiline;
  const input = el(multiline ? "textarea" : "input");
  input.id = id;
  if (multiline) input.rows = 3;
  else input.type = { number_input: "number", email_text_input: "email", url_text_input: "url", datepicker: "date" }[e.type] || "text";
  if (e.type === "number_input") input.step = e.is_decimal_allowed ? "any" : "1";
  if (e.min_value !== undefined) input.min = e.min_value;
  if (e.max_value !== undefined) input.max = e.max_value;
  if (e.max_length) input.maxLength = e.max_length;
  if (e.placeholder) input.placeholder = e.placeholder.text;
  input.value = e.initial_value !== undefined ? e.initial_value : (e.initial_date || "");
  box.appendChild(input);
  const raw = () => input.value;
  return {
    value: () => (e.type === "datepicker"
      ? { type: e.type, selected_date: raw() || null }
      : { type: e.type, value: raw() === "" ? null : raw() }),
    empty: () => raw().trim() === "",
  };
}

function confirmDialog(confirm) {
  return new Promise((resolve) => {
    const overlay = el("div", "overlay");
    const box = el("div", "modal");
    box.dataset.testid = "confirm";
    box.appendChild(el("div", "title", textObject(confirm.title)));
    box.appendChild(el("div", "content confirm-text", textObject(confirm.text)));
    const buttons = el("div", "buttons");
    const done = (answer) => { overlay.remove(); resolve(answer); };
    const deny = el("button", "btn", textObject(confirm.deny || { type: "plain_text", text: "Cancel" }));
    deny.addEventListener("click", () => done(false));
    const ok = el("button", "btn " + (confirm.style || "primary"), textObject(confirm.confirm || { type: "plain_text", text: "Confirm" }));
    ok.dataset.role = "confirm";
    ok.addEventListener("click", () => done(true));
    buttons.append(deny, ok);
    box.appendChild(buttons);
    overlay.appendChild(box);
    document.body.appendChild(overlay);
  });
}

// -- wiring ------------------------------------------------------------------------------
function composer(form, textarea, threadTs) {
  form.addEventListener("submit", (event) => { event.preventDefault(); post(textarea, threadTs()); });
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); post(textarea, threadTs()); }
  });
}

composer($("composer"), $("composer-input"), () => null);
composer($("thread-composer"), $("thread-input"), () => state.thread);
$("thread-close").addEventListener("click", () => {
  state.thread = null;
  $("thread").classList.add("hidden");
});
$("user-select").addEventListener("change", (event) => {
  state.user = event.target.value;
  localStorage.setItem("countersign.user", state.user);
  state.since = -1;
  state.viewKey = "";
  fetch(`/_local/state?${new URLSearchParams({ user: state.user, since: "-1" })}`)
    .then((r) => r.json()).then((data) => {
      state.data = data;
      state.since = data.version;
      render();
    });
});
poll();
