// The review page. Every string from a tool call reaches the page through textContent or
// an attribute value, never as markup; the key lives in sessionStorage and goes with each
// request as a bearer header (no cookie, so no request can be forged from another site).
"use strict";

const state = {
  key: sessionStorage.getItem("tooldedup-key") || "",
  before: null, queue: [], queueFull: false, at: 0, open: null, request: 0, busy: false,
};
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// Invisible format characters (bidi overrides, zero-width spaces, joiners, BOM) shown as
// escapes: "ACCT-\u202E4321" must not read as "ACCT-1234" to the person labelling.
const INVISIBLE = /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

function visible(value) {
  return String(value).replace(INVISIBLE, (c) => "\\u" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0"));
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = visible(text);
  if (cls) node.className = cls;
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  return node;
}

function say(text, error) {
  const status = $("status");
  status.textContent = text;
  status.className = error ? "error" : "";
}

async function api(path, options) {
  const headers = { Accept: "application/json" };
  if (state.key) headers.Authorization = "Bearer " + state.key;
  if (options && options.body) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { ...(options || {}), headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = body && body.error ? body.error.message : "HTTP " + response.status;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return body;
}

function failed(error) {
  if (error.status === 401) say("A key is needed: " + error.message, true);
  else if (error.status === 403) say("This key may not do that: " + error.message, true);
  else say(error.message, true);
}

function when(ts) {
  return new Date(ts * 1000).toISOString().replace("T", " ").slice(0, 19);
}

function pretty(value) {
  return value === undefined || value === null ? "—" : visible(JSON.stringify(value, null, 2));
}

function score(value) {
  return value === null || value === undefined ? "" : Number(value).toFixed(4);
}

// ---- decisions ----------------------------------------------------------------------

function filters() {
  const form = new FormData($("filters"));
  const params = new URLSearchParams({ limit: "50" });
  for (const name of ["tool", "decision", "observed", "stage", "min_score", "max_score"]) {
    const value = String(form.get(name) || "").trim();
    if (value) params.set(name, value);
  }
  for (const name of ["since", "until"]) {
    // The inputs are UTC, like every time on the page; the service reads a time without
    // a zone as UTC.
    const value = String(form.get(name) || "");
    if (value) params.set(name, value);
  }
  if (form.get("borderline")) params.set("borderline", "true");
  if (form.get("unlabelled")) params.set("labelled", "false");
  return params;
}

function row(entry, onOpen) {
  const tr = el("tr");
  tr.tabIndex = 0;
  tr.dataset.check = entry.check_id;
  const label = entry.feedback ? entry.feedback.label : "";
  // An ask says how it ended; observe mode says what enforcement would have answered.
  let decision = entry.decision;
  if (entry.ask_ending) decision += " (" + entry.ask_ending + ")";
  if (entry.observed) decision += " (observed: " + entry.observed + ")";
  const kind = entry.observed ? "observed " + entry.observed : entry.decision;
  for (const [text, cls] of [
    [when(entry.ts), ""], [entry.tool, "mono"], [entry.session_id, "mono"],
    [decision, "decision " + kind], [entry.stage || "", ""],
    [score(entry.score), "num"], [label, label ? "label " + label : ""],
  ]) tr.append(el("td", text, cls));
  tr.addEventListener("click", () => onOpen(entry.check_id));
  tr.addEventListener("keydown", (event) => { if (event.key === "Enter") onOpen(entry.check_id); });
  return tr;
}

async function loadLog(more) {
  const params = filters();
  if (more && state.before) params.set("before", state.before);
  try {
    const page = await api("/v1/log?" + params);
    const body = $("log").querySelector("tbody");
    if (!more) body.replaceChildren();
    for (const entry of page.entries) body.append(row(entry, openDecision));
    state.before = page.next_before;
    $("older").hidden = !page.next_before;
    say(body.children.length ? body.children.length + " decisions shown" : "No decisions match.");
  } catch (error) {
    failed(error);
  }
}

// ---- one decision ---------------------------------------------------------------------

async function openDecision(checkId) {
  // Only the last decision asked for is shown: an earlier answer arriving late is dropped,
  // so the buttons always label what is on the screen.
  const mine = ++state.request;
  state.open = null;
  try {
    const view = await api("/v1/log/" + encodeURIComponent(checkId));
    if (mine !== state.request) return;
    state.open = view;
    showDecision(view);
  } catch (error) {
    if (mine === state.request) failed(error);
  }
}

function closeDecision() {
  state.request += 1;
  state.open = null;
  $("detail").hidden = true;
}

function showDecision(view) {
  const entry = view.entry;
  $("detail").hidden = false;
  $("detail-title").textContent = visible(entry.tool) + ": " + entry.decision + (entry.stage ? " (" + entry.stage + ")" : "");
  // A call this check claimed reads as sent; otherwise the log keeps its canonical form.
  $("proposed-title").textContent = view.claimed ? "Proposed call" : "Proposed call (canonical form)";
  $("proposed").textContent = pretty(view.claimed ? view.claimed.args : entry.args);
  const other = view.compared_with;
  $("other-title").textContent = view.relation === "closest" ? "Closest call (no match)" : "Matched call";
  $("matched").textContent = other ? pretty(other.args) : "— nothing stored to compare with";
  const fields = $("fields").querySelector("tbody");
  fields.replaceChildren();
  for (const field of view.fields) {
    const tr = el("tr", undefined, field.same ? "" : "differs");
    tr.append(el("td", field.path, "mono"), el("td", field.compared),
      el("td", field.proposed ?? "—"), el("td", field.matched ?? "—"), el("td", score(field.cosine), "num"));
    fields.append(tr);
  }
  const stages = $("stages").querySelector("tbody");
  stages.replaceChildren();
  for (const stage of (entry.explain && entry.explain.stages) || []) {
    const tr = el("tr");
    tr.append(el("td", stage.stage), el("td", score(stage.score), "num"), el("td", score(stage.threshold), "num"),
      el("td", stage.matched ? "yes" : "no"), el("td", stage.verdict || ""), el("td", stage.detail || ""));
    stages.append(tr);
  }
  const judge = entry.explain && entry.explain.judge;
  $("judge").textContent = judge ? "Judge: " + visible(JSON.stringify(judge)) : "";
  $("result").textContent = other ? pretty(other.status === "pending" ? "(still running)" : other.result) : "—";
  const label = entry.feedback ? "labelled " + entry.feedback.label : "not labelled";
  $("label-status").textContent = label;
  const canLabel = Boolean(entry.matched_call_id);
  $("same").disabled = !canLabel;
  $("different").disabled = !canLabel;
}

async function label(kind) {
  const view = state.open;
  if (!view || !view.entry.matched_call_id || $("detail").hidden || state.busy) return false;
  state.busy = true;
  try {
    await api("/v1/feedback", {
      method: "POST",
      body: JSON.stringify({ check_id: view.entry.check_id, label: kind, source: "human" }),
    });
    view.entry.feedback = { label: kind };
    $("label-status").textContent = "labelled " + kind;
    const cell = document.querySelector('tr[data-check="' + CSS.escape(view.entry.check_id) + '"] td:last-child');
    if (cell) { cell.textContent = kind; cell.className = "label " + kind; }
    return true;
  } catch (error) {
    $("label-status").textContent = error.message;
    failed(error);
    return false;
  } finally {
    state.busy = false;
  }
}

// ---- the queue ------------------------------------------------------------------------

async function loadQueue() {
  try {
    const page = await api("/v1/log?" + new URLSearchParams({ borderline: "true", labelled: "false", limit: "200" }));
    state.queue = page.entries.filter((e) => e.matched_call_id).map((e) => e.check_id);
    state.queueFull = page.next_before !== null;
    state.at = 0;
    showQueue();
  } catch (error) {
    failed(error);
  }
}

function showQueue() {
  const left = state.queue.length;
  if (!left && state.queueFull) {
    loadQueue(); // the next 200
    return;
  }
  $("queue-position").textContent = left ? "Match " + (state.at + 1) + " of " + left : "Nothing left to label.";
  if (left) openDecision(state.queue[state.at]);
  else closeDecision();
}

async function labelInQueue(kind) {
  // The match on the screen is the one labelled, and the one taken off the queue.
  const shown = state.open && state.open.entry.check_id;
  if (!shown || !(await label(kind))) return;
  const at = state.queue.indexOf(shown);
  if (at >= 0) state.queue.splice(at, 1);
  state.at = Math.min(at >= 0 ? at : state.at, Math.max(0, state.queue.length - 1));
  showQueue();
}

// ---- at a glance ----------------------------------------------------------------------

async function loadGlance() {
  const hours = new FormData($("glance-form")).get("hours");
  try {
    const summary = await api("/v1/review/summary?hours=" + encodeURIComponent(hours));
    drawGlance(summary);
  } catch (error) {
    failed(error);
  }
}

const COLOURS = { proceed: "#4c78a8", duplicate: "#e45756", in_progress: "#f2a541", reconcile: "#9d6fb0", ask: "#54a24b" };

function drawGlance(summary) {
  const body = $("glance-body");
  body.replaceChildren();
  body.append(el("p", summary.checks + " checks since " + when(summary.since) + " UTC"));
  const latency = summary.latency_ms;
  body.append(el("p", latency.p50 === undefined ? "No latency yet." :
    "Latency of the newest " + summary.latency_sample + " checks: p50 " + latency.p50 + " ms, p90 " +
    latency.p90 + " ms, p99 " + latency.p99 + " ms"));
  body.append(el("h3", "Checks per decision over time"), seriesChart(summary));
  body.append(el("h3", "Checks per stage"), stageTable(summary));
  body.append(el("h3", "Per tool"), toolTable(summary));
  body.append(el("h3", "Scores of labelled checks"), histogram(summary));
}

function seriesChart(summary) {
  const buckets = new Map();
  for (const [start, decision, , count] of summary.series) {
    const bucket = buckets.get(start) || {};
    bucket[decision] = (bucket[decision] || 0) + count;
    buckets.set(start, bucket);
  }
  const starts = [...buckets.keys()].sort((a, b) => a - b);
  const width = 640, height = 160, pad = 24;
  const chart = svg("svg", { width, height, viewBox: "0 0 " + width + " " + height, role: "img" });
  const most = Math.max(1, ...starts.map((s) => Object.values(buckets.get(s)).reduce((a, b) => a + b, 0)));
  // Bars stand at their time: a quiet hour is a gap, not a missing bar.
  const first = Math.floor(summary.since / summary.bucket_seconds) * summary.bucket_seconds;
  const slots = Math.max(1, Math.ceil((Date.now() / 1000 - first) / summary.bucket_seconds));
  const step = (width - pad) / slots;
  starts.forEach((start) => {
    const n = Math.round((start - first) / summary.bucket_seconds);
    let y = height - pad;
    for (const decision of Object.keys(COLOURS)) {
      const count = buckets.get(start)[decision] || 0;
      if (!count) continue;
      const h = (count / most) * (height - 2 * pad);
      y -= h;
      const bar = svg("rect", { x: pad + n * step, y, width: Math.max(1, step - 2), height: h, fill: COLOURS[decision] });
      bar.append(svg("title"));
      bar.firstChild.textContent = when(start) + ": " + count + " " + decision;
      chart.append(bar);
    }
  });
  let x = pad;
  for (const [decision, colour] of Object.entries(COLOURS)) {
    chart.append(svg("rect", { x, y: height - 12, width: 10, height: 10, fill: colour }));
    const text = svg("text", { x: x + 14, y: height - 3, "font-size": 11 });
    text.textContent = decision;
    chart.append(text);
    x += 110;
  }
  return chart;
}

function stageTable(summary) {
  const counts = new Map();
  for (const [, decision, stage, count] of summary.series) {
    const key = decision + " / " + stage;
    counts.set(key, (counts.get(key) || 0) + count);
  }
  const table = el("table");
  table.append(el("thead"));
  table.tHead.append(el("tr"));
  table.tHead.rows[0].append(el("th", "Decision / stage"), el("th", "Checks"));
  const body = el("tbody");
  for (const [key, count] of [...counts.entries()].sort()) {
    const tr = el("tr");
    tr.append(el("td", key), el("td", count, "num"));
    body.append(tr);
  }
  table.append(body);
  return table;
}

function counted(counts) {
  // "3 confirmed, 1 expired": each outcome with its count, in a fixed order.
  const parts = Object.entries(counts || {}).sort().map(([name, n]) => n + " " + name);
  return parts.length ? parts.join(", ") : "—";
}

function toolTable(summary) {
  const table = el("table");
  const head = el("tr");
  for (const name of ["Tool", "Checks", "Hit rate", "Asks (how they ended)", "Observed (would-be answers)", "Labels", "Labels calibration still needs"]) head.append(el("th", name));
  table.append(el("thead"));
  table.tHead.append(head);
  const body = el("tbody");
  for (const tool of summary.tools) {
    const tr = el("tr");
    const rate = tool.checks ? (100 * tool.duplicates / tool.checks).toFixed(1) + " %" : "—";
    tr.append(el("td", tool.tool, "mono"), el("td", tool.checks, "num"), el("td", rate, "num"),
      el("td", counted(tool.asks)), el("td", counted(tool.observed)),
      el("td", tool.labels, "num"), el("td", tool.note || tool.labels_to_go, tool.note ? "" : "num"));
    body.append(tr);
  }
  table.append(body);
  return table;
}

function histogram(summary) {
  const width = 640, height = 180, pad = 24, bins = 40, low = 0.6;
  const chart = svg("svg", { width, height, viewBox: "0 0 " + width + " " + height, role: "img" });
  const counts = { duplicate: new Array(bins).fill(0), distinct: new Array(bins).fill(0) };
  for (const [value, label] of summary.scores) {
    const bin = Math.min(bins - 1, Math.max(0, Math.floor(((value - low) / (1 - low)) * bins)));
    if (counts[label]) counts[label][bin] += 1;
  }
  const most = Math.max(1, ...counts.duplicate, ...counts.distinct);
  const step = (width - 2 * pad) / bins;
  const xOf = (value) => pad + ((value - low) / (1 - low)) * (width - 2 * pad);
  for (const [label, colour, shift] of [["duplicate", "#e45756", 0], ["distinct", "#4c78a8", step / 2]]) {
    counts[label].forEach((count, n) => {
      if (!count) return;
      const h = (count / most) * (height - 2 * pad);
      chart.append(svg("rect", { x: pad + n * step + shift, y: height - pad - h, width: step / 2, height: h, fill: colour }));
    });
  }
  for (const [value, name] of [[summary.min_cosine_duplicate, "duplicate"], [summary.min_cosine_borderline, "borderline"]]) {
    chart.append(svg("line", { x1: xOf(value), x2: xOf(value), y1: pad / 2, y2: height - pad, stroke: "#333", "stroke-dasharray": "4 3" }));
    const text = svg("text", { x: xOf(value) + 3, y: pad, "font-size": 11 });
    text.textContent = name + " " + value;
    chart.append(text);
  }
  const axis = svg("text", { x: pad, y: height - 6, "font-size": 11 });
  axis.textContent = "cosine " + low + " → 1.0; red: labelled duplicate, blue: labelled distinct";
  chart.append(axis);
  return chart;
}

// ---- wiring -----------------------------------------------------------------------------

function show(view) {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.view === view);
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== view;
  closeDecision();
  state.view = view;
  if (view === "decisions") loadLog(false);
  if (view === "queue") loadQueue();
  if (view === "glance") loadGlance();
}

document.addEventListener("DOMContentLoaded", () => {
  $("key").value = state.key;
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.key = $("key").value.trim();
    sessionStorage.setItem("tooldedup-key", state.key);
    show(state.view || "decisions");
  });
  $("filters").addEventListener("submit", (event) => { event.preventDefault(); loadLog(false); });
  $("older").addEventListener("click", () => loadLog(true));
  $("glance-form").addEventListener("change", loadGlance);
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => show(tab.dataset.view));
  $("same").addEventListener("click", () => (state.view === "queue" ? labelInQueue("duplicate") : label("duplicate")));
  $("different").addEventListener("click", () => (state.view === "queue" ? labelInQueue("distinct") : label("distinct")));
  document.addEventListener("keydown", (event) => {
    if (state.view !== "queue" || event.target instanceof HTMLInputElement) return;
    // Browser shortcuts (Ctrl+D bookmarks) and a held key never label; nor does a key
    // pressed while the last label or the next match is still on its way.
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || state.busy) return;
    if ((event.key === "s" || event.key === "d") && !state.open) return;
    if (event.key === "j" && state.at < state.queue.length - 1) { state.at += 1; showQueue(); }
    else if (event.key === "k" && state.at > 0) { state.at -= 1; showQueue(); }
    else if (event.key === "s") labelInQueue("duplicate");
    else if (event.key === "d") labelInQueue("distinct");
  });
  if (state.key) show("decisions");
  else {
    state.view = "decisions";
    // The service says whether a key is needed (on loopback with no keys it is not), so the
    // log shows at once where it can, and no refused request is made where it cannot.
    api("/ui/access").then((access) => {
      if (state.key) return; // a key was given meanwhile, and its view is loading
      if (access.key_needed) say("Enter an API key and press Use key.");
      else show(state.view);
    }, failed);
  }
});
