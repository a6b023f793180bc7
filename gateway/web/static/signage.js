/* Reelgate signage page: follows /events (Server-Sent Events) and renders the current
 * heat and the Super 9 draw.  Vanilla JS, no build step.  Payload text only ever reaches
 * the page through textContent / attributes set by DOM calls, never as markup.
 *
 * URL options: ?top=N (standings rows, default 10), ?seats=N (live rows, default 10),
 * ?heat=KEY (pin a heat instead of following "current"), ?session=ID (pin a Super 9
 * session), ?view=heat|super9 (one panel only).
 */
"use strict";

(function () {
  const params = new URLSearchParams(window.location.search);
  const TOP = intParam("top", 10, 1, 50);
  const SEATS = intParam("seats", 10, 1, 60);
  const PIN_HEAT = textParam("heat");
  const PIN_SESSION = textParam("session");
  const VIEW = textParam("view");
  const STALE_MS = 45000; // the server pings every 15 s; three missed pings: reconnect
  const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);

  const STATE_LABELS = {
    scheduled: "Starting soon",
    armed: "Get ready",
    running: "Playing",
    paused: "Paused",
    ending: "Time's up",
    collecting: "Counting scores",
    closed: "Final",
    aborted: "Cancelled",
    restarted: "Void — heat will be restarted (rule 20)",
  };
  const S9_STATUS = {
    scheduled: "Tickets on sale",
    drawing: "Draw in progress",
    closed: "Draw closed",
  };

  const store = new Map(); // topic -> {seq, payload, recv}
  let skewMs = 0; // server clock minus ours, from hello/ping
  let source = null;
  let lastSeen = Date.now();
  let retryMs = 1000;
  let renderQueued = false;
  let upstream = null;
  let connection = "connecting";

  const $ = (id) => document.getElementById(id);

  function intParam(name, dflt, lo, hi) {
    const raw = params.get(name);
    const n = raw === null ? NaN : Number.parseInt(raw, 10);
    return Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : dflt;
  }

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

  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const isInt = (v) => Number.isInteger(v);
  const str = (v) => (typeof v === "string" || typeof v === "number" ? String(v) : "");

  // -- connection ------------------------------------------------------------------
  function connect() {
    if (source !== null) source.close();
    source = new EventSource("/events");
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
      setConnection("reconnecting");
      if (source !== null && source.readyState === EventSource.CLOSED) {
        // The browser gave up (HTTP error, server full): retry ourselves, backing off.
        source = null;
        window.setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 15000);
      }
    };
  }

  function seen(serverNow) {
    lastSeen = Date.now();
    if (typeof serverNow === "number" && Number.isFinite(serverNow)) {
      skewMs = serverNow * 1000 - Date.now();
    }
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
    const body = document.body;
    body.classList.toggle("connecting", connection === "connecting");
    body.classList.toggle("reconnecting", connection === "reconnecting");
    body.classList.toggle("upstream-down", connection === "live" && upstream === "disconnected");
    // The gateway runs on a training database (retained "about"): every screen says so.
    const about = get("about");
    const training = isObj(about) && about.training === true;
    body.classList.toggle("training", training);
    const banner = $("banner");
    if (connection === "reconnecting") {
      banner.textContent = "Reconnecting to the gateway… (showing the last known values)";
    } else if (connection === "connecting") {
      banner.textContent = "Connecting to the gateway…";
    } else if (upstream === "disconnected") {
      banner.textContent = "Waiting for the gateway feed… (showing the last known values)";
    } else if (training) {
      banner.textContent = "TRAINING — a rehearsal, not a real tournament";
    } else {
      banner.textContent = "";
    }
    body.dataset.connection = connection;
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
    const value = text === null || text === undefined ? "" : String(text);
    if (node.textContent !== value) node.textContent = value;
  }

  const collator = new Intl.Collator("en", { numeric: true });

  function fmtCredits(n) {
    return isInt(n) ? groupDigits(String(Math.abs(n)), n < 0) : "—";
  }

  function groupDigits(digits, negative) {
    const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (negative ? "-" : "") + grouped;
  }

  /* Money is integer cents (house rule); rand shown the way the rules print it: R5,000. */
  function fmtRand(cents) {
    if (!isInt(cents)) return "—";
    const neg = cents < 0;
    const abs = Math.abs(cents);
    const rands = Math.floor(abs / 100);
    const rest = abs % 100;
    const tail = rest === 0 ? "" : "." + String(rest).padStart(2, "0");
    return (neg ? "-" : "") + "R" + groupDigits(String(rands), false) + tail;
  }

  function fmtClock(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, "0");
    return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
  }

  // -- heat ------------------------------------------------------------------------
  function heatOf(topic) {
    const parts = topic.split("/");
    return parts.length >= 3 && parts[0] === "heat" ? parts[1] : null;
  }

  function currentHeat() {
    if (PIN_HEAT) return PIN_HEAT;
    const current = get("current");
    if (isObj(current) && str(current.heat)) return str(current.heat);
    let best = null;
    let bestSeq = -1;
    for (const [topic, rec] of store) {
      const key = heatOf(topic);
      if (key !== null && rec.seq > bestSeq) {
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

  /* Seconds left on the heat clock, and whether it is ticking. */
  function timeLeft(state, rec) {
    if (!isObj(state)) return null;
    const phase = str(state.state);
    const nowServer = Date.now() + skewMs;
    const left = typeof state.seconds_left === "number" ? state.seconds_left : null;
    if (phase === "running") {
      const ends = Date.parse(str(state.ends_at));
      if (Number.isFinite(ends)) return (ends - nowServer) / 1000;
      if (left !== null) {
        const at = Date.parse(str(state.at));
        if (Number.isFinite(at)) return left - (nowServer - at) / 1000;
        return left - (Date.now() - rec.recv) / 1000;
      }
      return null;
    }
    if (phase === "paused" || phase === "armed" || phase === "scheduled") return left;
    if (phase === "ending" || phase === "collecting" || phase === "closed") return 0;
    return null;
  }

  function renderCountdown() {
    const key = currentHeat();
    const topic = key === null ? null : `heat/${key}/state`;
    const rec = topic === null ? undefined : store.get(topic);
    const left = rec ? timeLeft(rec.payload, rec) : null;
    const node = $("countdown");
    const text = left === null ? "--:--" : fmtClock(left);
    setText("countdown", text);
    node.dataset.seconds = left === null ? "" : String(Math.max(0, Math.ceil(left)));
    node.classList.toggle("urgent", left !== null && left > 0 && left <= 30);
    node.classList.toggle("stopped", !rec || str(rec.payload.state) !== "running");
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
    const named = isObj(state) && Array.isArray(state.machines) ? state.machines : [];
    const have = new Set(rows.map((r) => r.machine));
    for (const m of named) {
      const machine = str(m);
      if (!machine || have.has(machine)) continue;
      have.add(machine);
      rows.push({ machine, player: "", credits: null, final: false, malfunction: "" });
    }
    // Highest credits first (rules 13/14); faulted seats and seats with no reading last.
    rows.sort((a, b) => {
      const fa = a.malfunction ? 1 : 0;
      const fb = b.malfunction ? 1 : 0;
      if (fa !== fb) return fa - fb;
      const ca = a.credits === null ? -Infinity : a.credits;
      const cb = b.credits === null ? -Infinity : b.credits;
      if (ca !== cb) return cb - ca;
      return collator.compare(a.machine, b.machine);
    });
    return rows;
  }

  function fillTable(tbody, rows) {
    const fresh = rows.map((row) => {
      const tr = el("tr", row.cls);
      tr.dataset.machine = row.machine;
      tr.dataset.credits = row.credits === null ? "" : String(row.credits);
      tr.appendChild(el("td", "rank", row.rank));
      tr.appendChild(el("td", "machine", row.machine));
      tr.appendChild(el("td", "player", row.player));
      tr.appendChild(el("td", "num credits", fmtCredits(row.credits)));
      tr.appendChild(el("td", "flag", row.flag));
      return tr;
    });
    tbody.replaceChildren(...fresh);
    // The player column only when someone has a name to show: more room for the rest.
    tbody.parentElement.classList.toggle("no-player", rows.every((row) => !row.player));
  }

  /* Drop the rows a panel cannot show whole (a far-off reader cannot use half a row);
   * returns how many were dropped. */
  function fitRows(block, tbody) {
    let dropped = 0;
    const limit = block.getBoundingClientRect().bottom;
    while (tbody.rows.length > 1) {
      const last = tbody.rows[tbody.rows.length - 1];
      if (last.getBoundingClientRect().bottom <= limit + 1) break;
      last.remove();
      dropped += 1;
    }
    return dropped;
  }

  function renderSeats(key) {
    const all = key === null ? [] : seatsOf(key);
    let rank = 0;
    let prev = null;
    const rows = all.slice(0, SEATS).map((s, i) => {
      let shownRank = "";
      if (!s.malfunction && s.credits !== null) {
        if (s.credits !== prev) {
          rank = i + 1;
          prev = s.credits;
        }
        shownRank = String(rank);
      }
      let flag = s.final ? "final" : "";
      if (s.malfunction) flag = "machine fault (rule 20)";
      let cls = s.final ? "final" : "";
      if (s.malfunction) cls = "fault";
      return { ...s, rank: shownRank, flag, cls };
    });
    const tbody = $("scores").tBodies[0];
    fillTable(tbody, rows);
    $("scores-empty").hidden = all.length > 0;
    return all.length - rows.length;
  }

  function fitSeats(hiddenAlready) {
    const block = $("scores-block");
    const more = block.hidden ? 0 : hiddenAlready + fitRows(block, $("scores").tBodies[0]);
    setText("scores-more", more > 0 ? `· ${more} more seat${more === 1 ? "" : "s"} not shown` : "");
  }

  function latestStandings(exceptKey) {
    let best = null;
    for (const [topic, rec] of store) {
      const parts = topic.split("/");
      if (parts.length !== 3 || parts[0] !== "heat" || parts[2] !== "standings") continue;
      if (parts[1] === exceptKey) continue;
      if (best === null || rec.seq > best.rec.seq) best = { key: parts[1], rec };
    }
    return best;
  }

  function renderStandings(key) {
    let found = null;
    if (key !== null) {
      const rec = store.get(`heat/${key}/standings`);
      if (rec) found = { key, rec, own: true };
    }
    if (found === null && !PIN_HEAT) {
      const other = latestStandings(key);
      if (other !== null) found = { ...other, own: false };
    }
    const block = $("standings-block");
    block.hidden = found === null;
    $("scores-block").hidden = found !== null && found.own;
    if (found === null) return;
    const p = found.rec.payload;
    const label = heatLabel(found.key, get(`heat/${found.key}/state`)).name;
    setText("standings-title", found.own ? `Results — top ${TOP}` : `Last heat — ${label}`);
    block.classList.toggle("previous", !found.own);
    const table = $("standings").tBodies[0];
    if (p.void === true) {
      fillTable(table, []);
      setText("standings-note", "This heat is void and will be restarted (rule 20).");
      return;
    }
    // While another heat is live its scores come first: the last results shrink to a podium.
    const shown = found.own ? TOP : Math.min(TOP, 3);
    const rows = (Array.isArray(p.rows) ? p.rows : []).filter(isObj).slice(0, shown);
    fillTable(
      table,
      rows.map((r) => ({
        machine: str(r.machine),
        player: str(r.player) || str(r.player_name),
        credits: isInt(r.credits) ? r.credits : null,
        rank: isInt(r.rank) ? String(r.rank) : "",
        flag: r.tie === true ? "tie: card draw" : "",
        cls: r.tie === true ? "tie" : "",
      })),
    );
    const ties = rows.some((r) => r.tie === true);
    setText("standings-note", ties ? "Equal credits: a card draw decides the order (rule 19)." : "");
  }

  function renderHeat() {
    const key = currentHeat();
    const state = key === null ? null : get(`heat/${key}/state`);
    if (key === null) {
      setText("heat-title", "Waiting for the next heat");
      setText("heat-stage", "Slots Reel Tournament");
    } else {
      const label = heatLabel(key, state);
      setText("heat-title", label.name);
      setText("heat-stage", label.stage);
    }
    const phase = isObj(state) ? str(state.state) : "";
    const badge = $("heat-state");
    setText("heat-state", STATE_LABELS[phase] || (phase ? phase : "—"));
    badge.className = `state-badge state-${/^[a-z]+$/.test(phase) ? phase : "none"}`;
    setText("scores-more", "");
    const notShown = renderSeats(key);
    renderStandings(key);
    fitSeats(notShown); // after the standings took their share of the panel
    renderCountdown();
    return key !== null;
  }

  // -- Super 9 ---------------------------------------------------------------------
  function buildGrid() {
    const grid = $("grid");
    const cells = [];
    const zero = el("div", "cell green zero", "0");
    zero.dataset.number = "0";
    cells.push(zero);
    // Table layout: three rows (3, 6 … 36 on top), twelve columns.
    for (let row = 0; row < 3; row += 1) {
      for (let col = 0; col < 12; col += 1) {
        const n = col * 3 + (3 - row);
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
    if (PIN_SESSION) {
      const rec = store.get(`super9/${PIN_SESSION}/draw`);
      return rec ? rec.payload : null;
    }
    let best = null;
    for (const [topic, rec] of store) {
      const parts = topic.split("/");
      if (parts.length !== 3 || parts[0] !== "super9" || parts[2] !== "draw") continue;
      const live = rec.payload.status === "drawing" ? 1 : 0;
      if (best === null || live > best.live || (live === best.live && rec.seq > best.rec.seq)) {
        best = { rec, live };
      }
    }
    return best === null ? null : best.rec.payload;
  }

  function renderSuper9() {
    const draw = currentDraw();
    const pot = get("super9/jackpot");
    let cents = isObj(draw) && isInt(draw.jackpot_cents) ? draw.jackpot_cents : null;
    if (cents === null && isObj(pot) && isInt(pot.jackpot_cents)) cents = pot.jackpot_cents;
    setText("jackpot", fmtRand(cents));
    $("jackpot").dataset.cents = cents === null ? "" : String(cents);

    const called = isObj(draw) && Array.isArray(draw.called)
      ? draw.called.filter((n) => isInt(n) && n >= 0 && n <= 36)
      : [];
    const calledSet = new Set(called);
    const last = isObj(draw) && isObj(draw.last) && isInt(draw.last.number) ? draw.last.number : null;
    for (const cell of $("grid").children) {
      const n = Number(cell.dataset.number);
      cell.classList.toggle("called", calledSet.has(n));
      cell.classList.toggle("last", n === last);
    }

    const ball = $("s9-last");
    setText("s9-last", last === null ? "–" : String(last));
    ball.dataset.number = last === null ? "" : String(last);
    let colour = "none";
    if (last !== null) colour = last === 0 ? "green" : RED.has(last) ? "red" : "black";
    ball.className = `ball ball-${colour}`;

    if (!isObj(draw)) {
      setText("s9-status", "No draw in progress");
      setText("s9-counted", "–");
      setText("s9-window", "");
      setText("s9-extra", "");
      $("s9-winners").hidden = true;
      $("s9-near-block").hidden = true;
      return cents !== null;
    }
    const session = str(draw.session);
    const status = S9_STATUS[str(draw.status)] || str(draw.status);
    setText("s9-status", session ? `Session ${session} · ${status}` : status);
    const counted = isInt(draw.counted_spins) ? draw.counted_spins : 0;
    const span = isInt(draw.jackpot_spins) ? draw.jackpot_spins : 18;
    setText("s9-counted", `${counted} / ${span}`);
    setText(
      "s9-window",
      draw.jackpot_live === false
        ? "Jackpot window closed — playing for the consolation prize (rule 16)"
        : `Jackpot live: all 9 numbers within ${span} spins wins it (rule 14)`,
    );
    $("s9-window").classList.toggle("closed", draw.jackpot_live === false);

    const notes = [];
    const spins = isInt(draw.spins) ? draw.spins : counted;
    if (spins > counted) {
      const r = spins - counted;
      notes.push(`${r} repeated number${r === 1 ? "" : "s"} not counted (rule 19)`);
    }
    const voided = Array.isArray(draw.voided_games) ? draw.voided_games.filter(isInt) : [];
    if (voided.length > 0) {
      notes.push(`No spin: game ${voided.slice(-5).join(", ")} (rule 18.2)`);
    }
    setText("s9-extra", notes.join(" · "));

    const winners = (Array.isArray(draw.completed) ? draw.completed : []).filter(isObj);
    const winList = winners.slice(0, 6).map((w) => {
      const spin = isInt(w.counted) ? w.counted : w.spin;
      return el("li", "", `Ticket ${str(w.ticket)}${isInt(spin) ? ` — spin ${spin}` : ""}`);
    });
    const total = isInt(draw.completed_count) ? draw.completed_count : winners.length;
    if (total > winList.length) winList.push(el("li", "more", `+ ${total - winList.length} more`));
    $("s9-winner-list").replaceChildren(...winList);
    $("s9-winners").hidden = winList.length === 0;

    const near = (Array.isArray(draw.near_complete) ? draw.near_complete : []).filter(isObj);
    const nearList = near.slice(0, 5).map((t) =>
      el("li", "", `Ticket ${str(t.ticket)} — ${isInt(t.to_go) ? t.to_go : "?"} to go`),
    );
    $("s9-near").replaceChildren(...nearList);
    $("s9-near-block").hidden = nearList.length === 0 || winList.length > 0;
    return true;
  }

  // -- page ------------------------------------------------------------------------
  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    window.setTimeout(render, 30); // coalesce a burst (the replay) into one render
  }

  function render() {
    renderQueued = false;
    updateBanner();
    const hasHeat = renderHeat();
    const hasDraw = renderSuper9();
    const showHeat = VIEW !== "super9";
    const showDraw = VIEW !== "heat";
    $("heat").hidden = !showHeat;
    $("super9").hidden = !showDraw;
    // One panel gets the whole screen when only one of them has anything to show.
    const layout = $("layout");
    layout.classList.toggle("solo", !showHeat || !showDraw || hasHeat !== hasDraw);
    if (showHeat && showDraw && hasHeat !== hasDraw) {
      $("heat").hidden = !hasHeat;
      $("super9").hidden = !hasDraw;
    }
  }

  function tick() {
    renderCountdown();
    const now = new Date(Date.now() + skewMs);
    setText("clock-now", now.toLocaleTimeString("en-ZA", { hour: "2-digit", minute: "2-digit" }));
  }

  buildGrid();
  render();
  tick();
  connect();
  window.addEventListener("resize", queueRender);
  window.setInterval(tick, 250);
  window.setInterval(watchdog, 5000);
})();
