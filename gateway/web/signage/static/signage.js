/* Reelgate signage: the live parts of a board rendered by the server.  Follows
 * /signage/events (Server-Sent Events) and fills in the heat with its hot-seat draws,
 * the tournament leaderboard, its team standings and the Super 9 draw.  Vanilla JS, no build step.  Payload text only ever reaches the
 * page through textContent / attributes set by DOM calls, never as markup.
 *
 * The board, the bank, the venue's time zone and the paging interval come from <body>
 * data attributes (rendered by the server).  URL options: ?heat=KEY pins a heat,
 * ?session=ID pins a Super 9 session.
 */
"use strict";

(function () {
  const body = document.body;
  const params = new URLSearchParams(window.location.search);
  const BOARD = body.dataset.board || "floor";
  const BANK = body.dataset.bank || "";
  const TOURNAMENT = body.dataset.tournament || "";
  const TZ = body.dataset.tz || "UTC";
  const PAGE_MS = Math.max(2000, (Number(body.dataset.pageSeconds) || 8) * 1000);
  const PIN_HEAT = textParam("heat");
  const PIN_SESSION = textParam("session");
  const STALE_MS = 45000; // the server pings every 15 s; three missed pings: reconnect
  const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);
  const MOTION = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const DONE = new Set(["closed", "aborted", "restarted"]);

  // "Final" is a stage of the tournament (rules 16-17), never a result: results are
  // "provisional" until the heat is closed and "official" after.
  const STATE_LABELS = {
    scheduled: "Starting soon",
    armed: "Get ready",
    running: "Playing",
    paused: "Paused",
    ending: "Time's up",
    collecting: "Counting scores",
    closed: "Official result",
    aborted: "Cancelled",
    restarted: "Void — heat will be restarted (rule 20)",
  };
  const S9_STATUS = { scheduled: "Tickets on sale", drawing: "Draw in progress", closed: "Draw closed" };

  const store = new Map(); // topic -> {seq, payload, recv}
  let skewMs = 0; // server clock minus ours, from hello/ping
  let source = null;
  let lastSeen = Date.now();
  let retryMs = 1000;
  let renderQueued = false;
  let upstream = null;
  let connection = "connecting";

  const $ = (id) => document.getElementById(id);
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const isInt = (v) => Number.isInteger(v);
  const str = (v) => (typeof v === "string" || typeof v === "number" ? String(v) : "");
  const collator = new Intl.Collator("en", { numeric: true });
  const venueTime = new Intl.DateTimeFormat("en-ZA", {
    timeZone: TZ, hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  });
  const venueDay = new Intl.DateTimeFormat("en-ZA", { timeZone: TZ, weekday: "short", day: "numeric", month: "short" });

  function textParam(name) {
    const raw = params.get(name);
    return raw && raw.length <= 64 ? raw : null;
  }

  function parse(text) {
    try {
      return JSON.parse(text);
    } catch (err) {
      return null;
    }
  }

  // -- connection ------------------------------------------------------------------
  function connect() {
    if (source !== null) source.close();
    source = new EventSource("/signage/events");
    source.addEventListener("hello", (ev) => {
      const hello = parse(ev.data);
      if (!isObj(hello)) return;
      seen(hello.now);
      store.clear(); // the replay that follows is the whole truth
      retryMs = 1000;
      setConnection("live");
      setUpstream(hello.upstream === undefined ? null : hello.upstream);
      queueRender();
    });
    source.addEventListener("status", (ev) => {
      const status = parse(ev.data);
      if (isObj(status)) setUpstream(status.upstream);
      seen();
    });
    source.addEventListener("ping", (ev) => {
      const ping = parse(ev.data);
      seen(isObj(ping) ? ping.now : undefined);
    });
    source.onmessage = (ev) => {
      seen();
      const msg = parse(ev.data);
      if (!isObj(msg) || typeof msg.topic !== "string") return;
      if (msg.payload === null) {
        store.delete(msg.topic);
      } else if (isObj(msg.payload) && msg.retain === true) {
        store.set(msg.topic, { seq: Number(msg.seq) || 0, payload: msg.payload, recv: Date.now() });
      } else {
        return; // transient messages (machine events) are not shown
      }
      queueRender();
    };
    source.onopen = () => seen();
    source.onerror = () => {
      // The page keeps its last values and says so until the stream is back.
      setConnection("reconnecting");
      if (source !== null && source.readyState === EventSource.CLOSED) {
        source = null; // the browser gave up (HTTP error, server full): retry, backing off
        window.setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 15000);
      }
    };
  }

  function seen(serverNow) {
    lastSeen = Date.now();
    if (typeof serverNow === "number" && Number.isFinite(serverNow)) skewMs = serverNow * 1000 - Date.now();
  }

  function watchdog() {
    if (Date.now() - lastSeen > STALE_MS) {
      setConnection("reconnecting");
      lastSeen = Date.now();
      connect();
    }
  }

  function setConnection(state) {
    connection = state;
    updateBanner();
  }

  function setUpstream(state) {
    upstream = state === "connected" || state === "disconnected" ? state : null;
    updateBanner();
  }

  function updateBanner() {
    body.classList.toggle("connecting", connection === "connecting");
    body.classList.toggle("reconnecting", connection === "reconnecting");
    body.classList.toggle("upstream-down", connection === "live" && upstream === "disconnected");
    // The gateway runs on a training database (retained "about"): every screen says so.
    const about = get("about");
    const training = isObj(about) && about.training === true;
    body.classList.toggle("training", training);
    let text = "";
    if (connection === "reconnecting") text = "Reconnecting to the gateway… (showing the last known values)";
    else if (connection === "connecting") text = "Connecting to the gateway…";
    else if (upstream === "disconnected") text = "Reconnecting to the gateway feed… (showing the last known values)";
    else if (training) text = "TRAINING — a rehearsal, not a real tournament";
    $("banner").textContent = text;
    body.dataset.connection = connection;
    body.dataset.upstream = upstream || "";
  }

  // -- helpers ---------------------------------------------------------------------
  function get(topic) {
    const rec = store.get(topic);
    return rec ? rec.payload : null;
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function setText(id, text) {
    const node = $(id);
    if (node === null) return;
    const value = text === null || text === undefined ? "" : String(text);
    if (node.textContent !== value) node.textContent = value;
  }

  function show(id, visible) {
    const node = $(id);
    if (node !== null) node.hidden = !visible;
  }

  function groupDigits(digits, negative) {
    return (negative ? "-" : "") + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  function fmtCredits(n) {
    return isInt(n) ? groupDigits(String(Math.abs(n)), n < 0) : "";
  }

  /* Money is integer cents (house rule); rand shown the way the rules print it: R5,000. */
  function fmtRand(cents) {
    if (!isInt(cents)) return "";
    const abs = Math.abs(cents);
    const rest = abs % 100;
    const tail = rest === 0 ? "" : "." + String(rest).padStart(2, "0");
    return (cents < 0 ? "-" : "") + "R" + groupDigits(String(Math.floor(abs / 100)), false) + tail;
  }

  function fmtClock(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, "0");
    return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
  }

  /* A time in the venue's zone; with the day when it is not today there. */
  function fmtVenue(iso) {
    const at = Date.parse(iso);
    if (!Number.isFinite(at)) return "";
    const now = new Date(Date.now() + skewMs);
    const day = venueDay.format(new Date(at));
    const time = venueTime.format(new Date(at));
    return day === venueDay.format(now) ? time : `${day} ${time}`;
  }

  /* Shrink a line's text until it fits its box (down to 55 %), then let CSS ellipsize;
   * the full text stays in the title.  Bounded: at most 10 steps. */
  /* Whether a line's text is wider than its box: scrollWidth is rounded to whole pixels,
   * so a text a fraction of a pixel too wide (which still shows an ellipsis) is caught by
   * the width of the laid-out text itself. */
  function overflows(node) {
    if (node.scrollWidth > node.clientWidth) return true;
    const range = document.createRange();
    range.selectNodeContents(node);
    // The box's exact width (clientWidth is rounded too); the cells have no padding.
    return range.getBoundingClientRect().width > node.getBoundingClientRect().width + 0.01;
  }

  function fitText(node) {
    if (node === null) return;
    // Fitted already for this text in this width: nothing to measure (a board of 200
    // seats renders many times a second; each fitting step is a layout).
    const key = `${node.clientWidth}|${node.textContent}`;
    if (node.dataset.fit === key) return;
    node.dataset.fit = key;
    node.style.fontSize = "";
    node.title = node.textContent;
    if (!overflows(node)) return;
    // One step to the size the text needs (its width scales with the font), then at
    // most a few small steps for what rounding leaves over.
    const base = parseFloat(window.getComputedStyle(node).fontSize);
    const range = document.createRange();
    range.selectNodeContents(node);
    const need = node.getBoundingClientRect().width / Math.max(1, range.getBoundingClientRect().width);
    let scale = Math.max(0.55, Math.min(0.98, need * 0.99));
    node.style.fontSize = `${(base * scale).toFixed(2)}px`;
    for (let tries = 0; tries < 4 && scale > 0.55 && overflows(node); tries += 1) {
      scale = Math.max(0.55, scale - 0.03);
      node.style.fontSize = `${(base * scale).toFixed(2)}px`;
    }
  }

  // -- rows with paging and rank-change animation ------------------------------------
  class RowList {
    constructor(list, pager) {
      this.list = list;
      this.pager = pager;
      this.nodes = new Map(); // key -> li
      this.page = 0;
      this.pages = 1;
      this.order = [];
      this.before = null;
      this.oldIndex = new Map();
      this.sizeKey = "";
      this.size = 1;
      this.fitKey = "";
    }

    /* New rows into the list; laid out (paged, fitted, animated) by layout() once every
     * panel has taken its place on the screen. */
    update(items) {
      this.before = this.positions();
      this.oldIndex = new Map(this.order.map((k, i) => [k, i]));
      const fresh = items.map((item) => this.node(item));
      this.list.replaceChildren(...fresh);
      this.order = items.map((item) => item.key);
      const keep = new Set(this.order);
      for (const key of [...this.nodes.keys()]) if (!keep.has(key)) this.nodes.delete(key);
      this.list.classList.toggle("no-player", items.every((item) => item.cut || !item.player));
      this.list.classList.toggle("has-flag", items.some((item) => item.cells && item.cells.some(([c, t]) => c === "flag" && t)));
    }

    layout() {
      this.paginate();
      this.fit();
      if (this.before !== null) this.animate(this.before, this.oldIndex);
      this.before = null;
    }

    /* Each name fitted to its cell, then the page's names at one size (the smallest
     * needed), so a column of names reads evenly. */
    fit() {
      const shown = [...this.list.children].filter((li) => !li.hidden);
      const cells = shown.map((li) => li.querySelector(".player")).filter((c) => c !== null);
      // The same names in the same boxes as last time: they are fitted already.
      const key = `${this.list.clientWidth}|${cells.map((c) => c.textContent).sort().join("|")}`;
      if (key === this.fitKey) return;
      this.fitKey = key;
      for (const cell of cells) {
        cell.style.fontSize = "";
        delete cell.dataset.fit;
        fitText(cell);
      }
      const sizes = cells.map((c) => parseFloat(window.getComputedStyle(c).fontSize));
      const smallest = Math.min(...sizes);
      if (!Number.isFinite(smallest)) return;
      cells.forEach((cell, i) => {
        if (sizes[i] > smallest + 0.5) cell.style.fontSize = `${smallest}px`;
      });
    }

    node(item) {
      let li = this.nodes.get(item.key);
      if (li === undefined) {
        li = el("li", "");
        this.nodes.set(item.key, li);
      }
      // Keep a climbing row's highlight ("up") until its own timer takes it off.
      const cls = `row ${item.cls || ""}${li.classList.contains("up") ? " up" : ""}`.trim();
      if (li.className !== cls) li.className = cls;
      if (li.dataset.key !== item.key) li.dataset.key = item.key;
      if (item.cut) {
        li.replaceChildren();
        li.textContent = item.text;
        return li;
      }
      // Attributes only when they change: a screen of 200 seats re-renders often.
      const machine = item.machine || "";
      const credits = isInt(item.credits) ? String(item.credits) : "";
      if (li.dataset.machine !== machine) li.dataset.machine = machine;
      if (li.dataset.credits !== credits) li.dataset.credits = credits;
      const cells = item.cells;
      if (li.children.length !== cells.length) {
        li.replaceChildren(...cells.map(([cls]) => el("span", cls)));
      }
      cells.forEach(([cls, text], i) => {
        const span = li.children[i];
        span.className = cls;
        if (span.textContent !== text) span.textContent = text;
      });
      return li;
    }

    positions() {
      const out = new Map();
      if (!MOTION) return out;
      for (const [key, li] of this.nodes) if (!li.hidden && li.isConnected) out.set(key, li.getBoundingClientRect());
      return out;
    }

    /* As many whole rows as the box shows make a page (a far-off reader cannot use half a
     * row); a longer list turns its pages every PAGE_MS. */
    paginate() {
      const rows = [...this.list.children];
      const size = this.pageSize(rows);
      this.pages = Math.max(1, Math.ceil(rows.length / size));
      if (this.page >= this.pages) this.page = 0;
      rows.forEach((li, i) => {
        const hide = Math.floor(i / size) !== this.page;
        if (li.hidden !== hide) li.hidden = hide;
      });
      // A short list's rows share out its box (three players left 70 % of a sign empty).
      // Only their height grows: a larger font would widen the em-sized columns and
      // squeeze the names; a list that pages keeps the measured size.
      this.list.classList.toggle("fill", this.pages === 1 && rows.length > 0);
      this.list.dataset.page = String(this.page + 1);
      this.list.dataset.pages = String(this.pages);
      if (this.pager) this.pager.textContent = this.pages > 1 ? `page ${this.page + 1} of ${this.pages}` : "";
    }

    /* Rows per page, measured with every row shown; kept while the box, the layout and
     * the row count stay the same (measuring lays out every row: not on every score). */
    pageSize(rows) {
      const box = this.list.getBoundingClientRect();
      const cuts = rows.filter((li) => li.classList.contains("cut")).length;
      const classes = [...this.list.classList].filter((c) => c !== "fill").join(" ");
      const key = `${box.width}x${box.height}|${rows.length}|${cuts}|${classes}`;
      if (this.sizeKey === key) return this.size;
      this.list.classList.remove("fill");  // measured at the natural size
      for (const li of rows) li.hidden = false;
      let fit = 0;
      for (const li of rows) {
        const r = li.getBoundingClientRect();
        if (r.bottom > box.bottom + 1 || r.right > box.right + 1) break;
        fit += 1;
      }
      this.sizeKey = key;
      this.size = Math.max(1, fit);
      return this.size;
    }

    turn() {
      if (this.pages <= 1) return;
      this.page = (this.page + 1) % this.pages;
      this.paginate();
      this.fit();
    }

    /* FLIP: rows that stayed on screen glide from where they were; a row that climbed
     * lights up.  Nothing moves with prefers-reduced-motion. */
    animate(before, oldIndex) {
      if (!MOTION) return;
      // Reads, then writes, then one reflow: a layout per row would cost more than the
      // render itself on a long bank.
      const moves = [];
      this.order.forEach((key, i) => {
        const li = this.nodes.get(key);
        if (li === undefined || li.hidden) return;
        const was = oldIndex.get(key);
        if (was !== undefined && i < was && !li.classList.contains("cut")) {
          li.classList.add("up");
          window.setTimeout(() => li.classList.remove("up"), 1200);
        }
        const old = before.get(key);
        if (old !== undefined) moves.push([li, old]);
      });
      const now = moves.map(([li]) => li.getBoundingClientRect());
      const moving = [];
      moves.forEach(([li, old], j) => {
        const dx = old.left - now[j].left;
        const dy = old.top - now[j].top;
        if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
        li.style.transition = "none";
        li.style.transform = `translate(${dx}px, ${dy}px)`;
        moving.push(li);
      });
      if (moving.length === 0) return;
      this.list.getBoundingClientRect(); // commit the start positions before the transition
      for (const li of moving) {
        li.style.transition = "";
        li.style.transform = "";
      }
    }
  }

  const seatRows = $("seats") ? new RowList($("seats"), $("seats-pager")) : null;
  const leaderRows = $("lb-rows") ? new RowList($("lb-rows"), $("lb-pager")) : null;
  const teamRows = $("team-rows") ? new RowList($("team-rows"), $("teams-pager")) : null;

  // -- heat ------------------------------------------------------------------------
  function heatOf(topic) {
    const parts = topic.split("/");
    return parts.length >= 3 && parts[0] === "heat" ? parts[1] : null;
  }

  function currentHeat() {
    if (PIN_HEAT) return PIN_HEAT;
    const current = get("current");
    if (BOARD === "bank") {
      if (isObj(current) && str(current.bank) === BANK && str(current.heat)) return str(current.heat);
      let best = null;
      for (const [topic, rec] of store) {
        const parts = topic.split("/");
        if (parts.length !== 3 || parts[0] !== "heat" || parts[2] !== "state") continue;
        if (str(rec.payload.bank) !== BANK) continue;
        if (best === null || rec.seq > best.seq) best = { key: parts[1], seq: rec.seq };
      }
      return best === null ? null : best.key;
    }
    if (isObj(current) && str(current.heat)) return str(current.heat);
    let best = null;
    let bestSeq = -1;
    for (const [topic, rec] of store) {
      const key = heatOf(topic);
      // A hot-seat commitment is published before its heat runs (HS4): not a heat on show.
      if (key !== null && !topic.endsWith("/hotseat") && rec.seq > bestSeq) {
        best = key;
        bestSeq = rec.seq;
      }
    }
    return best;
  }

  function heatLabel(key, state) {
    const current = get("current");
    const sources = [state, isObj(current) && str(current.heat) === key ? current : null];
    let name = "";
    let stage = "";
    for (const src of sources) {
      if (!isObj(src)) continue;
      name = name || str(src.name) || str(src.title);
      stage = stage || str(src.stage);
    }
    if (!name) name = key.startsWith("run-") ? `Test heat (run ${key.slice(4)})` : `Heat ${key}`;
    return { name, stage: stage || "Slots Reel Tournament" };
  }

  /* Seconds left on the heat clock (null: no clock to show). */
  function timeLeft(state, rec) {
    if (!isObj(state)) return null;
    const phase = str(state.state);
    const nowServer = Date.now() + skewMs;
    const left = typeof state.seconds_left === "number" ? state.seconds_left : null;
    if (phase === "running") {
      const ends = Date.parse(str(state.ends_at));
      if (Number.isFinite(ends)) return (ends - nowServer) / 1000;
      if (left === null) return null;
      const at = Date.parse(str(state.at));
      if (Number.isFinite(at)) return left - (nowServer - at) / 1000;
      return left - (Date.now() - rec.recv) / 1000;
    }
    if (phase === "paused" || phase === "armed" || phase === "scheduled") return left;
    if (phase === "ending" || phase === "collecting") return 0;
    return null;
  }

  function renderCountdown() {
    const node = $("countdown");
    if (node === null) return;
    const key = currentHeat();
    const rec = key === null ? undefined : store.get(`heat/${key}/state`);
    const left = rec ? timeLeft(rec.payload, rec) : null;
    show("clock-box", left !== null);
    if (left === null) return;
    setText("countdown", fmtClock(left));
    node.dataset.seconds = String(Math.max(0, Math.ceil(left)));
    node.classList.toggle("urgent", left > 0 && left <= 30);
    node.classList.toggle("stopped", str(rec.payload.state) !== "running");
  }

  /* The next scheduled heat: this bank's, or the soonest of all on the floor board. */
  function nextHeat() {
    if (BOARD === "bank") return get(`bank/${BANK}/next`);
    let best = null;
    for (const [topic, rec] of store) {
      const parts = topic.split("/");
      if (parts.length !== 3 || parts[0] !== "bank" || parts[2] !== "next") continue;
      const at = Date.parse(str(rec.payload.starts_at));
      if (!Number.isFinite(at)) continue;
      if (best === null || at < best.at) best = { at, payload: rec.payload };
    }
    return best === null ? null : best.payload;
  }

  function renderNext(key, phase) {
    const next = nextHeat();
    const when = isObj(next) ? fmtVenue(str(next.starts_at)) : "";
    const nextName = isObj(next) ? str(next.name) : "";
    // Waiting, the attract screen says when (and counts down); the head's box is for the
    // time after a heat, beside its result.
    show("next-box", when !== "" && key !== null && DONE.has(phase));
    setText("next-time", when);
    setText("next-name", nextName);
    setText("attract-next", when ? `Next heat ${when}${nextName ? ` · ${nextName}` : ""}` : "Entries on sale at the tournament desk");
    const at = isObj(next) ? Date.parse(str(next.starts_at)) : NaN;
    nextHeatAt = Number.isFinite(at) ? at : null;
    renderNextHeatCountdown();
  }

  /* The time to the next heat, counted down by tick() on the waiting and attract screens. */
  let nextHeatAt = null;
  function renderNextHeatCountdown() {
    const left = nextHeatAt === null ? null : (nextHeatAt - (Date.now() + skewMs)) / 1000;
    const text = left === null ? "" : left > 0 ? `in ${fmtClock(left)}` : "starting";
    setText("next-in", text);
    setText("attract-in", text);
  }

  function seatsOf(key) {
    const prefix = `heat/${key}/seat/`;
    const rows = [];
    for (const [topic, rec] of store) {
      if (!topic.startsWith(prefix)) continue;
      const p = rec.payload;
      rows.push({
        machine: str(p.machine) || topic.slice(prefix.length),
        player: str(p.player) || str(p.player_name),
        credits: isInt(p.credits) ? p.credits : null,
        final: p.final === true,
        malfunction: str(p.malfunction),
      });
    }
    // The runner names the seats when the heat starts; show them before the first reading.
    const state = get(`heat/${key}/state`);
    const have = new Set(rows.map((r) => r.machine));
    for (const m of isObj(state) && Array.isArray(state.machines) ? state.machines : []) {
      const machine = str(m);
      if (!machine || have.has(machine)) continue;
      have.add(machine);
      rows.push({ machine, player: "", credits: null, final: false, malfunction: "" });
    }
    return rows;
  }

  /* Highest credits first (rules 13/14); struck-out seats (rule 20) and seats with no
   * reading last, but always listed. */
  function ordered(rows, standings) {
    const ranks = new Map();
    for (const r of standings) if (isObj(r) && str(r.machine)) ranks.set(str(r.machine), r);
    // A score keyed in or corrected by a director (rule 23) is stored, not read off the
    // machine: the stored standings' credits stand over the seat's last reading.
    for (const s of rows) {
      const r = ranks.get(s.machine);
      s.manual = r !== undefined && r.manual === true && isInt(r.credits);
      if (s.manual) s.credits = r.credits;
    }
    rows.sort((a, b) => {
      const fa = a.malfunction ? 1 : 0;
      const fb = b.malfunction ? 1 : 0;
      if (fa !== fb) return fa - fb;
      const ca = a.credits === null ? -Infinity : a.credits;
      const cb = b.credits === null ? -Infinity : b.credits;
      if (ca !== cb) return cb - ca;
      return collator.compare(a.machine, b.machine);
    });
    let rank = 0;
    let prev = null;
    return rows.map((s, i) => {
      const ranked = ranks.get(s.machine);
      let shown = "";
      if (ranked && isInt(ranked.rank)) shown = String(ranked.rank);
      else if (!s.malfunction && s.credits !== null) {
        if (s.credits !== prev) {
          rank = i + 1;
          prev = s.credits;
        }
        shown = String(rank);
      }
      const tie = ranked !== undefined && ranked.tie === true;
      let flag = s.final ? "scored" : "";
      if (tie) flag = "tie"; // the note under the list says a card draw decides (rule 19)
      if (s.manual) flag = tie ? "tie · manual" : "manual";
      if (s.malfunction) flag = "fault (rule 20)";
      const cls = [s.final ? "final" : "", tie ? "tie" : "", s.malfunction ? "fault" : "", shown === "1" ? "top" : "", s.manual ? "manual" : ""];
      return {
        key: s.machine,
        machine: s.machine,
        credits: s.credits,
        player: s.player,
        cls: cls.filter(Boolean).join(" "),
        cells: [
          ["rank", shown],
          ["machine fit", s.machine],
          ["player fit", s.player],
          ["credits", fmtCredits(s.credits)],
          ["flag", flag],
        ],
      };
    });
  }

  function renderHeat() {
    if ($("heat") === null) return false;
    const key = currentHeat();
    const state = key === null ? null : get(`heat/${key}/state`);
    const phase = isObj(state) ? str(state.state) : "";
    show("attract", key === null);
    show("seats-block", key !== null);
    if (key === null) {
      setText("heat-title", "Waiting for the next heat");
      setText("heat-stage", "Slots Reel Tournament");
    } else {
      const label = heatLabel(key, state);
      setText("heat-title", label.name);
      setText("heat-stage", label.stage);
    }
    setText("heat-state", STATE_LABELS[phase] || (key === null ? "Waiting" : phase || "Starting soon"));
    $("heat-state").className = `state-badge state-${/^[a-z]+$/.test(phase) ? phase : "none"}`;
    renderNext(key, phase);
    renderCountdown();
    if (key === null) {
      seatRows.update([]);
      return BOARD !== "floor" || nextHeat() !== null;
    }
    const standings = get(`heat/${key}/standings`);
    const result = isObj(standings);
    const official = result && (standings.official === true || (standings.official === undefined && phase === "closed"));
    setText("seats-title", result ? "Result" : "Live scores");
    setText("seats-word", official ? "official" : "provisional");
    $("seats-word").className = `word ${official ? "official" : "provisional"}`;
    const void_ = result && standings.void === true;
    const rows = void_ ? [] : ordered(seatsOf(key), result && Array.isArray(standings.rows) ? standings.rows : []);
    seatRows.update(rows);
    let note = "";
    if (void_) note = "This heat is void and will be restarted (rule 20).";
    else if (rows.some((r) => r.cls.includes("tie"))) note = "Equal credits: a card draw decides the order (rule 19).";
    else if (rows.length === 0) note = "Seats are being allocated.";
    setText("seats-note", note);
    return true;
  }

  // -- tournament leaderboard ---------------------------------------------------------
  function currentLeaderboard() {
    let ref = TOURNAMENT;
    if (!ref) {
      const key = currentHeat();
      const state = key === null ? null : get(`heat/${key}/state`);
      const current = get("current");
      if (isObj(state) && str(state.tournament)) ref = str(state.tournament);
      else if (isObj(current) && str(current.tournament) && (BOARD !== "bank" || str(current.bank) === BANK)) ref = str(current.tournament);
    }
    if (ref) return get(`tournament/${ref}/leaderboard`);
    let best = null;
    for (const [topic, rec] of store) {
      const parts = topic.split("/");
      if (parts.length === 3 && parts[0] === "tournament" && parts[2] === "leaderboard" && (best === null || rec.seq > best.seq)) best = rec;
    }
    return best === null ? null : best.payload;
  }

  function leaderItems(board) {
    const prizes = new Map();
    for (const p of Array.isArray(board.prizes) ? board.prizes : []) {
      if (isObj(p) && isInt(p.place) && isInt(p.cents)) prizes.set(p.place, p.cents);
    }
    const cuts = (Array.isArray(board.cuts) ? board.cuts : []).filter((c) => isObj(c) && isInt(c.after));
    const rows = (Array.isArray(board.rows) ? board.rows : []).filter(isObj);
    const items = [];
    rows.forEach((r, i) => {
      const place = isInt(r.place) ? r.place : i + 1;
      const tie = r.tie === true;
      const manual = r.manual === true; // keyed in or corrected by a director (rule 23)
      items.push({
        key: `entry-${str(r.entry) || i}`,
        player: str(r.player),
        credits: isInt(r.credits) ? r.credits : null,
        cls: [tie ? "tie" : "", place === 1 ? "top" : "", manual ? "manual" : ""].filter(Boolean).join(" "),
        cells: [
          ["rank", String(place)],
          ["player fit", str(r.player)],
          ["credits", fmtCredits(r.credits)],
          ["prize", fmtRand(prizes.get(place))],
          ["flag", [
            tie ? "tie" : r.goes_on === "excluded" ? "not seated (rule 14)" : "",
            manual ? "manual" : "",
            r.amended ? "amended" : "",
          ].filter(Boolean).join(" · ")],
        ],
      });
      const next = rows[i + 1];
      const nextPlace = next && isInt(next.place) ? next.place : place + 1;
      for (const cut of cuts) {
        if (cut.after >= place && cut.after < nextPlace && next !== undefined) {
          items.push({ key: `cut-${cut.after}`, cut: true, cls: "cut", text: str(cut.label) || `Cut: top ${cut.after}` });
        }
      }
    });
    return items;
  }

  function renderLeaderboard() {
    if ($("board") === null) return false;
    const board = currentLeaderboard();
    show("board", isObj(board));
    if (!isObj(board)) {
      leaderRows.update([]);
      return false;
    }
    setText("lb-title", str(board.name) || "Tournament leaderboard");
    setText("lb-stage", str(board.stage_title) || str(board.stage));
    const official = board.official === true;
    setText("lb-word", official ? "official" : "provisional");
    $("lb-word").className = `word ${official ? "official" : "provisional"}`;
    const items = leaderItems(board);
    leaderRows.update(items);
    const ties = items.some((i) => !i.cut && i.cls.includes("tie"));
    setText("lb-note", items.length === 0 ? "No scores yet" : ties ? "Equal credits: a card draw decides the order (rule 19)." : "");
    return true;
  }

  // -- hot seat (HS4, HS5) ---------------------------------------------------------------
  /* The hot-seat draws of the heat on show, else of the next heat: before the heat the
   * hash committed to (the draw's seed stays secret), after it each winning seat and the
   * seed, which anyone can check against the hash (tools/verify_export.py). */
  function currentHotseat() {
    const key = currentHeat();
    const mine = key === null ? null : get(`heat/${key}/hotseat`);
    if (isObj(mine)) return mine;
    const next = nextHeat();
    return isObj(next) && str(next.heat) ? get(`heat/${str(next.heat)}/hotseat`) : null;
  }

  function renderHotseat() {
    if ($("hotseat") === null) return;
    const hs = currentHotseat();
    show("hotseat", isObj(hs));
    if (!isObj(hs)) return;
    const draws = isInt(hs.draws) ? hs.draws : 0;
    const each = isInt(hs.prize_cents) && hs.prize_cents > 0 ? ` · ${fmtRand(hs.prize_cents)} each` : "";
    setText("hs-terms", `${draws} draw${draws === 1 ? "" : "s"} during the heat${each}`);
    const seed = typeof hs.seed === "string" && hs.seed ? hs.seed : "";
    const winners = (Array.isArray(hs.winners) ? hs.winners : []).filter(isObj);
    $("hs-winners").replaceChildren(...winners.map((w) => {
      const n = isInt(w.index) ? w.index + 1 : "?";
      if (!str(w.winner)) return el("li", "void", `Draw ${n}: void, no eligible seat (rule HS3)`);
      const who = [str(w.machine), str(w.player)].filter(Boolean).join(" · ");
      const prize = isInt(w.prize_cents) && w.prize_cents > 0 ? ` — ${fmtRand(w.prize_cents)}` : "";
      return el("li", "winner", `Draw ${n}: seat ${str(w.winner)}${who ? ` (${who})` : ""}${prize}`);
    }));
    setText("hs-hash-label", seed ? "Committed" : "Committed before the heat (SHA-256)");
    setText("hs-hash", str(hs.commitment));
    show("hs-seed-row", seed !== "");
    setText("hs-seed", seed);
  }

  // -- teams (H5-H12) -------------------------------------------------------------------
  function currentTeams() {
    let ref = TOURNAMENT;
    if (!ref) {
      const board = currentLeaderboard();
      ref = isObj(board) ? str(board.tournament) : "";
    }
    return ref ? get(`tournament/${ref}/teams`) : null;
  }

  function teamItems(board) {
    const prizes = new Map();
    for (const p of Array.isArray(board.prizes) ? board.prizes : []) {
      if (isObj(p) && isInt(p.place) && isInt(p.cents)) prizes.set(p.place, p);
    }
    const cuts = (Array.isArray(board.cuts) ? board.cuts : []).filter((c) => isObj(c) && isInt(c.after));
    const rows = (Array.isArray(board.rows) ? board.rows : []).filter(isObj);
    const items = [];
    rows.forEach((r, i) => {
      const place = isInt(r.place) ? r.place : null;
      const tie = r.tie === true;
      const out = r.out === true;
      const prize = place === null ? undefined : prizes.get(place);
      let flag = tie ? "tie (H7)" : "";
      if (out) flag = "out (H10)";
      else if (prize && prize.paid === true) flag = "paid";
      items.push({
        key: `team-${str(r.team) || i}`,
        player: str(r.name),
        credits: isInt(r.total) ? r.total : null,
        cls: [tie ? "tie" : "", place === 1 ? "top" : "", out ? "out" : ""].filter(Boolean).join(" "),
        cells: [
          ["rank", place === null ? "–" : String(place)],
          ["player fit", str(r.name)],
          ["credits", place === null && !out ? "" : fmtCredits(r.total)],
          ["prize", prize ? fmtRand(prize.cents) : ""],
          ["flag", flag],
        ],
      });
      const next = rows[i + 1];
      const nextPlace = next && isInt(next.place) ? next.place : Infinity;
      for (const cut of cuts) {
        if (place !== null && cut.after >= place && cut.after < nextPlace && next !== undefined) {
          items.push({ key: `team-cut-${cut.after}`, cut: true, cls: "cut", text: str(cut.label) || `Top ${cut.after} teams go on` });
        }
      }
    });
    return items;
  }

  function renderTeams() {
    if ($("teams") === null) return false;
    const board = currentTeams();
    show("teams", isObj(board));
    if (!isObj(board)) {
      teamRows.update([]);
      return false;
    }
    setText("teams-title", `Teams · ${str(board.name)}`);
    setText("teams-stage", str(board.stage_title) || str(board.stage));
    const official = board.official === true;
    setText("teams-word", official ? "official" : "provisional");
    $("teams-word").className = `word ${official ? "official" : "provisional"}`;
    const items = teamItems(board);
    teamRows.update(items);
    const how = str(board.scoring);
    setText("teams-note", items.length === 0 ? "No teams yet" : `Team score: ${how || "members' scores"}; equal scores by countback (rule H7).`);
    return true;
  }

  // -- Super 9 ---------------------------------------------------------------------
  function buildGrid() {
    const grid = $("grid");
    if (grid === null) return;
    const cells = [];
    const zero = el("div", "cell green zero", "0");
    zero.dataset.number = "0";
    cells.push(zero);
    for (let row = 0; row < 3; row += 1) {
      for (let col = 0; col < 12; col += 1) {
        const n = col * 3 + (3 - row); // table layout: 3, 6 … 36 on top
        const cell = el("div", `cell ${RED.has(n) ? "red" : "black"}`, String(n));
        cell.dataset.number = String(n);
        cell.style.gridRow = String(row + 1);
        cell.style.gridColumn = String(col + 2);
        cells.push(cell);
      }
    }
    grid.replaceChildren(...cells);
  }

  function currentDraw() {
    if (PIN_SESSION) return get(`super9/${PIN_SESSION}/draw`);
    let best = null;
    for (const [topic, rec] of store) {
      const parts = topic.split("/");
      if (parts.length !== 3 || parts[0] !== "super9" || parts[2] !== "draw") continue;
      const live = rec.payload.status === "drawing" ? 1 : 0;
      if (best === null || live > best.live || (live === best.live && rec.seq > best.rec.seq)) best = { rec, live };
    }
    return best === null ? null : best.rec.payload;
  }

  function renderBall(last) {
    const ball = $("s9-last");
    setText("s9-last", last === null ? "?" : String(last));
    ball.dataset.number = last === null ? "" : String(last);
    let colour = "none";
    if (last !== null) colour = last === 0 ? "green" : RED.has(last) ? "red" : "black";
    ball.className = `ball ball-${colour}`;
  }

  /* Between draws (none yet, or the last one closed): the next session and the time to
   * it, counted down by tick(); the closed draw's numbers stay on the table. */
  function renderNextSession(draw, pot) {
    const next = $("s9-next");
    if (next === null) return;
    const idle = !isObj(draw) || str(draw.status) === "closed";
    const at = isObj(pot) ? Date.parse(str(pot.next_session)) : NaN;
    next.hidden = !idle || !Number.isFinite(at);
    next.dataset.at = next.hidden ? "" : String(at);
    if (!next.hidden) setText("s9-next-time", fmtVenue(str(pot.next_session)));
    renderNextCountdown();
  }

  function renderNextCountdown() {
    const next = $("s9-next");
    if (next === null || next.hidden || !next.dataset.at) return;
    const left = (Number(next.dataset.at) - (Date.now() + skewMs)) / 1000;
    setText("s9-next-in", left > 0 ? `in ${fmtClock(left)}` : "starting");
  }

  function renderSuper9() {
    if ($("super9") === null) return false;
    const draw = currentDraw();
    const pot = get("super9/jackpot");
    let cents = isObj(draw) && isInt(draw.jackpot_cents) ? draw.jackpot_cents : null;
    if (cents === null && isObj(pot) && isInt(pot.jackpot_cents)) cents = pot.jackpot_cents;
    setText("jackpot", fmtRand(cents));
    $("jackpot").dataset.cents = cents === null ? "" : String(cents);
    $("jackpot").parentElement.hidden = cents === null;
    const called = isObj(draw) && Array.isArray(draw.called) ? draw.called.filter((n) => isInt(n) && n >= 0 && n <= 36) : [];
    const calledSet = new Set(called);
    const last = isObj(draw) && isObj(draw.last) && isInt(draw.last.number) ? draw.last.number : null;
    for (const cell of $("grid").children) {
      const n = Number(cell.dataset.number);
      cell.classList.toggle("called", calledSet.has(n));
      cell.classList.toggle("last", n === last);
    }
    renderBall(last);
    renderNextSession(draw, pot);
    if (!isObj(draw)) {
      setText("s9-status", "Between draws");
      setText("s9-counted", "0 / 18");
      setText("s9-window", "");
      setText("s9-extra", "");
      show("s9-winners", false);
      show("s9-near-block", false);
      return cents !== null;
    }
    renderDraw(draw);
    return true;
  }

  function renderDraw(draw) {
    const session = str(draw.session);
    const status = S9_STATUS[str(draw.status)] || str(draw.status);
    setText("s9-status", session ? `Session ${session} · ${status}` : status);
    const counted = isInt(draw.counted_spins) ? draw.counted_spins : 0;
    const span = isInt(draw.jackpot_spins) ? draw.jackpot_spins : 18;
    setText("s9-counted", `${counted} / ${span}`);
    setText("s9-window", draw.jackpot_live === false
      ? "Jackpot window closed — playing for the consolation prize (rule 16)"
      : `Jackpot live: all 9 numbers within ${span} spins wins it (rule 14)`);
    $("s9-window").classList.toggle("closed", draw.jackpot_live === false);
    const notes = [];
    const spins = isInt(draw.spins) ? draw.spins : counted;
    if (spins > counted) notes.push(`${spins - counted} repeated number${spins - counted === 1 ? "" : "s"} not counted (rule 19)`);
    const voided = Array.isArray(draw.voided_games) ? draw.voided_games.filter(isInt) : [];
    if (voided.length > 0) notes.push(`No spin: game ${voided.slice(-5).join(", ")} (rule 18.2)`);
    setText("s9-extra", notes.join(" · "));
    const winners = (Array.isArray(draw.completed) ? draw.completed : []).filter(isObj);
    const winList = winners.slice(0, 6).map((w) => {
      const spin = isInt(w.counted) ? w.counted : w.spin;
      return el("li", "", `Ticket ${str(w.ticket)}${isInt(spin) ? ` — spin ${spin}` : ""}`);
    });
    const total = isInt(draw.completed_count) ? draw.completed_count : winners.length;
    if (total > winList.length) winList.push(el("li", "more", `+ ${total - winList.length} more`));
    $("s9-winner-list").replaceChildren(...winList);
    show("s9-winners", winList.length > 0);
    const near = (Array.isArray(draw.near_complete) ? draw.near_complete : []).filter(isObj);
    $("s9-near").replaceChildren(...near.slice(0, 5).map((t) => el("li", "", `Ticket ${str(t.ticket)} — ${isInt(t.to_go) ? t.to_go : "?"} to go`)));
    show("s9-near-block", near.length > 0 && winList.length === 0);
  }

  // -- page ------------------------------------------------------------------------
  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    window.setTimeout(render, 30); // coalesce a burst (the replay) into one render
  }

  /* The floor board gives the whole screen to whichever side has something to show, and
   * carries the footer of what it shows (the Super 9 board never the tournament's). */
  function arrangeFloor(hasHeat, hasDraw) {
    const solo = hasHeat !== hasDraw;
    $("layout").classList.toggle("solo", solo);
    show("heat", hasHeat || !hasDraw);
    show("super9", hasDraw);
    for (const foot of document.querySelectorAll("[data-footer]")) {
      const kind = foot.dataset.footer;
      foot.hidden = kind === "super9" ? !hasDraw : !(hasHeat || !hasDraw);
    }
  }

  // What a benchmark or a technician's console can read: how often and how long it renders.
  const stats = { renders: 0, renderMs: 0 };
  window.reelgateSignage = stats;

  function render() {
    updateBanner();
    renderQueued = false;
    const began = performance.now();
    const hasHeat = renderHeat();
    renderHotseat();
    const hasBoard = renderLeaderboard();
    const hasTeams = renderTeams();
    const hasDraw = renderSuper9();
    if (BOARD === "floor") arrangeFloor(hasHeat, hasDraw);
    if (BOARD === "bank") $("layout").classList.toggle("solo", !hasBoard);
    if (BOARD === "tournament") $("layout").classList.toggle("with-teams", hasTeams);
    // Every panel is in place now: fit the text to what is left, then page the lists
    // (their animation last: its writes would make the fitting's reads lay out again).
    for (const id of ["heat-title", "next-name", "lb-title", "teams-title", "jackpot"]) fitText($(id));
    if (seatRows) seatRows.layout();
    if (leaderRows) leaderRows.layout();
    if (teamRows) teamRows.layout();
    body.dataset.rendered = String(Date.now());
    stats.renders += 1;
    stats.renderMs += performance.now() - began;
  }

  function tick() {
    renderCountdown();
    renderNextCountdown();
    renderNextHeatCountdown();
    setText("clock-now", venueTime.format(new Date(Date.now() + skewMs)));
  }

  function turnPages() {
    if (seatRows) seatRows.turn();
    if (leaderRows) leaderRows.turn();
    if (teamRows) teamRows.turn();
  }

  buildGrid();
  render();
  tick();
  connect();
  window.addEventListener("resize", queueRender);
  window.setInterval(tick, 250);
  window.setInterval(turnPages, PAGE_MS);
  window.setInterval(watchdog, 5000);
})();
