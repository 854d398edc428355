// ScrofaZero Fish tables: one more client of /ws/fish (docs/protocol.md, section "Fish").
// The server decides every rule; this page only shows what it is told and sends asks and calls.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { D: "\u2666", C: "\u2663", H: "\u2665", S: "\u2660" };
const params = new URLSearchParams(location.search);
const S = {
  ws: null, table: null, seat: null, token: null, name: "", info: null, hand: [],
  counts: [], sets: [], score: [0, 0], turn: null, asks: [], mustCall: false, move: 0,
  status: "waiting", over: null, closedByUs: false,
};

function cardText(code) {
  if (code === "*S") return "small joker";
  if (code === "*B") return "big joker";
  const rank = code[1] === "T" ? "10" : code.slice(1);
  return rank + SUITS[code[0]];
}

function cardChip(code) {
  const span = document.createElement("span");
  span.className = "card" + ("DH".includes(code[0]) ? " red" : "");
  span.textContent = cardText(code);
  span.dataset.card = code;
  return span;
}

function seatName(seat) {
  const p = S.info && S.info.players[seat];
  return p ? `${p.name} (seat ${seat})` : `seat ${seat}`;
}

function showError(text) {
  $("error-text").textContent = text;
  $("error-banner").hidden = false;
}
$("error-close").onclick = () => { $("error-banner").hidden = true; };

function option(select, value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  select.appendChild(o);
}

// --- making and joining a table --------------------------------------------------------------
async function showCreate() {
  $("create").hidden = false;
  const opts = await (await fetch("/api/fish/options")).json();
  $("calls").value = opts.calls;
  $("bots-about").textContent = opts.bots.map((b) => `${b.kind}: ${b.about}`).join(" · ");
  const redraw = () => {
    const n = Number($("size").value);
    const own = Number($("own-seat").value || 0);
    $("own-seat").innerHTML = "";
    for (let i = 0; i < n; i++) option($("own-seat"), i, `Seat ${i} (team ${i % 2})`);
    $("own-seat").value = String(Math.min(own, n - 1));
    $("kinds").innerHTML = "";
    for (let i = 0; i < n; i++) {
      if (i === Number($("own-seat").value)) continue;
      const label = document.createElement("label");
      label.textContent = `Seat ${i} (team ${i % 2})`;
      const select = document.createElement("select");
      select.dataset.testid = `fish-kind-${i}`;
      select.setAttribute("data-testid", `fish-kind-${i}`);
      select.dataset.seat = i;
      for (const kind of opts.seat_kinds) option(select, kind, kind === "open" ? "open (a person)" : kind);
      select.value = "logic";
      label.appendChild(select);
      $("kinds").appendChild(label);
    }
  };
  $("size").onchange = redraw;
  $("own-seat").onchange = redraw;
  redraw();
  $("create").onsubmit = async (ev) => {
    ev.preventDefault();
    const n = Number($("size").value);
    const own = Number($("own-seat").value);
    const seats = Array.from({ length: n }, () => "open");
    for (const select of $("kinds").querySelectorAll("select")) seats[Number(select.dataset.seat)] = select.value;
    const body = { type: "fish_create", seats, calls: $("calls").value };
    if ($("seed").value !== "") body.seed = Number($("seed").value);
    const resp = await fetch("/api/fish/tables", { method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json" } });
    const made = await resp.json();
    if (!resp.ok) { showError(made.message || "the table was refused"); return; }
    sessionStorage.setItem(`fish:${made.table}`, JSON.stringify({ seat: own, token: made.tokens[own] }));
    S.links = Object.entries(made.tokens).filter(([seat]) => Number(seat) !== own);
    history.replaceState(null, "", `/fish?table=${made.table}&seat=${own}`);
    $("create").hidden = true;
    connect(made.table, own, made.tokens[own], $("create-name").value.trim());
  };
}

function showJoin(table, seat, token) {
  $("join").hidden = false;
  $("join-what").textContent = `Table ${table}, seat ${seat} (team ${seat % 2}).`;
  $("join-name").focus();
  $("join").onsubmit = (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(`fish:${table}`, JSON.stringify({ seat, token }));
    history.replaceState(null, "", `/fish?table=${table}&seat=${seat}`);
    $("join").hidden = true;
    connect(table, seat, token, $("join-name").value.trim());
  };
}

function connect(table, seat, token, name) {
  Object.assign(S, { table, seat, token, name });
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/fish`);
  S.ws = ws;
  ws.onopen = () => send({ type: "fish_join", table, seat, token, ...(name ? { name } : {}) });
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => {
    if (S.over || S.closedByUs) return;
    setTimeout(() => connect(table, seat, token, ""), 1500);  // rejoin where the game stands
  };
}

function send(msg) { S.ws.send(JSON.stringify({ v: 1, ...msg })); }

// --- what the server says --------------------------------------------------------------------
function onMessage(msg) {
  switch (msg.type) {
    case "fish_welcome":
      S.info = msg;
      Object.assign(S, { hand: msg.hand, counts: msg.hand_counts, sets: msg.sets,
        score: msg.score, turn: msg.turn, move: msg.move, status: msg.status, asks: [],
        mustCall: false });
      $("history").innerHTML = "";
      for (const past of msg.history) logMove(past);
      $("game").hidden = false;
      break;
    case "fish_start":
      S.info.players = msg.players;
      Object.assign(S, { status: "playing", turn: msg.turn });
      break;
    case "seat":
      if (S.info) Object.assign(S.info.players[msg.seat], { name: msg.name, connected: msg.connected });
      break;
    case "fish_turn":
      Object.assign(S, { asks: msg.asks, mustCall: msg.must_call, move: msg.move - 1 });
      break;
    case "asked":
      onAsked(msg);
      break;
    case "called":
      onCalled(msg);
      break;
    case "fish_over":
      S.over = msg;
      S.status = "finished";
      S.turn = null;
      S.closedByUs = true;
      S.ws.close();
      break;
    case "error":
      showError(`${msg.code}${msg.rule ? " (" + msg.rule + ")" : ""}: ${msg.message}`);
      if (msg.code === "replaced") S.closedByUs = true;
      break;
    default:
      break;
  }
  render();
}

function onAsked(msg) {
  if (msg.hit && msg.target === S.seat) S.hand = S.hand.filter((c) => c !== msg.card);
  if (msg.hit && msg.seat === S.seat) S.hand = [...S.hand, msg.card];
  Object.assign(S, { counts: msg.hand_counts, turn: msg.turn, move: msg.move, asks: [], mustCall: false });
  logMove(msg);
}

function onCalled(msg) {
  const set = S.sets[msg.set];
  set.team = msg.team;
  S.hand = S.hand.filter((c) => !set.cards.includes(c));
  Object.assign(S, { counts: msg.hand_counts, turn: msg.turn, move: msg.move, score: msg.score,
    asks: [], mustCall: false });
  logMove(msg);
}

function logMove(msg) {
  const li = document.createElement("li");
  if (msg.type === "asked") {
    li.textContent = `${seatName(msg.seat)} asked ${seatName(msg.target)} for ${cardText(msg.card)}: ` +
      (msg.hit ? "got it" : "no");
    li.className = msg.hit ? "hit" : "";
  } else {
    const named = Object.entries(msg.holders).map(([c, s]) => `${cardText(c)}\u2192${s}`).join(", ");
    li.textContent = `${seatName(msg.seat)} called ${S.sets[msg.set].name} (${named}): ` +
      `${msg.right ? "right" : "wrong"}, team ${msg.team} gets it`;
    li.className = "call";
  }
  if (msg.fallback) li.textContent += ` [${msg.fallback}]`;
  $("history").prepend(li);
}

// --- drawing ---------------------------------------------------------------------------------
function render() {
  if (!S.info) return;
  const n = S.info.num_players;
  const mine = S.turn === S.seat && S.status === "playing";
  $("status").textContent = S.status === "waiting" ? "Waiting for every seat to join"
    : S.status === "finished" ? "The game is over"
    : mine ? (S.mustCall ? "Your turn: you must call a set" : "Your turn: ask or call")
    : `${seatName(S.turn)} to move`;
  $("score-0").textContent = S.score[0];
  $("score-1").textContent = S.score[1];
  renderSeats(n);
  renderLinks();
  renderHand();
  renderAsk(mine);
  renderCall(mine);
  renderSets();
  renderOver();
}

function renderSeats(n) {
  $("seats").innerHTML = "";
  for (let i = 0; i < n; i++) {
    const p = S.info.players[i];
    const li = document.createElement("li");
    li.dataset.testid = `fish-seat-${i}`;
    li.setAttribute("data-testid", `fish-seat-${i}`);
    li.className = `t${i % 2}${i === S.turn ? " turn" : ""}${i === S.seat ? " me" : ""}` +
      (p.connected ? "" : " gone");
    li.innerHTML = `<span class="count" title="cards in hand"></span><span class="who"></span>`;
    li.querySelector(".count").textContent = `${S.counts[i]} cards`;
    li.querySelector(".who").textContent = `${i}. ${p.name}${i === S.seat ? " (you)" : ""}`;
    $("seats").appendChild(li);
  }
}

function renderLinks() {
  const open = (S.links || []).filter(() => S.status === "waiting");
  $("links").hidden = !open.length;
  $("links").innerHTML = open.length ? "<h3>Send each person their seat's link</h3>" : "";
  for (const [seat, token] of open) {
    const p = document.createElement("p");
    const url = `${location.origin}/fish?table=${S.table}&seat=${seat}&token=${token}`;
    p.innerHTML = `Seat ${seat}: <code></code>`;
    p.querySelector("code").textContent = url;
    $("links").appendChild(p);
  }
}

function renderHand() {
  $("hand").innerHTML = "";
  for (const set of S.sets) {
    const cards = set.cards.filter((c) => S.hand.includes(c));
    if (!cards.length) continue;
    const div = document.createElement("div");
    div.className = "group";
    div.innerHTML = "<b></b>";
    div.querySelector("b").textContent = set.name;
    for (const c of cards) div.appendChild(cardChip(c));
    $("hand").appendChild(div);
  }
  if (!S.hand.length) $("hand").textContent = "(no cards)";
}

function renderAsk(mine) {
  const target = $("ask-target");
  const card = $("ask-card");
  const targets = [...new Set(S.asks.map(([t]) => t))];
  const keep = target.value;
  target.innerHTML = "";
  for (const t of targets) option(target, t, `${seatName(t)}, ${S.counts[t]} cards`);
  if (targets.map(String).includes(keep)) target.value = keep;
  const fill = () => {
    const was = card.value;
    card.innerHTML = "";
    for (const [t, c] of S.asks) if (String(t) === target.value) option(card, c, cardText(c));
    if ([...card.options].some((o) => o.value === was)) card.value = was;
  };
  target.onchange = fill;
  fill();
  const can = mine && S.asks.length > 0;
  target.disabled = card.disabled = $("ask").disabled = !can;
  $("ask-hint").textContent = can ? "Only the asks the rules allow are listed."
    : mine ? "No ask is legal: call a set." : "You ask on your turn.";
}

$("ask").onclick = () => {
  send({ type: "ask", target: Number($("ask-target").value), card: $("ask-card").value, move: S.move + 1 });
  $("ask").disabled = true;
};

function renderCall(mine) {
  const playing = S.status === "playing";
  const allowed = playing && (S.info.calls === "any_time" || mine);
  const select = $("call-set");
  const keep = select.value;
  const uncalled = S.sets.filter((s) => s.team === null);
  select.innerHTML = "";
  for (const s of uncalled) option(select, s.set, s.name);
  if (uncalled.some((s) => String(s.set) === keep)) select.value = keep;
  else {  // the set you hold most of
    const best = uncalled.slice().sort((a, b) => held(b) - held(a))[0];
    if (best) select.value = best.set;
  }
  select.onchange = () => drawHolders(true);
  drawHolders(false);
  select.disabled = $("call").disabled = !allowed || !uncalled.length;
  $("call-hint").textContent = !playing ? "" : allowed
    ? "Name the teammate holding each card; a wrong call gives the set away."
    : "Calls are made on one's own turn at this table.";
}

function held(set) { return set.cards.filter((c) => S.hand.includes(c)).length; }

function drawHolders(fresh) {
  const box = $("call-holders");
  const set = S.sets[Number($("call-set").value)];
  if (!set) { box.innerHTML = ""; return; }
  if (!fresh && box.dataset.set === String(set.set)) return;
  box.dataset.set = set.set;
  box.innerHTML = "";
  const team = S.info.players.map((p) => p.seat).filter((s) => s % 2 === S.seat % 2);
  for (const c of set.cards) {
    const label = document.createElement("label");
    label.appendChild(cardChip(c));
    const pick = document.createElement("select");
    pick.setAttribute("data-testid", `fish-holder-${c}`);
    pick.dataset.card = c;
    for (const s of team) option(pick, s, s === S.seat ? `me (${s})` : seatName(s));
    pick.value = S.hand.includes(c) ? S.seat : (team.find((s) => s !== S.seat && S.counts[s] > 0) ?? S.seat);
    label.appendChild(pick);
    box.appendChild(label);
  }
}

$("call").onclick = () => {
  const holders = {};
  for (const pick of $("call-holders").querySelectorAll("select")) holders[pick.dataset.card] = Number(pick.value);
  send({ type: "call", set: Number($("call-set").value), holders, move: S.move + 1 });
  $("call").disabled = true;
};

function renderSets() {
  $("sets").innerHTML = "";
  for (const s of S.sets) {
    const li = document.createElement("li");
    li.setAttribute("data-testid", `fish-set-${s.set}`);
    li.innerHTML = "<span></span><span></span>";
    li.firstChild.textContent = s.name;
    li.lastChild.textContent = s.team === null ? "in play" : `team ${s.team}`;
    if (s.team !== null) li.lastChild.className = `team${s.team}`;
    $("sets").appendChild(li);
  }
}

// --- the end ---------------------------------------------------------------------------------
function renderOver() {
  const over = S.over;
  $("over").hidden = !over;
  if (!over) return;
  $("ask-panel").hidden = $("call-panel").hidden = true;
  const mineTeam = S.seat % 2;
  $("result").textContent = over.winner === null ? `A draw, ${over.score[0]}-${over.score[1]}`
    : over.winner === mineTeam ? `Your team won ${over.score[mineTeam]}-${over.score[1 - mineTeam]}`
    : `Your team lost ${over.score[mineTeam]}-${over.score[1 - mineTeam]}`;
  $("final-0").textContent = over.score[0];
  $("final-1").textContent = over.score[1];
  $("replay-link").href = `/api/fish/games/${over.game_id}/replay`;
  $("export-link").href = `/api/fish/games/${over.game_id}/export`;
  const seats = [...new Set(over.beliefs.map((b) => b.seat))];
  $("beliefs").hidden = !seats.length;
  const pick = $("belief-seat");
  if (pick.options.length !== seats.length) {
    pick.innerHTML = "";
    for (const s of seats) option(pick, s, seatName(s));
    pick.onchange = () => { $("belief-move").value = 0; drawBelief(); };
    $("belief-move").oninput = drawBelief;
  }
  drawBelief();
}

function drawBelief() {
  const seat = Number($("belief-seat").value);
  const mine = S.over.beliefs.filter((b) => b.seat === seat);
  const slider = $("belief-move");
  slider.max = Math.max(0, mine.length - 1);
  const thought = mine[Math.min(Number(slider.value), mine.length - 1)];
  const rows = $("belief-rows");
  rows.innerHTML = "";
  if (!thought) return;
  const right = thought.cards.filter((c) => c.seat === c.holder).length;
  $("belief-move-text").textContent = `move ${thought.move} (${thought.kind}): ` +
    `${right} of ${thought.cards.length} placed right`;
  for (const c of thought.cards) {
    const tr = document.createElement("tr");
    tr.className = c.seat === c.holder ? "right" : "wrong";
    for (const text of [cardText(c.card), seatName(c.seat), c.p.toFixed(2), seatName(c.holder)]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    rows.appendChild(tr);
  }
}

// --- start -----------------------------------------------------------------------------------
(function start() {
  const table = params.get("table");
  if (!table) { showCreate(); return; }
  const seat = Number(params.get("seat"));
  const token = params.get("token");
  if (token) { showJoin(table, seat, token); return; }
  const kept = JSON.parse(sessionStorage.getItem(`fish:${table}`) || "null");
  if (kept) connect(table, kept.seat, kept.token, "");
  else showError("This link has no seat token: ask for your seat's link.");
})();
