/* Reelgate console: confirmations, live updates over Server-Sent Events, order outcomes.
   Our own code, no framework; the pages work without it (forms post, pages reload). */
"use strict";

/* A form with data-confirm asks first, in a native dialog (keyboard: Tab, Enter, Esc). */
function setUpConfirmations() {
  const dialog = document.getElementById("confirm");
  if (!dialog || typeof dialog.showModal !== "function") return;
  document.addEventListener("submit", (ev) => {
    const form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm || form.dataset.confirmed) return;
    ev.preventDefault();
    const submitter = ev.submitter || null;
    document.getElementById("confirm-text").textContent = form.dataset.confirm;
    dialog.returnValue = "";
    dialog.showModal();
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "ok") return;
      form.dataset.confirmed = "1";
      form.requestSubmit(submitter);
    }, { once: true });
  });
}

/* Live parts: an element with data-live="/console/live?prefix=..." keeps a stream open. */
const updaters = [];
let lastSeen = 0;

function onFrame(frame) {
  for (const u of updaters) u(frame.topic, frame.payload);
}

function setUpLive() {
  const holder = document.querySelector("[data-live]");
  if (!holder || typeof EventSource === "undefined") return;
  const mark = document.getElementById("live-mark");
  const source = new EventSource(holder.dataset.live);
  source.onopen = () => { if (mark) { mark.textContent = "live"; mark.classList.remove("down"); } };
  source.onerror = () => { if (mark) { mark.textContent = "reconnecting…"; mark.classList.add("down"); } };
  source.onmessage = (ev) => {
    let frame;
    try { frame = JSON.parse(ev.data); } catch (e) { return; }
    if (frame.seq && frame.seq <= lastSeen) return;
    lastSeen = frame.seq || lastSeen;
    onFrame(frame);
  };
}

/* Swap a server-rendered fragment (the floor map, standings): the server decides states. */
const refreshing = new Map();
const waits = new Map();
function refresh(id) {
  const el = document.getElementById(id);
  if (!el || !el.dataset.fragment || refreshing.get(id)) return;
  refreshing.set(id, true);
  setTimeout(async () => {
    try {
      const r = await fetch(el.dataset.fragment, { credentials: "same-origin", cache: "no-store" });
      if (r.ok) el.innerHTML = await r.text();
    } finally { refreshing.set(id, false); }
    /* A result being stored: look again shortly (bounded) until it is official. */
    const tries = waits.get(id) || 0;
    if (el.querySelector("[data-waiting-official]") && tries < 60) {
      waits.set(id, tries + 1);
      setTimeout(() => refresh(id), 500);
    }
  }, 250);
}

function fmtClock(seconds) {
  if (seconds === null || seconds === undefined) return "--:--";
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/* The live heat: seats' credits in place, the timer, events, standings when official. */
function heatUpdater() {
  const page = document.querySelector("[data-heat-key]");
  if (!page) return;
  let key = page.dataset.heatKey;
  const timer = document.getElementById("timer");
  const state = document.getElementById("heat-state");
  const events = document.getElementById("events");
  let endsAt = null;
  setInterval(() => {
    if (endsAt !== null && timer) timer.textContent = fmtClock((endsAt - Date.now()) / 1000);
  }, 250);
  updaters.push((topic, p) => {
    /* Another heat started on the floor: show it (the server renders its seats). */
    const other = /^heat\/([^/]+)\/state$/.exec(topic);
    if (other && p && other[1] !== key && ["armed", "running"].includes(p.state) && page.dataset.bank
        && (p.machines || []).some((m) => document.querySelector(`[data-bank-machine="${CSS.escape(m)}"]`))) {
      location.reload();
      return;
    }
    if (!key || !topic.startsWith(`heat/${key}/`) || !p) return;
    const rest = topic.slice(`heat/${key}/`.length);
    if (rest === "state") {
      if (state) state.textContent = p.state;
      /* Only the orders this state can take (the server rendered them for its state). */
      for (const el of document.querySelectorAll("[data-shown-in]")) el.hidden = !el.dataset.shownIn.split(" ").includes(p.state);
      for (const el of document.querySelectorAll("[data-hidden-in]")) el.hidden = el.dataset.hiddenIn.split(" ").includes(p.state);
      endsAt = (p.state === "running" && p.seconds_left !== null) ? Date.now() + p.seconds_left * 1000 : null;
      const over = ["ending", "collecting", "closed", "aborted", "restarted"].includes(p.state);
      if (timer && endsAt === null) timer.textContent = p.state === "paused" ? "paused" : over ? "over" : fmtClock(p.seconds_left);
      refresh("acks");
      if (["collecting", "closed", "aborted", "restarted"].includes(p.state)) refresh("standings");
    } else if (rest.startsWith("seat/")) {
      const row = document.querySelector(`[data-seat="${CSS.escape(p.machine)}"]`);
      if (!row) return;
      const c = row.querySelector("[data-f=credits]");
      if (c && p.credits !== null && p.credits !== undefined) c.textContent = p.credits;
      const s = row.querySelector("[data-f=status]");
      if (s) s.textContent = p.malfunction ? `malfunction: ${p.malfunction}` : (p.final ? "scored" : "playing");
      row.classList.toggle("s-malfunction", !!p.malfunction);
    } else if (rest === "standings") {
      refresh("standings");
    }
  });
  updaters.push((topic, p) => {
    if (!events || !p || !(topic.startsWith("machine/") || topic.endsWith("/state"))) return;
    const li = document.createElement("li");
    const zone = document.body.dataset.zone || undefined;  /* the venue's clock, not the tablet's */
    const when = new Date(p.at || Date.now()).toLocaleTimeString("en-GB", { timeZone: zone });
    li.textContent = topic.startsWith("machine/")
      ? `${when} ${topic.split("/")[1]}: ${p.event}`
      : `${when} heat ${p.state}`;
    events.prepend(li);
    while (events.children.length > 100) events.lastChild.remove();
  });
}

/* The floor map and other fragments: re-rendered by the server on a relevant message. */
function fragmentUpdater() {
  for (const el of document.querySelectorAll("[data-fragment][data-topics]")) {
    const prefixes = el.dataset.topics.split(" ");
    /* data-skip-topics: parts of topics that change nothing shown (a seat's live credits). */
    const skips = (el.dataset.skipTopics || "").split(" ").filter((x) => x);
    updaters.push((topic) => {
      if (prefixes.some((x) => topic.startsWith(x)) && !skips.some((x) => topic.includes(x))) refresh(el.id);
    });
  }
}

/* Countdowns (the next heat on the Tonight board and the Schedule): the server renders the target and its
   own now; the tablet counts the time since it saw them, so its clock need not be right.
   Read afresh each tick: a refreshed fragment brings new ones. */
function countdowns() {
  const seen = new WeakMap();
  const tick = () => {
    for (const el of document.querySelectorAll("[data-countdown-to]")) {
      if (!seen.has(el)) seen.set(el, Date.now());
      const left = (Date.parse(el.dataset.countdownTo) - Date.parse(el.dataset.serverNow)
        - (Date.now() - seen.get(el))) / 1000;
      if (Number.isNaN(left)) continue;
      const s = Math.floor(left);
      el.textContent = s <= 0 ? "due now"
        : `in ${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
    }
  };
  tick();
  setInterval(tick, 1000);
}

/* A page shown whole (the standings): reloaded when the database says its subject changed
   (a manual score, a draw, a correction: issue 24).  Only for messages newer than the page
   (the stream first replays what it holds); not while a form on it is being filled in. */
function reloadUpdater() {
  const el = document.querySelector("[data-reload-topics]");
  if (!el) return;
  const prefixes = el.dataset.reloadTopics.split(" ");
  const rendered = Date.parse(el.dataset.rendered);
  updaters.push((topic, p) => {
    if (!prefixes.some((x) => topic.startsWith(x)) || !p || !(Date.parse(p.at) > rendered)) return;
    if (document.querySelector("details[open], input:focus, select:focus, textarea:focus")) {
      el.hidden = false;  /* "changed: reload" */
      return;
    }
    setTimeout(() => window.location.reload(), 250);
  });
}

/* A director's order: its outcome, once the gateway has carried it out (bounded polling). */
function orderOutcome() {
  const el = document.querySelector("[data-order-url]");
  if (!el) return;
  let tries = 0;
  const poll = async () => {
    tries += 1;
    const r = await fetch(el.dataset.orderUrl, { credentials: "same-origin", cache: "no-store" });
    if (r.ok) {
      el.innerHTML = await r.text();
      if (el.querySelector("[data-done]")) { refresh("acks"); return; }
    }
    if (tries < 240) setTimeout(poll, 250);
  };
  poll();
}

document.addEventListener("DOMContentLoaded", () => {
  setUpConfirmations();
  countdowns();
  heatUpdater();
  fragmentUpdater();
  reloadUpdater();
  setUpLive();
  orderOutcome();
  for (const b of document.querySelectorAll("[data-print]")) b.addEventListener("click", () => window.print());
});
