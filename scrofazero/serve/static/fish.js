// ScrofaZero Fish tables: one more client of /ws/fish (docs/protocol.md, section "Fish").
// The server decides every rule; this page only shows what it is told and sends asks and calls.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { D: "\u2666", C: "\u2663", H: "\u2665", S: "\u2660" };
const SUIT_WORDS = { D: "diamonds", C: "clubs", H: "hearts", S: "spades" };
const RANK_WORDS = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
const RECENT = 4;  // the moves the table's middle shows, the latest last
const params = new URLSearchParams(location.search);
const S = {
  ws: null, table: null, seat: null, token: null, name: "", info: null, hand: [],
  counts: [], sets: [], score: [0, 0], turn: null, asks: [], mustCall: false, move: 0,
  status: "waiting", over: null, closedByUs: false,
  log: [],  // every asked and called message, in order
  flow: null,  // the ask or call being made: {kind: "ask", card} or {kind: "call", set, holders}
};

function cardText(code) {
  if (code === "*S") return "small joker";
  if (code === "*B") return "big joker";
  const rank = code[1] === "T" ? "10" : code.slice(1);
  return rank + SUITS[code[0]];
}

// A card in words, as a sentence says it: "the 5 of hearts", "the big joker".
function cardWords(code) {
  if (code[0] === "*") return code === "*B" ? "the big joker" : "the small joker";
  return `the ${RANK_WORDS[code[1]] || code[1]} of ${SUIT_WORDS[code[0]]}`;
}

// A seat's name; a name seats share ("random bot") gets a letter by seat order ("random bot
// A", "random bot B"), so that every place names players, never seat numbers.
function who(seat) {
  const players = S.info.players;
  const same = players.filter((p) => p.name === players[seat].name);
  return same.length > 1 ? `${players[seat].name} ${"ABCDEFGH"[same.findIndex((p) => p.seat === seat)]}`
    : players[seat].name;
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
      S.log = [];
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

// A move in one sentence: "Ann asked Bob for the 5 of hearts: no"; a call names the set and,
// with `holders`, whom the caller named for each card.
function moveText(msg, holders = false) {
  let text;
  if (msg.type === "asked") {
    text = `${who(msg.seat)} asked ${who(msg.target)} for ${cardWords(msg.card)}: ${msg.hit ? "yes" : "no"}`;
  } else {
    const named = Object.entries(msg.holders).map(([c, s]) => `${cardText(c)} ${who(s)}`).join(", ");
    text = `${who(msg.seat)} called the ${S.sets[msg.set].name}${holders ? ` (${named})` : ""}: ` +
      `${msg.right ? "right" : "wrong"}, team ${msg.team} gets it`;
  }
  return msg.fallback ? `${text} [${msg.fallback}]` : text;
}

// The history, newest first: each move numbered as the game numbers it.
function logMove(msg) {
  S.log.push(msg);
  $("history").prepend(el("li", { class: msg.type === "called" ? "call" : msg.hit ? "hit" : null },
    el("span", { class: "num" }, String(msg.move)), el("span", {}, moveText(msg, true))));
}

// --- drawing ---------------------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "style") node.style.cssText = value;  // the page's CSP refuses style=""
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

// A card face: rank over suit in the corner, the suit large; `tag` "button" when it is tapped.
function cardFace(code, tag = "span", attrs = {}) {
  const joker = code[0] === "*";
  const red = "DH".includes(code[0]) || code === "*B";
  const rank = joker ? (code === "*B" ? "big" : "small") : (code[1] === "T" ? "10" : code.slice(1));
  return el(tag, { class: `face${red ? " red" : ""}${joker ? " joker" : ""}`, "data-card": code,
    title: cardText(code), ...attrs },
  el("span", { class: "idx" }, rank, el("br"), joker ? "J" : SUITS[code[0]]),
  el("span", { class: "pip" }, joker ? "\u2605" : SUITS[code[0]]));
}

const teamOf = (seat) => seat % 2;
const mates = () => S.info.players.map((p) => p.seat).filter((s) => teamOf(s) === teamOf(S.seat));
const setOf = (code) => S.sets.find((set) => set.cards.includes(code));

function render() {
  if (!S.info) return;
  const n = S.info.num_players;
  const mine = S.turn === S.seat && S.status === "playing";
  if (!mine && S.flow && S.flow.kind === "ask") S.flow = null;
  if (S.flow && S.flow.kind === "call" && S.flow.set !== null && S.sets[S.flow.set].team !== null) {
    S.flow = null;  // called meanwhile by someone else
  }
  if (mine && S.mustCall && !S.flow) S.flow = { kind: "call", set: null, holders: {} };
  $("status").textContent = S.status === "waiting" ? "Waiting for every seat to join"
    : S.status === "finished" || S.turn === null ? "The game is over"  // (or fish_over is on its way)
    : mine ? (S.mustCall ? "Your turn: you must call a set" : "Your turn: ask or call")
    : `${who(S.turn)} to move`;
  $("score-0").textContent = S.score[0];
  $("score-1").textContent = S.score[1];
  renderSeats(n);
  renderLinks();
  renderStep(mine);
  renderWhom();
  renderCallFlow(mine);
  renderHand(mine);
  renderSets();
  renderOver();
}

// Each player at its place around the table (you at the bottom), with its cards' backs and
// their count; the one to move is lit, the ones you may ask are marked while you choose.
function renderSeats(n) {
  const asking = S.flow && S.flow.kind === "ask" ? targetsFor(S.flow.card) : [];
  $("seats").replaceChildren(...Array.from({ length: n }, (_, i) => {
    const p = S.info.players[i];
    const place = (i - S.seat + n) % n;  // 0: you, then clockwise
    const angle = (2 * Math.PI * place) / n;
    const style = `left: ${(50 - 41 * Math.sin(angle)).toFixed(1)}%; top: ${(50 + 38 * Math.cos(angle)).toFixed(1)}%`;
    const cls = [`t${teamOf(i)}`, i === S.turn ? "turn" : "", i === S.seat ? "me" : "",
      p.connected ? "" : "gone", asking.includes(i) ? "askable" : ""].filter(Boolean).join(" ");
    const backs = Array.from({ length: Math.min(S.counts[i], 12) }, () => el("span", { class: "back" }));
    return el("li", { class: cls, style, "data-testid": `fish-seat-${i}`, "data-seat": i,
      onclick: asking.includes(i) ? () => sendAsk(i) : null },
    el("span", { class: "who" }, i === S.seat ? "You" : who(i)),
    el("span", { class: "team-word" }, `team ${teamOf(i)} · ${i === S.seat ? "you" : teamOf(i) === teamOf(S.seat) ? "teammate" : "opponent"}`),
    el("span", { class: "backs" }, backs),
    el("span", { class: "count", title: "cards in hand" },
      el("b", { "data-testid": `fish-count-${i}` }, String(S.counts[i])), S.counts[i] === 1 ? " card" : " cards"));
  }));
  renderRecent();
}

// The last few moves in the table's middle, the latest last and lit: each stays a few moves
// long (seconds at our bots' pace), so it can be read however fast the next one comes.
function renderRecent() {
  const recent = S.log.slice(-RECENT);
  $("recent").replaceChildren(...recent.map((msg, i) => el("li", {
    class: i === recent.length - 1 ? "latest" : null }, moveText(msg))));
  $("recent-none").textContent = recent.length ? "" : S.status === "waiting" ? "" : "No move yet";
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

// What to do now, in one line, and the Call button when a call is allowed.
function renderStep(mine) {
  const playing = S.status === "playing" && S.turn !== null;
  const canCall = playing && (S.info.calls === "any_time" || mine) && S.sets.some((s) => s.team === null);
  $("call").hidden = !canCall || Boolean(S.flow && S.flow.kind === "call");
  $("act").hidden = S.status === "finished";
  let text;
  if (!playing) text = S.status === "waiting" ? "The game starts when every seat is taken." : "";
  else if (S.flow && S.flow.kind === "call") text = S.flow.set === null
    ? (S.mustCall ? "You have no card to ask with: call a set. Which set?" : "Call: which set?")
    : `Call the ${S.sets[S.flow.set].name}: who holds each card?`;
  else if (S.flow && S.flow.kind === "ask") text = `Ask whom for ${cardText(S.flow.card)}?`;
  else if (mine) text = S.asks.length ? "Your turn: tap a dashed card to ask for it, or call a set."
    : "Your turn: no ask is open to you; call a set.";
  else text = `${who(S.turn)} is to move.` + (canCall ? " You may call a set any time." : "");
  $("step").textContent = text;
}

function targetsFor(card) {
  return [...new Set(S.asks.filter(([, c]) => c === card).map(([t]) => t))];
}

// Your hand, fanned by set; on your turn each card you may ask for shows dashed beside its set.
function renderHand(mine) {
  const askable = mine && !(S.flow && S.flow.kind === "call") ? new Set(S.asks.map(([, c]) => c)) : new Set();
  const groups = [];
  for (const set of S.sets) {
    const cards = set.cards.filter((c) => S.hand.includes(c));
    const asks = set.cards.filter((c) => askable.has(c));
    if (!cards.length && !asks.length) continue;
    const chosen = S.flow && S.flow.kind === "ask" ? S.flow.card : null;
    groups.push(el("div", { class: "group", "data-set": set.set, "data-testid": `fish-group-${set.set}` },
      el("div", { class: "fan" }, cards.map((c) => cardFace(c))),
      asks.length ? el("div", { class: "fan asks" }, asks.map((c) => cardFace(c, "button", {
        type: "button", class: `face ask${c === chosen ? " chosen" : ""}${"DH".includes(c[0]) ? " red" : ""}`,
        "data-testid": `fish-ask-card-${c}`, "aria-label": `ask for ${cardText(c)}`,
        onclick: () => { S.flow = { kind: "ask", card: c }; render(); } }))) : null,
      el("span", { class: "set-name" }, `${set.name} · ${cards.length} of ${set.cards.length}`)));
  }
  $("hand").replaceChildren(...(groups.length ? groups : [el("p", { class: "hint" }, "(no cards)")]));
}

// Second step of an ask: the opponents who may be asked for the chosen card.
function renderWhom() {
  const box = $("whom");
  const flow = S.flow && S.flow.kind === "ask" ? S.flow : null;
  box.hidden = !flow;
  if (!flow) { box.replaceChildren(); return; }
  box.replaceChildren(cardFace(flow.card),
    ...targetsFor(flow.card).map((t) => el("button", { type: "button", class: `primary t${teamOf(t)}`,
      "data-testid": `fish-ask-${t}`, onclick: () => sendAsk(t) },
    `Ask ${who(t)}`, el("small", {}, ` · ${S.counts[t]} cards`))),
    el("button", { type: "button", "data-testid": "fish-ask-cancel",
      onclick: () => { S.flow = null; render(); } }, "Cancel"));
}

function sendAsk(target) {
  if (!S.flow || S.flow.kind !== "ask") return;
  send({ type: "ask", target, card: S.flow.card, move: S.move + 1 });
  S.flow = null;
  S.asks = [];  // nothing more to send until the server answers
  render();
}

$("call").onclick = () => { S.flow = { kind: "call", set: null, holders: {} }; render(); };

function held(set) { return set.cards.filter((c) => S.hand.includes(c)).length; }

// A call, step by step: the set (the ones you hold most of first), then a teammate for each
// card you do not hold (your own cards are yours), then Call.
function renderCallFlow(mine) {
  const box = $("call-flow");
  const flow = S.flow && S.flow.kind === "call" ? S.flow : null;
  box.hidden = !flow;
  if (!flow) { box.replaceChildren(); return; }
  const cancel = S.mustCall && mine ? null : el("button", { type: "button", "data-testid": "fish-call-cancel",
    onclick: () => { S.flow = null; render(); } }, "Cancel");
  if (flow.set === null) {
    const uncalled = S.sets.filter((s) => s.team === null).sort((a, b) => held(b) - held(a));
    box.replaceChildren(el("div", { class: "choices" }, uncalled.map((set) => el("button", {
      type: "button", class: held(set) ? "set-choice" : "set-choice none", "data-testid": `fish-call-set-${set.set}`,
      onclick: () => { flow.set = set.set; flow.holders = {}; render(); } },
    el("b", {}, set.name), el("small", {}, ` you hold ${held(set)} of ${set.cards.length}`)))), cancel);
    return;
  }
  const set = S.sets[flow.set];
  const others = mates().filter((s) => s !== S.seat && S.counts[s] > 0);
  const rows = set.cards.map((c) => {
    if (S.hand.includes(c)) flow.holders[c] = S.seat;
    else if (others.length === 1) flow.holders[c] = others[0];
    const mineCard = S.hand.includes(c);
    return el("div", { class: "holder-row" }, cardFace(c),
      mineCard ? el("span", { class: "yours" }, "yours")
        : others.map((s) => el("button", { type: "button", "data-testid": `fish-holder-${c}-${s}`,
          class: flow.holders[c] === s ? "picked" : "", "aria-pressed": String(flow.holders[c] === s),
          onclick: () => { flow.holders[c] = s; render(); } }, who(s))));
  });
  const missing = set.cards.filter((c) => flow.holders[c] === undefined).length;
  box.replaceChildren(el("div", { class: "holders" }, rows),
    el("p", { class: "hint" }, missing ? `${missing} card${missing === 1 ? "" : "s"} still to place. `
      + "A wrong call gives the set to the other team." : "Every card placed."),
    el("div", { class: "row" },
      el("button", { type: "button", class: "primary", "data-testid": "fish-call-send", disabled: missing > 0,
        onclick: () => sendCall(flow) }, `Call the ${set.name}`),
      el("button", { type: "button", "data-testid": "fish-call-back",
        onclick: () => { flow.set = null; render(); } }, "Other set"), cancel));
}

function sendCall(flow) {
  send({ type: "call", set: flow.set, holders: flow.holders, move: S.move + 1 });
  S.flow = null;
  render();
}

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
  const mineTeam = S.seat % 2;
  $("result").textContent = over.winner === null ? `A draw, ${over.score[0]}-${over.score[1]}`
    : over.winner === mineTeam ? `Your team won ${over.score[mineTeam]}-${over.score[1 - mineTeam]}`
    : `Your team lost ${over.score[mineTeam]}-${over.score[1 - mineTeam]}`;
  $("final-0").textContent = over.score[0];
  $("final-1").textContent = over.score[1];
  $("record-link").href = `/fish/record/${over.game_id}`;
  $("json-link").href = `/api/fish/games/${over.game_id}`;
  $("export-link").href = `/api/fish/games/${over.game_id}/export`;
  const seats = [...new Set(over.beliefs.map((b) => b.seat))];
  $("beliefs").hidden = !seats.length;
  const pick = $("belief-seat");
  if (pick.options.length !== seats.length) {
    pick.innerHTML = "";
    for (const s of seats) option(pick, s, who(s));
    pick.onchange = () => { $("belief-move").value = telling(); drawBelief(); };
    $("belief-move").oninput = drawBelief;
    $("belief-move").value = telling();
  }
  drawBelief();
}

// A belief that puts every card it cannot see with every other player alike: before any ask
// tells the players apart (the cards' holders are then as likely as each other).
function isFlat(thought) {
  const ps = thought.cards.map((c) => c.p);
  return !ps.length || Math.max(...ps) - Math.min(...ps) < 0.005;
}

const sure = (thought) => thought.cards.filter((c) => c.p >= 0.5).length;

// The chosen bot's move the table opens on: the one at which it was sure (p >= 0.5) of the
// most cards, ties the earliest. Early beliefs are flat or nearly so, and late ones are sure
// of the few cards left; this moment is where its asks and their answers had taught it most
// at once, and right and wrong guesses both show. When it was never sure of a card: its
// first move whose belief is not flat (its first move if all are).
function telling() {
  const seat = Number($("belief-seat").value);
  const mine = S.over.beliefs.filter((b) => b.seat === seat);
  const best = mine.reduce((at, b, i) => (sure(b) > sure(mine[at]) ? i : at), 0);
  return mine.length && sure(mine[best]) ? best : Math.max(0, mine.findIndex((b) => !isFlat(b)));
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
  const flat = isFlat(thought);
  $("belief-move-text").textContent = `its move at move ${thought.move} of the game: ` +
    (flat ? "no player likelier than another"
      : `${right} of ${thought.cards.length} placed right; ${sure(thought)} given p of 0.5 or more`);
  const note = $("belief-note");
  note.hidden = !flat;
  const p = thought.cards.length ? thought.cards[0].p : 0;
  note.textContent = flat ? `At this move nothing yet told the other players apart for the bot: `
    + `it knew its own hand and how many cards each player held, and no ask had touched these `
    + `cards, so each was as likely with any of the players who could hold it (p = ${p.toFixed(2)}`
    + (p > 0 ? `, 1 in ${Math.round(1 / p)}` : "") + "). Asks and their answers sharpen it: move the slider on." : "";
  for (const c of thought.cards) {
    const tr = document.createElement("tr");
    tr.className = c.seat === c.holder ? "right" : "wrong";
    for (const text of [cardText(c.card), flat ? "any of them" : who(c.seat), c.p.toFixed(2),
      who(c.holder)]) {
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
