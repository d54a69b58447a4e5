// Block Kit in the browser: mrkdwn to HTML, message blocks, and the input elements of
// modals (state values shaped as Slack sends them in view_submission).
"use strict";

// Slack emoji shortcodes the bot's messages use (bot/slack/_messages.py and the like), and a
// few common ones; an unknown shortcode stays as text, as Slack shows a missing custom emoji.
const EMOJI = {
  alarm_clock: "⏰", arrow_down: "⬇️", arrow_left: "⬅️", arrow_right: "➡️", arrow_up: "⬆️",
  arrows_counterclockwise: "🔄", bell: "🔔", bust_in_silhouette: "👤", calendar: "📆", clock3: "🕒",
  eyes: "👀", gear: "⚙️", hand: "✋", heavy_check_mark: "✔️", hourglass: "⌛",
  hourglass_flowing_sand: "⏳", information_source: "ℹ️", key: "🔑", leftwards_arrow_with_hook: "↩️",
  link: "🔗", lock: "🔒", lock_with_ink_pen: "🔏", mag: "🔍", memo: "📝", money_with_wings: "💸",
  no_entry: "⛔", no_entry_sign: "🚫", pencil: "✏️", pencil2: "✏️", point_right: "👉", point_up: "☝️",
  question: "❓", repeat: "🔁", robot_face: "🤖", rotating_light: "🚨", scissors: "✂️", sparkles: "✨",
  speech_balloon: "💬", stopwatch: "⏱️", tada: "🎉", thumbsup: "👍", ticket: "🎫", warning: "⚠️",
  wastebasket: "🗑️", white_check_mark: "✅", x: "❌", zap: "⚡",
};
const emoji = (html) => html.replace(/:([a-z0-9_+-]+):/g, (m, n) => EMOJI[n] || m);

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

// Set by the page: a user id → a display name, a channel id → its name, a user group id → its
// handle (Slack shows <@U…>, <#C…> and <!subteam^S…> by name; so does this page).
let nameOf = (id) => id;
let channelName = (id) => id;
let groupHandle = (id) => id;

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
  if (target.startsWith("#")) return `<span class="mention">#${esc(unesc(label || channelName(target.slice(1))))}</span>`;
  if (target.startsWith("!date^")) {
    const [, epoch, format] = target.split("^");
    return formatDate(epoch, format || "{date} {time}", label && unesc(label));
  }
  if (target.startsWith("!subteam^")) {
    return `<span class="mention">@${esc(unesc(label || "").replace(/^@/, "") || groupHandle(target.split("^")[1]))}</span>`;
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
  s = emoji(s);
  s = s.replace(/\n/g, "<br>");
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => slots[Number(i)]);
}

// plain_text shows shortcodes as emoji too (its "emoji" flag defaults to true), unless turned off.
const textObject = (t) => (!t ? "" : t.type === "mrkdwn" ? mrkdwn(t.text)
  : t.emoji === false ? esc(t.text) : emoji(esc(t.text)));

// -- Block Kit -----------------------------------------------------------------------------
function button(element, onClick) {
  const b = el("button", "btn" + (element.style ? " " + element.style : ""), textObject(element.text));
  b.type = "button";
  b.dataset.actionId = element.action_id || "";
  b.addEventListener("click", () => onClick(element, b));
  return b;
}

// An overflow menu (⋯): its options in a list that opens below it; choosing one is a click on
// {type: "overflow", action_id, value: the option's value} (with the menu's confirm dialog).
function overflowMenu(element, onClick) {
  const wrap = el("span", "overflow");
  const toggle = el("button", "btn overflow-toggle", "⋯");
  toggle.type = "button";
  toggle.dataset.actionId = element.action_id || "";
  toggle.title = "More actions";
  const list = el("div", "overflow-menu hidden");
  (element.options || []).forEach((o) => {
    const item = el("button", "overflow-option", textObject(o.text));
    item.type = "button";
    item.dataset.testid = "menu-option";
    item.addEventListener("click", () => {
      list.classList.add("hidden");
      onClick({ type: "overflow", action_id: element.action_id, value: o.value, confirm: element.confirm }, toggle);
    });
    list.appendChild(item);
  });
  toggle.addEventListener("click", () => list.classList.toggle("hidden"));
  wrap.append(toggle, list);
  return wrap;
}

// onClick(element, buttonNode, block) runs when a button is clicked.
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
      if (block.accessory && block.accessory.type === "button") node.appendChild(button(block.accessory, (e, b) => onClick(e, b, block)));
      if (block.accessory && block.accessory.type === "overflow") {
        node.classList.add("with-menu");
        node.appendChild(overflowMenu(block.accessory, (e, b) => onClick(e, b, block)));
      }
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
        if (e.type === "button") node.appendChild(button(e, (x, b) => onClick(x, b, block)));
      });
    } else if (block.type === "header") {
      node = el("div", "block header", textObject(block.text));
    } else if (block.type === "divider") {
      node = el("hr", "block divider");
    } else if (block.type === "image") {
      node = el("div", "block context", esc(block.alt_text || ""));
    } else if (block.type === "task_card") {
      node = taskCard(block);
    }
    if (node) out.appendChild(node);
  });
  return out;
}

// A tool's progress in a streamed answer: pending → in_progress → complete or error.
const TASK_ICONS = { pending: "○", in_progress: "◔", complete: "✅", error: "⚠️" };
function taskCard(block) {
  const node = el("div", `block task-card ${block.status}`);
  node.dataset.testid = "task-card";
  node.dataset.status = block.status;
  node.appendChild(el("span", "task-icon", TASK_ICONS[block.status] || "○"));
  node.appendChild(el("span", "task-title", esc(block.title)));
  const output = block.output || block.details;
  const words = output && (output.elements || []).flatMap((s) => s.elements || []).map((e) => e.text || "").join("");
  if (words) node.appendChild(el("span", "task-output", esc(words)));
  return node;
}

// -- modal inputs ------------------------------------------------------------------------
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
