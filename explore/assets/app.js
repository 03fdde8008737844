// simrun explore: the page over the explorer's JSON API (see the explore package doc).
// No framework, no network beyond this server.
"use strict";

const problems = [];
window.addEventListener("error", (e) => problems.push("script error: " + e.message));
window.addEventListener("unhandledrejection", (e) => problems.push("unhandled: " + (e.reason && e.reason.message || e.reason)));
const consoleError = console.error.bind(console);
console.error = (...a) => { problems.push("console.error: " + a.join(" ")); consoleError(...a); };

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

async function api(url, opts) {
  const r = await fetch(url, opts);
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
  return j;
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function showError(msg) {
  if (msg) problems.push("shown error: " + msg);
  const e = $("error");
  e.hidden = !msg;
  e.textContent = msg || "";
}

let info = null;
let rendering = Promise.resolve();
let lastHash = null;

// ---- formatting ----

function fmtTime(ns) {
  if (!ns) return "0";
  const ms = ns / 1e6;
  if (Math.abs(ms) < 1) return (ns / 1e3).toFixed(1) + "µs";
  if (Math.abs(ms) < 1000) return ms.toFixed(ms < 10 ? 2 : 1) + "ms";
  return (ms / 1000).toFixed(3) + "s";
}

function summary(r) {
  let s;
  switch (r.ev) {
    case "recv": s = `${r.node} ← ${r.from}: ${r.kind}`; break;
    case "inject": s = `${r.node} ← env: ${r.kind}`; break;
    case "timer": s = `${r.node}: timer ${r.timer}`; break;
    case "start": case "restart": s = `${r.node}: ${r.ev}`; break;
    case "lost": s = `${r.kind} ${r.from}→${r.node} lost (${r.why || ""})`; break;
    case "step": s = r.kind || "step"; break;
    default: s = [r.ev, r.node, r.from ? "←" + r.from : "", r.kind, r.why].filter(Boolean).join(" ");
  }
  const sends = (r.out || []).filter((e) => e.op === "send").map((e) => `${e.kind}→${e.to}${e.lost ? "✕" : ""}`);
  const obs = (r.out || []).filter((e) => e.op === "obs").map((e) => e.kind);
  if (sends.length) s += "  ⇒ " + sends.join(", ");
  if (obs.length) s += "  [" + obs.join(", ") + "]";
  return s;
}

function recMatches(r, node, kind) {
  let okNode = !node || r.node === node || r.from === node;
  let okKind = !kind || r.kind === kind;
  for (const e of r.out || []) {
    if (e.op !== "send") continue;
    if (node && e.to === node) okNode = true;
    if (kind && e.kind === kind) okKind = true;
  }
  return okNode && okKind;
}

// ---- state panel (shared by both views) ----

function renderState(box, diffBox, lines, diff, changedNodes, nodes, snap) {
  changedNodes = changedNodes || [];
  diffBox.replaceChildren();
  if (diff && diff.length) {
    const d = el("div", { class: "diff", id: diffBox.id + "box" }, el("b", {}, `changed by this step (${diff.length})`));
    for (const c of diff.slice(0, 200)) {
      const row = el("div", { class: "kv" }, el("span", { class: "k" }, c.path + " "));
      if (c.was !== undefined) row.append(el("span", { class: "was" }, c.was), " ");
      if (c.now !== undefined) row.append(el("span", { class: "now" }, c.now));
      else row.append(el("span", { class: "was" }, "(removed)"));
      d.append(row);
    }
    if (diff.length > 200) d.append(el("div", {}, `… and ${diff.length - 200} more`));
    diffBox.append(d);
  } else if (diff) {
    diffBox.append(el("div", { class: "hint" }, "nothing changed at this step"));
  }
  const changed = new Set((diff || []).map((c) => c.path));
  const groups = new Map();
  for (const n of nodes) groups.set(n, []);
  for (const l of lines) {
    const node = nodes.find((n) => l.path.startsWith(n + "."));
    const g = node !== undefined ? node : l.path.split(".")[0];
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(l);
  }
  box.replaceChildren();
  for (const [g, ls] of groups) {
    if (!ls.length) continue;
    const up = ls.find((l) => l.path === g + ".up");
    const isNode = nodes.includes(g);
    const ns = snap && snap.nodes.find((n) => n.name === g);
    const clock = ns && (snap.t || ns.local) ? ` · clock ${fmtTime(ns.local)}` : "";
    const hot = changedNodes.includes(g) || !isNode || ls.length <= 12;
    const card = el("details", { class: (isNode ? "node" : "node group") + (changedNodes.includes(g) ? " changed" : "") + (up && up.value === "false" ? " down" : ""), "data-node": g },
      el("summary", {}, el("b", {}, g), (up && up.value === "false" ? " (down)" : "") + clock + ` · ${ls.length - (up ? 1 : 0)} values` + (changedNodes.includes(g) ? " · changed" : "")));
    if (hot) card.open = true;
    for (const l of ls) {
      if (l.path === g + ".up") continue;
      card.append(el("div", { class: "kv" + (changed.has(l.path) ? " chg" : "") }, el("span", { class: "k" }, l.path.slice(g.length + 1) + " = "), l.value));
    }
    box.append(card);
  }
}

// scrollTo scrolls target into the middle of its scrolling column (not the page).
function scrollTo(inner, target) {
  const col = inner && inner.closest(".col");
  if (!col || !target) return;
  const a = col.getBoundingClientRect(), b = target.getBoundingClientRect();
  col.scrollTop += (b.top - a.top) - col.clientHeight / 2;
}

// ---- space-time diagram ----

// drawDiagram draws records recs (global indices base..) as rows, one lane per node:
// a dot where a handler ran, an arrow from each send to its receipt, a ✕ for a loss,
// the rows of the current step on a yellow band. onRow(index) is called on a click.
function drawDiagram(box, recs, base, lanes, isCurrent, isViolation, onRow) {
  const laneW = Math.max(70, Math.min(120, 900 / Math.max(1, lanes.length))), rowH = 18, left = 8, top = 30;
  const width = left * 2 + laneW * lanes.length, height = top + rowH * recs.length + 12;
  const s = svg("svg", { width, height, id: box.id + "-svg", class: "spacetime" });
  const defs = svg("defs");
  const m = svg("marker", { id: box.id + "-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
  m.append(svg("path", { d: "M0,0L10,5L0,10z", fill: "#444" }));
  defs.append(m);
  s.append(defs);
  const lx = (n) => left + laneW * lanes.indexOf(n) + laneW / 2;
  const ry = (i) => top + rowH * (i - base) + rowH / 2;
  recs.forEach((r, j) => {
    const i = base + j;
    const band = svg("rect", { x: 0, y: top + rowH * j, width, height: rowH, fill: isCurrent(r) ? "#ffe9a8" : (j % 2 ? "#fafbfd" : "#fff"), "data-index": i, class: isCurrent(r) ? "curband" : "row" });
    band.append(svg("title", {}, `#${i} ${summary(r)}`));
    band.addEventListener("click", () => onRow(i, r));
    s.append(band);
    if (isViolation(r)) s.append(svg("rect", { x: 0, y: top + rowH * j, width: 4, height: rowH, fill: "#c62828", class: "violband" }));
  });
  lanes.forEach((n) => {
    s.append(svg("text", { x: lx(n), y: 16, "text-anchor": "middle", "font-size": 12, "font-weight": "bold" }, n));
    s.append(svg("line", { x1: lx(n), y1: 22, x2: lx(n), y2: height - 6, stroke: "#bbb" }));
  });
  recs.forEach((r, j) => {
    const i = base + j, y = ry(i);
    if (r.sent_by >= 0 && lanes.includes(r.from) && lanes.includes(r.node)) {
      const y0 = r.sent_by >= base ? ry(r.sent_by) : top - 4;
      const lost = r.ev === "lost";
      s.append(svg("line", { x1: lx(r.from), y1: y0, x2: lx(r.node), y2: y, stroke: lost ? "#c62828" : "#444", "stroke-opacity": r.sent_by >= base ? 0.8 : 0.3, "stroke-dasharray": lost ? "3,2" : "", "marker-end": `url(#${box.id}-arrow)`, class: "msg" }));
      s.append(svg("text", { x: (lx(r.from) + lx(r.node)) / 2 + 3, y: (y0 + y) / 2 - 2, "font-size": 10, fill: "#1f5fa8" }, r.kind || ""));
    }
    for (const e of r.out || []) {
      if (e.op === "send" && e.lost && lanes.includes(r.node) && lanes.includes(e.to)) {
        const x2 = (lx(r.node) + lx(e.to)) / 2;
        s.append(svg("line", { x1: lx(r.node), y1: y, x2, y2: y + 4, stroke: "#c62828", "stroke-dasharray": "3,2" }));
        s.append(svg("text", { x: x2, y: y + 8, fill: "#c62828", "text-anchor": "middle", "font-size": 11 }, "✕"));
      }
    }
    if (lanes.includes(r.node)) {
      const color = { recv: "#1f77b4", inject: "#17becf", timer: "#9467bd", start: "#2ca02c", restart: "#2ca02c", crash: "#c62828", panic: "#c62828", lost: "#c62828" }[r.ev] || "#555";
      s.append(svg("circle", { cx: lx(r.node), cy: y, r: r.ev === "crash" ? 6 : 4, fill: color, class: "ev" }));
    } else {
      s.append(svg("text", { x: left, y: y + 4, "font-size": 10, fill: "#a33" }, summary(r)));
    }
  });
  box.replaceChildren(s);
}

// ---- trace view ----

const tv = { step: 0, node: "", kind: "", cache: { from: -1, recs: [] }, overview: null };

// drawOverview draws the whole run as one strip per node (darker where the node is
// busier, red where it crashed), the first violation and the current step as lines;
// a click jumps to the step under it.
function drawOverview(step) {
  const o = tv.overview, t = info.trace;
  if (!o) return;
  const laneH = 10, top = 4, left = 60, W = o.width;
  const h = top * 2 + laneH * o.nodes.length;
  const s = svg("svg", { viewBox: `0 0 ${left + W} ${h}`, preserveAspectRatio: "none", height: Math.max(30, h), id: "overview-svg" });
  const busiest = Math.max(1, ...o.counts.flat());
  o.nodes.forEach((n, i) => {
    const y = top + i * laneH;
    s.append(svg("text", { x: 2, y: y + laneH - 2, "font-size": 9, fill: "#555" }, n));
    o.counts[i].forEach((c, b) => {
      if (c) s.append(svg("rect", { x: left + b, y: y + 1, width: 1, height: laneH - 2, fill: "#1f77b4", "fill-opacity": 0.25 + 0.75 * Math.log1p(c) / Math.log1p(busiest) }));
    });
    for (const b of o.crashes[i]) s.append(svg("rect", { x: left + b - 0.5, y: y, width: 2, height: laneH, fill: "#c62828" }));
  });
  const xOf = (k) => left + Math.min(W - 1, Math.max(0, k - 1) * W / Math.max(1, t.steps));
  if (t.first_violation >= 0) s.append(svg("line", { x1: xOf(t.first_violation), x2: xOf(t.first_violation), y1: 0, y2: h, stroke: "#c62828", "stroke-width": 1.5, "stroke-dasharray": "3,2" }));
  s.append(svg("line", { x1: xOf(step), x2: xOf(step), y1: 0, y2: h, stroke: "#e0a800", "stroke-width": 2.5, class: "overview-cur" }));
  s.addEventListener("click", (e) => {
    const r = s.getBoundingClientRect();
    const x = (e.clientX - r.left) / r.width * (left + W) - left;
    if (x >= 0) goTrace(Math.round(x / W * t.steps) + 1);
  });
  $("overview").replaceChildren(s);
}

async function loadRecords(from, count) {
  const c = tv.cache;
  if (from >= c.from && from + count <= c.from + c.recs.length) return c.recs.slice(from - c.from, from - c.from + count);
  const a = Math.max(0, from - 200);
  const j = await api(`/api/records?from=${a}&count=${Math.min(2000, count + 400)}`);
  tv.cache = { from: a, recs: j.records };
  return j.records.slice(from - a, from - a + count);
}

async function showTrace(step) {
  const t = info.trace;
  step = Math.max(0, Math.min(t.steps, step | 0));
  tv.step = step;
  $("slider").value = step;
  $("steplabel").textContent = `step ${step} of ${t.steps}`;
  const st = await api(`/api/step?k=${step}`);
  tv.last = st;
  $("steplabel").textContent = `step ${step} of ${t.steps}` + (t.engine === "sim" || st.state.t ? ` · t=${fmtTime(st.state.t)}` : "");
  $("statehead").textContent = step === 0 ? (t.engine === "sim" ? "State before the first event" : "Initial state") : `State after step ${step}`;
  const idx = st.index >= 0 ? st.index : 0;
  const base = Math.max(0, idx - 25);
  const recs = await loadRecords(base, Math.min(60, t.steps + 64));
  const isCur = (r) => r.step === step;
  const isViol = (r) => t.first_violation >= 0 && r.step === t.first_violation;
  const list = $("events");
  list.replaceChildren();
  recs.forEach((r, j) => {
    const cls = [isCur(r) ? "cur" : "", isViol(r) ? "viol" : "", recMatches(r, tv.node, tv.kind) ? "" : "dim"].join(" ").trim();
    const when = r.t ? fmtTime(r.t) + " " : "";
    list.append(el("li", { class: cls, "data-step": r.step, title: JSON.stringify(r), onclick: () => goTrace(r.step) }, `${r.step}. ${when}${summary(r)}`));
  });
  drawDiagram($("diagram"), recs, base, t.nodes, isCur, isViol, (i, r) => goTrace(r.step));
  drawOverview(step);
  renderState($("state"), $("diff"), st.lines, step > 0 ? st.diff : null, st.changed_nodes, t.nodes, st.state);
  scrollTo($("events"), list.querySelector("li.cur"));
  scrollTo($("diagram"), $("diagram").querySelector(".curband"));
}

function traceHash(step) {
  const p = new URLSearchParams();
  p.set("step", step);
  if (tv.node) p.set("node", tv.node);
  if (tv.kind) p.set("kind", tv.kind);
  return "#" + p.toString();
}

function goTrace(step) {
  history.pushState(null, "", traceHash(step));
  lastHash = location.hash;
  rendering = showTrace(step).catch((e) => showError(e.message));
  return rendering;
}

async function stepFiltered(dir) {
  if (!tv.node && !tv.kind) return goTrace(tv.step + (dir === "next" ? 1 : -1));
  const p = new URLSearchParams({ from: tv.step, dir });
  if (tv.node) p.set("node", tv.node);
  if (tv.kind) p.set("kind", tv.kind);
  const j = await api("/api/find?" + p.toString());
  $("filterhint").textContent = j.step < 0 ? `no ${dir === "next" ? "later" : "earlier"} matching step` : "";
  if (j.step >= 0) return goTrace(j.step);
}

async function setupTrace() {
  const t = info.trace;
  tv.overview = await api("/api/overview?width=800");
  $("trace-view").hidden = false;
  $("slider").max = t.steps;
  $("slider").addEventListener("change", () => goTrace(+$("slider").value));
  $("first").addEventListener("click", () => goTrace(0));
  $("last").addEventListener("click", () => goTrace(t.steps));
  $("prev").addEventListener("click", () => { rendering = stepFiltered("prev"); });
  $("next").addEventListener("click", () => { rendering = stepFiltered("next"); });
  $("violation").disabled = t.first_violation < 0;
  $("violation").title = t.first_violation < 0 ? "no property failed" : (t.first_violation_why || "");
  $("violation").addEventListener("click", () => goTrace(t.first_violation));
  for (const n of t.nodes) $("fnode").append(el("option", { value: n }, n));
  for (const k of t.kinds) $("fkind").append(el("option", { value: k }, k));
  $("fnode").addEventListener("change", () => { tv.node = $("fnode").value; goTrace(tv.step); });
  $("fkind").addEventListener("change", () => { tv.kind = $("fkind").value; goTrace(tv.step); });
  const v = $("verdicts");
  for (const x of t.verdicts || []) {
    v.append(el("div", {}, el("span", { class: "badge " + x.class }, x.class), `${x.property}`, x.detail ? ": " + x.detail : ""));
  }
  if (t.first_violation >= 0) v.append(el("div", { class: "hint" }, `first violation at step ${t.first_violation}: ${t.first_violation_why}`));
}

// ---- model view ----

const mv = { path: "0", view: null, polling: false };

function prefix(path, steps) { return path.split(".").slice(0, steps + 1).join("."); }

async function showModel(path) {
  $("trace-view").hidden = true;
  $("model-view").hidden = false;
  markTab("model");
  const v = await api("/api/state?path=" + encodeURIComponent(path));
  mv.path = v.path;
  mv.view = v;
  $("pathlabel").textContent = `depth ${v.depth} · state ${v.fingerprint}` + (v.expandable ? "" : " · outside the boundary (not expanded by the checker)");
  $("back").disabled = v.depth === 0;
  $("mstatehead").textContent = v.depth === 0 ? "Initial state" : `State after ${v.depth} step${v.depth > 1 ? "s" : ""}`;
  const acts = $("actions");
  acts.replaceChildren();
  if (!v.actions.length) acts.append(el("li", { class: "dim" }, "no enabled action (a dead end)"));
  for (const a of v.actions) {
    const link = el("a", { href: "#path=" + a.path, "data-path": a.path, onclick: (e) => { e.preventDefault(); goModel(a.path); } }, `${a.index}. ${a.name}`);
    acts.append(el("li", { class: a.self ? "self" : "", title: a.self ? "leads back to this state" : "state " + a.fingerprint }, link, a.self ? " ↺" : ""));
  }
  const props = $("props");
  props.replaceChildren();
  for (const p of v.properties) {
    const word = p.kind === "always" ? (p.holds ? "holds" : "violated") : (p.holds ? "true here" : "not yet");
    props.append(el("tr", {}, el("td", {}, el("span", { class: "badge " + (p.holds ? "true" : (p.kind === "always" ? "false" : "unknown")) }, word)), el("td", {}, `${p.kind} ${p.name}`)));
  }
  drawDiagram($("mdiagram"), v.records.map((r, i) => Object.assign({}, r, { step: v.record_step[i], sent_by: v.sent_by[i] })), 0, v.state.nodes.map((n) => n.name),
    (r) => r.step === v.depth, () => false, (i, r) => goModel(prefix(v.path, r.step)));
  if (!v.state.nodes.length) {
    // A plain spec: no lanes; list the path's steps instead.
    const ol = el("ol", { class: "eventlist" });
    v.records.forEach((r, i) => ol.append(el("li", { class: v.record_step[i] === v.depth ? "cur" : "", onclick: () => goModel(prefix(v.path, v.record_step[i])) }, `${v.record_step[i]}. ${r.ev === "init" ? "initial state" : summary(r)}`)));
    $("mdiagram").replaceChildren(ol);
  }
  const names = v.state.nodes.map((n) => n.name);
  renderState($("mstate"), $("mdiff"), v.lines, v.depth > 0 ? v.diff : null, v.changed_nodes, names, v.state);
  scrollTo($("mdiagram"), $("mdiagram").querySelector(".curband"));
}

function goModel(path) {
  history.pushState(null, "", "#path=" + path);
  lastHash = location.hash;
  rendering = showModel(path).catch((e) => showError(e.message));
  return rendering;
}

async function pollCheck(start) {
  const c = await api("/api/check", start ? { method: "POST" } : undefined);
  const s = c.stats || {};
  $("checkstatus").textContent = c.status === "idle" ? "" : `${c.status}: ${s.distinct || 0} states, depth ${s.depth || 0}` + (c.outcome ? ` · ${c.outcome}${c.bound ? " (" + c.bound + ")" : ""}` : "") + (c.error ? " · " + c.error : "");
  const box = $("checkresult");
  box.replaceChildren();
  for (const p of c.properties || []) {
    const row = el("div", {}, el("span", { class: "badge " + p.status }, p.status), `${p.kind} ${p.name}`);
    if (p.path) row.append(" — ", el("a", { href: "#path=" + p.path, class: "cex", onclick: (e) => { e.preventDefault(); goModel(p.path); } }, p.kind === "sometimes" ? "show the witness" : "show the counterexample"), ` (${p.depth} states${p.cycle ? ", cycles back to step " + (p.cycle - 1) : ""})`);
    if (p.why) row.append(" — " + p.why);
    box.append(row);
  }
  if (c.status === "running") {
    await new Promise((r) => setTimeout(r, 500));
    return pollCheck(false);
  }
  return c;
}

function setupModel() {
  $("back").addEventListener("click", () => { if (mv.view && mv.view.depth > 0) goModel(prefix(mv.path, mv.view.depth - 1)); });
  $("home").addEventListener("click", (e) => { e.preventDefault(); goModel("0"); });
  $("check").addEventListener("click", () => { $("check").disabled = true; rendering = pollCheck(true).catch((e) => showError(e.message)); });
}

// ---- routing ----

function markTab(which) {
  for (const a of $("tabs").querySelectorAll("a")) a.classList.toggle("on", a.dataset.tab === which);
}

async function route() {
  if (location.hash === lastHash) return;
  lastHash = location.hash;
  const h = new URLSearchParams(location.hash.slice(1));
  try {
    showError("");
    if (info.model && (h.has("path") || !info.trace)) {
      await showModel(h.get("path") || "0");
    } else {
      $("model-view").hidden = true;
      $("trace-view").hidden = false;
      markTab("trace");
      tv.node = h.get("node") || "";
      tv.kind = h.get("kind") || "";
      $("fnode").value = tv.node;
      $("fkind").value = tv.kind;
      await showTrace(+(h.get("step") || 0));
    }
  } catch (e) {
    showError(e.message);
  }
}

function keys(e) {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  const tr = !$("trace-view").hidden;
  if (tr) {
    if (e.key === "ArrowRight" || e.key === "j") $("next").click();
    else if (e.key === "ArrowLeft" || e.key === "k") $("prev").click();
    else if (e.key === "Home") $("first").click();
    else if (e.key === "End") $("last").click();
    else if (e.key === "v") $("violation").click();
  } else if (e.key === "ArrowLeft" || e.key === "k") $("back").click();
}

async function main() {
  try {
    info = await api("/api/info");
  } catch (e) {
    showError("cannot reach the explorer: " + e.message);
    return;
  }
  const t = info.trace, m = info.model;
  $("title").textContent = "simrun explore: " + (t ? t.name : m.name);
  const params = Object.entries((t || m).params || {}).map(([k, v]) => `${k}=${v}`).join(" ");
  $("subtitle").textContent = t ? `${t.file} · ${t.engine === "sim" ? "seed " + t.seed + " · " : ""}${t.steps} steps${params ? " · " + params : ""}` : (params || "default parameters");
  if (t && t.warning) { $("warning").hidden = false; $("warning").textContent = t.warning; }
  if (t) await setupTrace();
  if (m) setupModel();
  if (t && m) {
    $("tabs").append(el("a", { href: "#step=0", "data-tab": "trace" }, "trace"));
    $("tabs").append(el("a", { href: "#path=" + t.model_path, "data-tab": "model" }, "state space at its last state"));
  }
  window.addEventListener("popstate", route);
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", keys);
  rendering = route();
  await rendering;
  if (new URLSearchParams(location.search).has("selftest")) await selftest();
}

// ---- self-test (the browser test opens the page with ?selftest=1) ----

async function selftest() {
  const fails = [];
  const want = (ok, what) => { if (!ok) fails.push(what); };
  const click = async (id) => { $(id).click(); await rendering; };
  try {
    if (info.trace) {
      const t = info.trace;
      await goTrace(0);
      want($("steplabel").textContent.startsWith("step 0 of"), "step label at 0: " + $("steplabel").textContent);
      for (let i = 0; i < 3; i++) await click("next");
      want(tv.step === Math.min(3, t.steps), "three steps forward reach step 3, not " + tv.step);
      want(location.hash.includes("step=" + tv.step), "the URL names the step: " + location.hash);
      want(document.querySelector("#events li.cur") !== null, "the event list marks the current step");
      want(document.querySelector("#diagram svg .curband") !== null, "the diagram marks the current step");
      want(document.querySelectorAll("#diagram svg circle.ev").length > 0, "the diagram draws events");
      want((document.querySelector("#diffbox") !== null) === (tv.last.diff.length > 0), "the diff box shows exactly when the step changed something");
      want(document.querySelector("#overview-svg .overview-cur") !== null, "the overview of the whole run marks the current step");
      want(document.querySelectorAll("#state .node:not(.group)").length === t.nodes.length, "one state card per node: " + document.querySelectorAll("#state .node:not(.group)").length);
      await click("prev");
      want(tv.step === Math.min(3, t.steps) - 1, "one step back");
      if (t.first_violation >= 0) {
        await click("violation");
        want(tv.step === t.first_violation, `first violation jumps to step ${t.first_violation}, not ${tv.step}`);
        want(document.querySelector("#events li.cur.viol") !== null, "the violating step is marked in the list");
        want(document.querySelector("#diagram svg .violband") !== null, "the violating step is marked in the diagram");
      }
      if (t.nodes.length > 1) {
        $("fnode").value = t.nodes[1];
        $("fnode").dispatchEvent(new Event("change"));
        await rendering;
        await goTrace(0);
        await click("next");
        const cur = document.querySelector("#events li.cur");
        want(cur && !cur.classList.contains("dim"), "stepping with a node filter lands on a step of that node");
        $("fnode").value = "";
        $("fnode").dispatchEvent(new Event("change"));
        await rendering;
      }
    }
    if (info.model) {
      await goModel("0");
      const start = mv.view.depth;
      for (let i = 0; i < 3; i++) {
        const links = [...document.querySelectorAll("#actions li:not(.self) a")];
        if (!links.length) { fails.push("no action to follow at depth " + mv.view.depth); break; }
        links[0].click();
        await rendering;
        want((document.querySelector("#mdiffbox") !== null) === (mv.view.diff.length > 0), "the diff box shows exactly when the action changed something");
      }
      want(mv.view.depth === start + 3, `three actions lead to depth ${start + 3}, not ${mv.view.depth}`);
      want(location.hash === "#path=" + mv.path, "the URL is the path: " + location.hash);
      want(mv.path.split(".").length === start + 4, "the path has its steps: " + mv.path);
      if (mv.view.state.nodes.length) want(document.querySelectorAll("#mdiagram svg .curband").length > 0, "the path's diagram marks the current step");
      want(document.querySelectorAll("#props tr").length === info.model.properties.length, "every property has a row");
      await click("back");
      want(mv.view.depth === start + 2, "back goes one step up the path");
    }
  } catch (e) {
    fails.push("exception: " + e.message);
  }
  fails.push(...problems);
  document.body.dataset.selfcheck = fails.length ? fails.join(" | ") : "ok";
}

main();
