// The ScrofaZero table page: lobby, a live table over the protocol of docs/protocol.md, the
// "what the AI was thinking" panel and the replay of stored games. Plain JavaScript, no build
// step. The server applies the rules and computes every score; this page only shows them.
'use strict';

(() => {
  // --- cards ---------------------------------------------------------------------------------
  const SUITS = 'SHDC';
  const SUIT_SYMBOL = { S: '\u2660', H: '\u2665', D: '\u2666', C: '\u2663' };
  const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'];
  const POSITIONS = ['bottom', 'left', 'top', 'right']; // seats clockwise from the viewer
  const SESSION_KEY = 'scrofazero.seat';
  const NAME_KEY = 'scrofazero.name';
  const DEVICE_SEATS_KEY = 'scrofazero.seats'; // {table: {seat, token, invites}} kept on this device
  const THOUGHTS_KEY = 'scrofazero.thoughts.';
  const BEEP_KEY = 'scrofazero.beep';
  const PAGE_TITLE = 'ScrofaZero tables';
  const SECTIONS = ['lobby', 'join', 'game', 'replay', 'review'];
  const GATHER_MS = 450; // a finished trick moves to its winner in the last part of its pause

  const suitOf = (code) => code[0];
  const rankOf = (code) => code.slice(1);
  const cardKey = (code) => SUITS.indexOf(suitOf(code)) * 13 + RANKS.indexOf(rankOf(code));
  const sortCards = (codes) => [...codes].sort((a, b) => cardKey(a) - cardKey(b));
  const isRed = (code) => suitOf(code) === 'H' || suitOf(code) === 'D';
  const isScoring = (code) => suitOf(code) === 'H' || code === 'SQ' || code === 'DJ' || code === 'C10';
  const cardLabel = (code) => rankOf(code) + SUIT_SYMBOL[suitOf(code)];

  // The seat that takes a trick of [seat, card] in play order: the highest card of the suit led
  // (docs/rules.md section 2; no trumps).
  function trickWinner(cards) {
    const led = suitOf(cards[0][1]);
    let best = cards[0];
    for (const entry of cards) {
      if (suitOf(entry[1]) === led && RANKS.indexOf(rankOf(entry[1])) > RANKS.indexOf(rankOf(best[1]))) best = entry;
    }
    return best[0];
  }

  // The completed tricks of a history of [seat, card]: {cards, winner}, in order.
  function tricksOf(history) {
    const tricks = [];
    for (let i = 0; i + 4 <= history.length; i += 4) {
      const cards = history.slice(i, i + 4).map(([s, c]) => [s, c]);
      tricks.push({ cards, winner: trickWinner(cards) });
    }
    return tricks;
  }

  // Seat labels that tell seats apart: a name that two seats share gets a tag per seat
  // (`tagOf(seat)`: "left", "seat 3", ...); `own` (the viewer's seat, or null) is "You".
  // `text (seat N)`, unless `text` names the seat already ("Player at seat 2", a shared
  // name's "(seat 2)")
  function withSeat(text, seat) {
    return text.endsWith(`seat ${seat})`) || text.endsWith(`seat ${seat}`) ? text : `${text} (seat ${seat})`;
  }

  // A seat's name as people read it: the server's stand-in for an open seat nobody named
  // ("open seat 2") is "Player at seat 2" once someone sits there (`taken`), else "Open seat".
  function personName(player, taken) {
    if (player.kind !== 'open' || player.name !== `open seat ${player.seat}`) return player.name;
    return taken ? `Player at seat ${player.seat}` : 'Open seat';
  }

  function seatLabels(names, own, tagOf) {
    return names.map((name, seat) => {
      if (seat === own) return 'You';
      const shared = names.some((other, s) => s !== seat && s !== own && other === name);
      return shared ? `${name} (${tagOf(seat)})` : name;
    });
  }

  // --- DOM helpers ---------------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else if (key === 'style') node.style.cssText = value;
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // A card as text (logs, tables): "Q♠" in the suit's colour.
  function cardText(code) {
    return el('span', { class: 'ct' + (isRed(code) ? ' red' : ''), 'data-card': code }, cardLabel(code));
  }

  // A card face; `tag` 'button' for the hand.
  function cardFace(code, opts = {}) {
    const cls = ['card', isRed(code) ? 'red' : 'black', opts.size || ''];
    if (isScoring(code)) cls.push('scoring');
    if (opts.extra) cls.push(opts.extra);
    const node = el(opts.tag || 'span', { class: cls.join(' '), 'data-card': code, title: cardLabel(code),
      ...(opts.attrs || {}) },
    el('span', { class: 'rank' }, rankOf(code),
      el('span', { class: 'pip', 'aria-hidden': 'true' }, SUIT_SYMBOL[suitOf(code)])),
    el('span', { class: 'suit' }, SUIT_SYMBOL[suitOf(code)]));
    return node;
  }

  // A row of overlapping cards (a fan) that never wraps nor grows: each card sits in a slot
  // that shrinks when the row is short of room, the last one whole (style.css `.fan`).
  function fanRow(nodes, cls, testid) {
    const row = el('div', { class: `fan ${cls}`, 'data-testid': testid });
    nodes.forEach((node) => row.append(el('span', { class: 'fan-slot' }, node)));
    return row;
  }

  // A pile's scoring cards, each readable however many there are: one chip per suit with its
  // sign and every rank taken ("♥ 2 5 10 Q A"); the chips wrap onto a second line if they must.
  function pileCards(codes, testid) {
    const row = el('div', { class: 'pile', 'data-testid': testid });
    for (const suit of SUITS) {
      const cards = codes.filter((c) => suitOf(c) === suit);
      if (!cards.length) continue;
      row.append(el('span', { class: `pile-suit ${isRed(cards[0]) ? 'red' : 'black'}` },
        el('span', { class: 'pile-sign', 'aria-hidden': 'true' }, SUIT_SYMBOL[suit]),
        cards.map((c) => el('span', { class: 'pile-rank', 'data-card': c, title: cardLabel(c) }, rankOf(c)))));
    }
    return row;
  }

  // The backs of a hand nobody at the table may see, and how many cards it holds.
  function handBacks(count, seat) {
    const backs = Array.from({ length: count }, () => el('span', { class: 'back' }));
    return el('div', { class: 'seat-hand', 'data-testid': `hand-backs-${seat}`, 'data-count': count },
      fanRow(backs, 'backs', `backs-${seat}`),
      el('span', { class: 'count', 'data-testid': `cards-left-${seat}` }, String(count)),
      el('span', { class: 'count-word' }, count === 1 ? 'card' : 'cards'));
  }

  function cardRow(codes, size, testid) {
    const row = el('div', { class: 'card-row', 'data-testid': testid });
    let suit = null;
    for (const code of codes) {
      if (suit !== null && suitOf(code) !== suit) row.append(el('span', { class: 'suit-gap' }));
      suit = suitOf(code);
      row.append(cardFace(code, { size }));
    }
    return row;
  }

  function fmtClock(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  }

  function showError(text) {
    $('error-text').textContent = text;
    $('error-banner').hidden = false;
  }

  function hideError() {
    $('error-banner').hidden = true;
  }

  // One section of the page at a time; a section newly shown opens at its top (a phone's
  // lobby scrolled down to its button would otherwise open the table far below its seats).
  function showSection(name) {
    const fresh = $(name).hidden;
    for (const id of SECTIONS) $(id).hidden = id !== name;
    $('new-table').hidden = name !== 'game';
    if (fresh) window.scrollTo(0, 0);
  }

  // The server's choices (GET /api/options): the protocol version, the seat kinds and what each
  // bot is, the defaults. Read once, before the first message is sent.
  async function loadOptions() {
    if (!app.options) app.options = await getJSON('/api/options');
    return app.options;
  }

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: 'application/json' } });
    if (!response.ok) throw new Error(`${url}: ${response.status} ${await errorText(response)}`);
    return response.json();
  }

  async function postJSON(url, body) {
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(body),
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' } });
    if (!response.ok) throw new Error(await errorText(response));
    return response.json();
  }

  // The words of an error response: FastAPI's `detail` (a string, or a list of validation
  // errors each with `msg`), or the protocol's {code, message}.
  async function errorText(response) {
    let body;
    try { body = await response.json(); } catch (_) { return response.statusText; }
    const detail = body && body.detail !== undefined ? body.detail : body;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) {
      return detail.map((d) => (d && d.msg ? `${(d.loc || []).slice(1).join('.') || 'request'}: ${d.msg}` : String(d))).join('; ');
    }
    if (detail && detail.message) return detail.code ? `${detail.message} (${detail.code})` : detail.message;
    return response.statusText;
  }

  // --- state ---------------------------------------------------------------------------------
  const app = {
    options: null,
    ws: null,
    wsWanted: false, // reconnect when the socket drops
    reconnectDelay: 1000,
    reconnectTimer: null,
    session: null, // {table, seat, token, invites: {seat: token}}
    creating: null, // the create message waiting for `created`
    queue: [], // messages held back while a completed trick is shown
    holdUntil: 0,
    trickHoldMs: 2000, // a completed trick stays on the table this long (or until a click)
    queueTimer: null,
    joining: false, // a join was sent and no welcome came yet
    game: null,
    thinkingOpen: false,
    replay: null,
  };
  window.scrofazero = app; // for debugging from the console

  function loadSession() {
    try { return JSON.parse(sessionStorage.getItem(SESSION_KEY)); } catch (_) { return null; }
  }

  function saveSession() {
    if (app.session) sessionStorage.setItem(SESSION_KEY, JSON.stringify(app.session));
    else sessionStorage.removeItem(SESSION_KEY);
    if (app.session) keepOnDevice(app.session);
  }

  // The seats this device holds, by table: a new tab (or the same tab after a restart of the
  // browser) finds its token from /?table=T&seat=S without the link. The 20 latest are kept.
  function deviceSeats() {
    try { return JSON.parse(localStorage.getItem(DEVICE_SEATS_KEY)) || {}; } catch (_) { return {}; }
  }

  function keepOnDevice(session) {
    const seats = deviceSeats();
    delete seats[session.table];
    seats[session.table] = { seat: session.seat, token: session.token, invites: session.invites || {} };
    const tables = Object.keys(seats);
    for (const old of tables.slice(0, Math.max(0, tables.length - 20))) delete seats[old];
    try { localStorage.setItem(DEVICE_SEATS_KEY, JSON.stringify(seats)); } catch (_) { /* full */ }
  }

  function newGame(welcome) {
    return {
      table: welcome.table,
      gameId: welcome.game_id,
      seat: welcome.seat,
      status: welcome.status,
      dealNumber: undefined, // told only by game_over: a standard deal's number shows every hand
      firstLeader: welcome.first_leader,
      players: welcome.players.map((p) => ({ ...p })),
      hand: sortCards(welcome.hand || []),
      legal: new Set(),
      turnPly: null,
      pending: false,
      deadlineLocal: null,
      trick: welcome.trick.map(([s, c]) => [s, c]),
      lastTrick: null,
      showLast: false,
      captured: welcome.captured,
      scores: welcome.scores,
      team: welcome.team,
      toMove: null,
      turnSince: null,
      moveDeadline: welcome.move_deadline_s,
      thinkingOn: welcome.thinking,
      liveThinking: welcome.live_thinking,
      openHands: welcome.open_hands || 0, // the first hands on standard deals its creator chose
      plays: {}, // ply -> {seat, card, fallback}
      thoughts: [], // thinking messages in arrival order
      selectedPly: null, // the thought shown; null: the latest
      tricks: tricksOf(welcome.history), // completed tricks of this hand: {cards, winner}
      reviewTrick: null, // the trick shown in the trick list; null: the latest
      over: null,
      log: [],
      match: matchOf(welcome),
      between: null, // hand_over of the hand just played, while the next one has not started
      matchOver: null, // match_over, once the match has ended
      readySent: false,
    };
  }

  // The match fields of a welcome, start, hand_over or match_over (docs/protocol.md
  // "Matches"), over `old`; a server without matches gives a match of one hand. In a welcome
  // `hand` is the seat's cards and the hand's number is `hand_number`.
  function matchOf(msg, old) {
    const m = old || { id: null, hand: 1, hands: 1, target: null, totals: [0, 0], history: [] };
    const number = typeof msg.hand === 'number' ? msg.hand : msg.hand_number;
    const history = msg.match_history ?? (msg.type === 'hand_over' || msg.type === 'match_over' ? msg.history : null);
    return { id: msg.match_id ?? m.id, hand: number ?? m.hand, hands: msg.hands ?? m.hands,
      target: msg.target === undefined ? m.target : msg.target, totals: msg.totals ?? m.totals,
      history: history ?? m.history };
  }

  const isMatch = (g) => g.match.hands > 1;
  const handIsOver = (g) => g.status === 'finished' || g.status === 'between';
  // the hand is over and another may follow: keep the seat (and its socket) for it
  const matchGoesOn = (g) => isMatch(g) && !g.matchOver && g.match.hand < g.match.hands;

  const me = () => (app.game ? app.game.seat : 0);
  const posOf = (seat) => POSITIONS[(seat - me() + 4) % 4];
  const relation = (seat) => ['you', 'left opponent', 'partner', 'right opponent'][(seat - me() + 4) % 4];
  const side = (seat) => ['you', 'left', 'partner', 'right'][(seat - me() + 4) % 4];
  // How the live table names a seat everywhere: "You", a name, or "ScrofaZero (left)" when
  // two seats share the name.
  const label = (seat) => {
    const g = app.game;
    if (!g) return `seat ${seat}`;
    const names = g.players.map((p) => personName(p, p.connected || g.status !== 'waiting'));
    return seatLabels(names, g.seat, side)[seat];
  };
  // "You", else the label with its seat number (once: a shared name's label has a tag already)
  const whoLabel = (seat) => (app.game && seat === app.game.seat ? 'You' : withSeat(label(seat), seat));
  // "You lead" but "Mr. Greed (seat 1) leads"
  const leads = (seat) => `${whoLabel(seat)} ${whoLabel(seat) === 'You' ? 'lead' : 'leads'}`;

  // --- the socket ----------------------------------------------------------------------------
  function wsURL() {
    return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`;
  }

  function connect(then) {
    if (app.ws && app.ws.readyState === WebSocket.OPEN) { then(); return; }
    if (app.ws) { app.ws.onclose = null; try { app.ws.close(); } catch (_) { /* gone */ } }
    const ws = new WebSocket(wsURL());
    app.ws = ws;
    ws.onopen = () => { app.reconnectDelay = 1000; then(); };
    ws.onmessage = (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch (_) { return; }
      onMessage(msg);
    };
    ws.onclose = () => {
      if (app.ws !== ws) return;
      app.ws = null;
      onSocketLost();
    };
  }

  function send(msg) {
    if (!app.ws || app.ws.readyState !== WebSocket.OPEN) {
      showError('Not connected to the server.');
      return false;
    }
    app.ws.send(JSON.stringify({ v: app.options.protocol, ...msg }));
    return true;
  }

  function onSocketLost() {
    const g = app.game;
    if (app.creating) {
      app.creating = null;
      $('create-button').disabled = false;
      showError('The connection to the server closed.');
    }
    if (!app.wsWanted || !app.session) return;
    if (g && (g.matchOver || (handIsOver(g) && !matchGoesOn(g)))) return;
    const delay = app.reconnectDelay;
    app.reconnectDelay = Math.min(app.reconnectDelay * 2, 15000);
    if (g) {
      g.players[g.seat].connected = false;
      g.pending = false;
      g.legal = new Set();
      g.reconnectAt = Date.now() + delay;
      addLog(`Connection lost; reconnecting in ${Math.round(delay / 1000)} s.`, 'warn');
      renderGame();
    }
    clearTimeout(app.reconnectTimer);
    app.reconnectTimer = setTimeout(joinSession, delay);
  }

  function joinSession() {
    const s = app.session;
    if (!s) return;
    app.wsWanted = true;
    const name = localStorage.getItem(NAME_KEY) || '';
    app.joining = true;
    loadOptions().then(
      () => connect(() => send({ type: 'join', table: s.table, seat: s.seat, token: s.token,
        ...(name ? { name } : {}) })),
      (err) => showError(`Cannot read the server's options: ${err.message}`));
  }

  // --- messages ------------------------------------------------------------------------------
  // Messages are handled in order; after a trick's 4th card the next ones wait app.trickHoldMs so
  // a person sees the completed trick (the server does not wait: only the display does). A
  // click on the table or the hand ends the wait at once.
  function onMessage(msg) {
    if (app.queue.length || Date.now() < app.holdUntil) {
      app.queue.push(msg);
      scheduleQueue();
      return;
    }
    dispatch(msg);
  }

  function dispatch(msg) {
    const handler = HANDLERS[msg.type];
    if (handler) handler(msg);
    if (msg.type === 'trick') app.holdUntil = Date.now() + app.trickHoldMs;
  }

  function scheduleQueue() {
    if (app.queueTimer === null) {
      app.queueTimer = setTimeout(drainQueue, Math.max(0, app.holdUntil - Date.now()));
    }
  }

  function endHold() {
    if (Date.now() >= app.holdUntil) return;
    app.holdUntil = 0;
    clearTimeout(app.queueTimer);
    drainQueue();
  }

  function drainQueue() {
    app.queueTimer = null;
    while (app.queue.length) {
      if (Date.now() < app.holdUntil) { scheduleQueue(); return; }
      dispatch(app.queue.shift());
    }
  }

  const HANDLERS = {
    created(msg) {
      const create = app.creating;
      app.creating = null;
      if (!create) return;
      const seat = create.ownSeat;
      const invites = {};
      for (const [s, token] of Object.entries(msg.tokens)) if (Number(s) !== seat) invites[s] = token;
      app.session = { table: msg.table, seat, token: msg.tokens[String(seat)], invites };
      saveSession();
      history.replaceState(null, '', `/?table=${encodeURIComponent(msg.table)}&seat=${seat}`);
      joinSession();
    },

    welcome(msg) {
      if (msg.seat === null || msg.seat === undefined) return; // watching is not used by the page
      app.joining = false;
      const old = app.game && app.game.table === msg.table ? app.game : null;
      const g = newGame(msg);
      const sameHand = old && old.gameId === msg.game_id;
      g.thoughts = sameHand ? old.thoughts : loadThoughts(msg.table, msg.game_id);
      g.selectedPly = sameHand ? old.selectedPly : null;
      g.reviewTrick = sameHand ? old.reviewTrick : null;
      if (old) g.log = old.log;
      app.game = g;
      app.reconnectDelay = 1000;
      hideError();
      msg.history.forEach(([seat, card], i) => { g.plays[i + 1] = { seat, card, fallback: null }; });
      if (g.tricks.length && msg.history.length % 4 === 0) {
        g.lastTrick = g.tricks[g.tricks.length - 1];
        g.showLast = g.trick.length === 0;
      }
      if (g.status === 'playing') {
        g.toMove = (msg.leader + g.trick.length) % 4;
      } else if (handIsOver(g)) {
        g.over = { scores: msg.scores, team: msg.team, returns: msg.returns, game_id: msg.game_id };
        // rejoined between two hands: ready or not, the start time is told only by hand_over
        if (g.status === 'between') g.between = { nextAt: null, ready: new Set() };
      }
      if (sameHand) {
        addLog('Rejoined the table.');
      } else if (old) {
        addLog(`Hand ${g.match.hand} of ${g.match.hands} (game ${msg.game_id}).`, 'score');
      } else {
        // a fresh page (or a reload): the log of the hand so far, rebuilt from its history
        $('log').replaceChildren();
        addLog(`Joined table ${msg.table} at seat ${msg.seat} (game ${msg.game_id}`
          + (isMatch(g) ? `, hand ${g.match.hand} of ${g.match.hands}).` : ').'));
        logHistory(g, msg.history);
      }
      showSection('game');
      guardBack();
      renderGame();
    },

    seat(msg) {
      const g = app.game;
      if (!g) return;
      const p = g.players[msg.seat];
      const was = p.connected;
      p.name = msg.name;
      p.connected = msg.connected;
      if (was !== msg.connected && msg.seat !== g.seat) {
        addLog(`${whoLabel(msg.seat)} ${msg.connected ? 'connected' : 'disconnected'}.`,
          msg.connected ? '' : 'warn');
      }
      renderGame();
    },

    start(msg) {
      const g = app.game;
      if (!g) return;
      g.status = 'playing';
      g.players = msg.players.map((p) => ({ ...p }));
      g.toMove = msg.first_leader;
      g.turnSince = Date.now();
      g.match = matchOf(msg, g.match);
      g.between = null;
      g.review = null;
      addLog(`The hand starts; ${leads(msg.first_leader)}.`);
      renderGame();
    },

    your_turn(msg) {
      const g = app.game;
      if (!g) return;
      g.legal = new Set(msg.legal);
      g.turnPly = msg.ply;
      g.pending = false;
      g.toMove = g.seat;
      beep();
      let remaining = msg.deadline - Date.now() / 1000;
      if (!(remaining > -5 && remaining < msg.timeout_s + 5)) remaining = msg.timeout_s; // clocks differ
      g.deadlineLocal = Date.now() + remaining * 1000;
      renderGame();
      keepHandClear();
    },

    played(msg) {
      const g = app.game;
      if (!g) return;
      g.plays[msg.ply] = { seat: msg.seat, card: msg.card, fallback: msg.fallback };
      if (g.trick.length >= 4) g.trick = [];
      g.showLast = false;
      g.trick.push([msg.seat, msg.card]);
      if (msg.seat === g.seat) {
        g.hand = g.hand.filter((c) => c !== msg.card);
        g.legal = new Set();
        g.turnPly = null;
        g.pending = false;
        g.deadlineLocal = null;
      }
      g.toMove = g.trick.length < 4 ? (msg.seat + 1) % 4 : null;
      g.turnSince = Date.now();
      logPlay(msg.ply, msg.seat, msg.card, msg.fallback);
      renderGame();
    },

    thinking(msg) {
      const g = app.game;
      if (!g) return;
      g.thoughts = g.thoughts.filter((t) => t.ply !== msg.ply);
      g.thoughts.push(msg);
      saveThoughts();
      renderThinking();
    },

    trick(msg) {
      const g = app.game;
      if (!g) return;
      g.lastTrick = { cards: g.trick.map(([s, c]) => [s, c]), winner: msg.winner };
      g.tricks.push(g.lastTrick);
      g.trick = [];
      g.showLast = true;
      g.captured = msg.captured;
      g.scores = msg.scores;
      g.team = msg.team;
      g.toMove = msg.winner;
      g.turnSince = Date.now();
      logTrick(g.lastTrick);
      renderGame();
    },

    game_over(msg) {
      const g = app.game;
      if (!g) return;
      g.status = 'finished';
      g.over = msg;
      // null here may mean "told when the match is over": match_over's deal_numbers settle it
      if (msg.deal_number !== null) g.dealNumber = msg.deal_number;
      for (const t of msg.thinking) { // held back until the end unless the table shows it live
        g.thoughts = g.thoughts.filter((old) => old.ply !== t.ply);
        g.thoughts.push(t);
      }
      if (msg.thinking.length) saveThoughts();
      g.scores = msg.scores;
      g.team = msg.team;
      g.toMove = null;
      g.legal = new Set();
      g.turnPly = null;
      g.match = matchOf(msg, g.match);
      addLog('The hand is over.', 'score');
      renderGame();
      renderThinking();
      loadGames();
    },

    hand_over(msg) {
      const g = app.game;
      if (!g) return;
      g.status = 'between';
      g.match = matchOf(msg, g.match);
      g.between = { nextAt: Math.max(Date.now(), msg.next_hand_at * 1000), ready: new Set(msg.ready) };
      g.readySent = false;
      const [mine, theirs] = g.seat % 2 === 0 ? msg.totals : [msg.totals[1], msg.totals[0]];
      addLog(`After hand ${msg.hand} of ${msg.hands}: your team ${mine}, the opponents ${theirs}.`, 'score');
      renderGame();
    },

    ready(msg) {
      const g = app.game;
      if (!g || !g.between) return;
      g.between.ready.add(msg.seat);
      renderSummary();
    },

    match_over(msg) {
      const g = app.game;
      if (!g) return;
      g.match = matchOf(msg, g.match);
      g.matchOver = msg;
      g.between = null;
      const numbers = msg.deal_numbers ?? [];
      if (numbers.length) g.dealNumber = numbers[numbers.length - 1];
      g.status = 'finished';
      if (isMatch(g)) addLog(`The match is over: ${matchVerdict(g)}`, 'score');
      app.wsWanted = false;
      renderGame();
    },

    error(msg) {
      const g = app.game;
      showError(`${msg.message} (${msg.code})`);
      if (g) addLog(`Refused: ${msg.message} (${msg.code})`, 'error');
      if (app.creating) {
        app.creating = null;
        $('create-button').disabled = false;
        return;
      }
      if (['unknown_table', 'bad_token', 'unknown_seat'].includes(msg.code) && app.joining) {
        // the seat we tried to (re)join is not there: back to the lobby
        app.wsWanted = false;
        app.joining = false;
        app.session = null;
        saveSession();
        app.game = null;
        history.replaceState(null, '', '/');
        showLobby();
        showError(`${msg.message} (${msg.code})`);
        return;
      }
      if (msg.code === 'replaced') {
        // inert: no clock, no card to click, no reconnecting; it says so where the turn shows
        app.wsWanted = false;
        clearTimeout(app.reconnectTimer);
        if (app.ws) { const ws = app.ws; app.ws = null; ws.onclose = null; ws.close(); }
        if (g) { g.replaced = true; g.legal = new Set(); g.turnPly = null; g.pending = false; g.turnSince = null; }
        showError('This seat was opened in another window or tab; this one has stopped playing. Reload to take it back.');
      }
      if (g && g.pending) {
        g.pending = false;
        if (msg.code !== 'illegal_card') { g.legal = new Set(); g.turnPly = null; }
      }
      if (g) renderGame();
    },

    pong() {},
  };

  // --- thinking kept across reloads ----------------------------------------------------------
  // kept per table, for its latest hand only
  function loadThoughts(table, gameId) {
    try {
      const kept = JSON.parse(sessionStorage.getItem(THOUGHTS_KEY + table));
      return kept && kept.game === gameId ? kept.thoughts : [];
    } catch (_) { return []; }
  }

  function saveThoughts() {
    const g = app.game;
    try {
      sessionStorage.setItem(THOUGHTS_KEY + g.table, JSON.stringify({ game: g.gameId, thoughts: g.thoughts }));
    } catch (_) { /* full */ }
  }

  // --- the live table ------------------------------------------------------------------------
  function addLog(content, kind = '') {
    const g = app.game;
    if (!g) return;
    const item = el('li', { class: kind }, content);
    g.log.push(item);
    const list = $('log');
    list.append(item);
    while (list.children.length > 300) list.firstChild.remove();
    list.scrollTop = list.scrollHeight;
  }

  function cardList(codes) {
    return codes.flatMap((c, i) => (i ? [' ', cardText(c)] : [cardText(c)]));
  }

  function logPlay(ply, seat, card, fallback) {
    const why = fallback ? ` (played for the seat: ${fallback})` : '';
    addLog([`${ply}. ${label(seat)} played `, cardText(card), why], fallback ? 'warn' : '');
  }

  function logTrick(trick) {
    const gained = trick.cards.map(([, c]) => c).filter(isScoring);
    const you = trick.winner === app.game.seat;
    addLog([`${label(trick.winner)} ${you ? 'win' : 'wins'} the trick`,
      gained.length ? [` and ${you ? 'take' : 'takes'} `, ...cardList(gained)] : '', '.'],
    gained.length ? 'score' : 'quiet');
  }

  // The log of a hand rebuilt from its history (a reload): the same lines as when it was
  // played, less who connected when and why a card was played for a seat.
  function logHistory(g, history) {
    if (g.status === 'waiting') return;
    addLog(`The hand starts; ${leads(g.firstLeader)}.`);
    history.forEach(([seat, card], i) => {
      logPlay(i + 1, seat, card, null);
      if ((i + 1) % 4 === 0) logTrick(g.tricks[(i + 1) / 4 - 1]);
    });
    if (handIsOver(g)) addLog('The hand is over.', 'score');
  }

  function playCard(code) {
    const g = app.game;
    if (!g || g.pending || g.turnPly === null || !g.legal.has(code)) return; // dimmed: nothing
    if (send({ type: 'play', card: code, ply: g.turnPly })) {
      g.pending = true;
      renderHand();
      renderTurn();
    }
  }

  function seatBox(seat) {
    const g = app.game;
    const p = g.players[seat];
    const classes = ['seat-box'];
    if (seat === g.seat) classes.push('me');
    if (g.status === 'playing' && g.toMove === seat) classes.push('to-move');
    const captured = sortCards(g.captured[seat] || []);
    return el('div', { class: classes.join(' '), 'data-testid': `seat-${seat}`, 'data-seat': seat },
      el('div', { class: 'seat-head' },
        el('span', { class: `dot ${p.connected ? 'on' : 'off'}`, 'data-testid': `connected-${seat}`,
          'data-connected': String(p.connected), title: p.connected ? 'connected' : 'not connected' }),
        el('span', { class: 'seat-name', 'data-testid': `seat-name-${seat}` }, label(seat)),
        seat === g.seat ? null : el('span', { class: 'seat-tag' }, relation(seat))),
      seat === g.seat ? null : handBacks(cardsLeft(seat), seat),
      el('div', { class: 'seat-score' },
        el('span', { class: 'pile-word' }, 'pile '),
        el('span', { class: 'num', 'data-testid': `pile-score-${seat}` }, String(g.scores[seat])),
        captured.length ? pileCards(captured, `captured-${seat}`)
          : el('span', { class: 'captured empty', 'data-testid': `captured-${seat}` }, 'no scoring cards')));
  }

  // The cards a seat still holds: 13 less one per completed trick and its card in this one.
  function cardsLeft(seat) {
    const g = app.game;
    if (seat === g.seat) return g.hand.length;
    const inTrick = g.trick.some(([s]) => s === seat) ? 1 : 0; // emptied by the trick message
    return Math.max(0, 13 - g.tricks.length - inTrick);
  }

  function renderSeats() {
    const g = app.game;
    for (let seat = 0; seat < 4; seat++) {
      const slot = $(`slot-${posOf(seat)}`);
      slot.replaceChildren(seatBox(seat));
    }
    $('team-score-0').textContent = String(g.team[0]);
    $('team-score-1').textContent = String(g.team[1]);
    renderScoreStrip();
    const short = (s) => (s === g.seat ? 'you' : label(s));
    for (const t of [0, 1]) {
      const mine = t === g.seat % 2;
      $(`team-label-${t}`).replaceChildren(el('div', {}, mine ? 'You + partner' : 'Opponents'),
        el('div', { class: 'hint' }, `seats ${t} + ${t + 2}: ${short(t)}, ${short(t + 2)}`));
      $(`team-label-${t}`).parentElement.classList.toggle('mine', mine);
    }
    $('table-info').textContent = `Table ${g.table} · game ${g.gameId} · `
      + (g.dealNumber === undefined ? `deal told at the end of the ${isMatch(g) ? 'match' : 'hand'}`
        : g.dealNumber === null ? 'random deal' : `standard deal ${g.dealNumber}`)
      + (g.openHands ? ` · an ${openDealText(g.openHands)}` : '');
  }

  // The trick on the table. A card already there is kept (a re-render must not restart its
  // move); with `animate` a new card slides in from its seat's side (style.css `.from-*`).
  // The team scores in a line above the table: a phone shows the side panels only far below.
  function renderScoreStrip() {
    const g = app.game;
    const mine = g.seat % 2;
    $('score-strip').replaceChildren(
      el('span', { class: 'mine' }, 'You + partner ', el('b', { 'data-testid': 'strip-score-mine' }, String(g.team[mine]))),
      el('span', {}, 'Opponents ', el('b', { 'data-testid': 'strip-score-theirs' }, String(g.team[1 - mine]))));
  }

  function fillTrick(area, note, cards, winner, nameFn, posFn, highlight, animate = false) {
    const slots = {};
    for (const node of area.querySelectorAll('.trick-card')) {
      slots[[...node.classList].find((c) => c.startsWith('pos-')).slice(4)] = node;
    }
    const wanted = {};
    cards.forEach(([seat, code], i) => { wanted[posFn(seat)] = { seat, code, i }; });
    for (const [pos, slot] of Object.entries(slots)) {
      const want = wanted[pos];
      const face = slot.querySelector('[data-card]');
      slot.classList.remove('winner', 'latest');
      if (!want) { slot.replaceChildren(); continue; }
      if (!face || face.dataset.card !== want.code) {
        const card = cardFace(want.code, { size: 'table' });
        slot.replaceChildren(card, el('span', { class: 'trick-name' }, nameFn(want.seat)));
        if (animate) slideIn(card, pos);
      } else {
        slot.querySelector('.trick-name').textContent = nameFn(want.seat);
      }
      if (want.seat === winner) slot.classList.add('winner');
      if (highlight && want.i === cards.length - 1) slot.classList.add('latest');
    }
    note.textContent = winner === null || winner === undefined ? '' : `${nameFn(winner)} ${nameFn(winner) === 'You' ? 'win' : 'wins'} the trick`;
    area.dataset.cards = cards.map(([, c]) => c).join(' ');
    if (winner === null || winner === undefined) setGather(area, null);
  }

  // A card played: it starts at its seat's side of the table and moves to its place (a CSS
  // transition, none when the person asks the system for reduced motion).
  function slideIn(card, pos) {
    card.classList.add('from-' + pos);
    card.getBoundingClientRect(); // the start position is laid out before it is left
    requestAnimationFrame(() => card.classList.remove('from-' + pos));
  }

  // A completed trick, once seen, gathers toward its winner's side.
  function setGather(area, pos) {
    for (const cls of [...area.classList]) if (cls.startsWith('gather')) area.classList.remove(cls);
    if (pos) area.classList.add('gather', 'gather-' + pos);
  }

  function renderTrick() {
    const g = app.game;
    const area = $('trick-area');
    if (g.trick.length === 0 && g.showLast && g.lastTrick) {
      fillTrick(area, $('trick-note'), g.lastTrick.cards, g.lastTrick.winner, label, posOf, false, true);
      scheduleGather(g.lastTrick);
    } else {
      fillTrick(area, $('trick-note'), g.trick, null, label, posOf, true, true);
    }
    renderTrickList();
  }

  // The trick stays whole for most of the pause that shows it, then moves to its winner; not
  // after the last trick (the table keeps it in view) nor without a pause.
  function scheduleGather(trick) {
    const g = app.game;
    if (app.gatherFor === trick) return;
    app.gatherFor = trick;
    if (app.trickHoldMs <= 0 || g.tricks.length >= 13) return;
    setTimeout(() => {
      const now = app.game;
      if (now && now.showLast && now.lastTrick === trick && now.trick.length === 0) {
        setGather($('trick-area'), posOf(trick.winner));
      }
    }, Math.max(0, app.trickHoldMs - GATHER_MS));
  }

  // Every completed trick of the hand, one at a time: the latest unless the player steps back.
  function renderTrickList() {
    const g = app.game;
    const n = g.tricks.length;
    const box = $('last-trick');
    $('trick-review-prev').disabled = true;
    $('trick-review-next').disabled = true;
    if (!n) {
      $('trick-review-label').textContent = '';
      box.replaceChildren(el('span', { class: 'hint' }, 'none yet'));
      return;
    }
    const i = g.reviewTrick === null ? n - 1 : Math.min(g.reviewTrick, n - 1);
    const trick = g.tricks[i];
    $('trick-review-prev').disabled = i === 0;
    $('trick-review-next').disabled = i === n - 1;
    const head = $('trick-review-label');
    head.textContent = `Trick ${i + 1} of ${n}`;
    head.dataset.index = String(i + 1);
    const gained = trick.cards.map(([, c]) => c).filter(isScoring);
    box.dataset.winner = String(trick.winner);
    box.replaceChildren(
      ...trick.cards.map(([s, c]) => el('span', { class: 'last-card' + (s === trick.winner ? ' winner' : ''),
        'data-seat': s }, cardText(c), el('span', { class: 'hint' }, ` ${label(s)}`))),
      el('p', { class: 'hint trick-review-note' }, `${label(trick.winner)} ${trick.winner === g.seat ? 'take' : 'takes'} it`,
        gained.length ? [': ', ...cardList(gained)] : ' (no scoring card)', '.'));
  }

  function stepTrick(delta) {
    const g = app.game;
    if (!g || !g.tricks.length) return;
    const n = g.tricks.length;
    const i = Math.max(0, Math.min(n - 1, (g.reviewTrick === null ? n - 1 : g.reviewTrick) + delta));
    g.reviewTrick = i === n - 1 ? null : i;
    renderTrickList();
  }

  function renderHand() {
    const g = app.game;
    const hand = $('hand');
    const active = g.turnPly !== null && !g.pending && g.status === 'playing' && !g.replaced;
    const signature = JSON.stringify([g.hand, active ? [...g.legal] : []]);
    if (hand.dataset.signature === signature) return;
    hand.dataset.signature = signature;
    hand.classList.toggle('active', active);
    hand.replaceChildren();
    let suit = null;
    const middle = (g.hand.length - 1) / 2;
    g.hand.forEach((code, i) => {
      const enabled = active && g.legal.has(code);
      const cls = [enabled ? 'legal' : 'dim'];
      if (suit !== null && suitOf(code) !== suit) cls.push('suit-start');
      suit = suitOf(code);
      // its place in the fan: a slight turn and drop away from the middle
      const fan = i - middle;
      const button = cardFace(code, { tag: 'button', size: 'big', extra: cls.join(' '),
        attrs: { type: 'button', 'data-testid': 'hand-card', 'data-suit': suitOf(code), disabled: !enabled,
          style: `--fan: ${fan}; --fan2: ${fan * fan}`,
          'aria-label': `${rankOf(code)} of ${{ S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs' }[suitOf(code)]}` } });
      button.addEventListener('click', () => playCard(code));
      hand.append(button);
    });
    if (!g.hand.length) hand.append(el('span', { class: 'hint' }, 'no cards left'));
  }

  function renderTurn() {
    const g = app.game;
    if (!g) return;
    const line = $('turn-line');
    let text;
    let cls = '';
    if (g.replaced) {
      text = 'This seat is now played in another tab or window; this one has stopped. Reload to take it back.';
      cls = 'warn';
    } else if (g.reconnectAt && !g.players[g.seat].connected) {
      text = `Connection lost; reconnecting in ${fmtClock((g.reconnectAt - Date.now()) / 1000)}…`;
      cls = 'warn';
    } else if (g.status === 'waiting') {
      const missing = g.players.filter((p) => !p.connected)
        .map((p) => (personName(p, false) === 'Open seat' ? `seat ${p.seat}` : whoLabel(p.seat)));
      text = `Waiting for ${missing.join(', ') || 'the hand to start'} to join…`;
    } else if (handIsOver(g)) {
      text = 'The hand is over.';
    } else if (g.toMove === g.seat && g.turnPly !== null) {
      if (g.pending) {
        text = 'Sent…';
      } else {
        const left = (g.deadlineLocal - Date.now()) / 1000;
        text = `Your turn: play a highlighted card · ${fmtClock(left)} left`;
        cls = left < 15 ? 'mine urgent' : 'mine';
      }
    } else if (g.toMove !== null && g.toMove !== undefined) {
      text = `${whoLabel(g.toMove)} to play`;
      if (g.turnSince) text += ` · ${fmtClock(g.moveDeadline - (Date.now() - g.turnSince) / 1000)} left`;
    } else {
      text = '';
    }
    line.textContent = text;
    line.className = `turn-line ${cls}`;
    const mine = g.status === 'playing' && g.toMove === g.seat && g.turnPly !== null && !g.pending;
    const title = mine ? `Your turn - ${PAGE_TITLE}` : `Table ${g.table} - ${PAGE_TITLE}`;
    if (document.title !== title) document.title = title;
    if (g.between) renderNextLine();
  }

  // On a phone the score line stays at the top of the screen as the page scrolls: on your turn
  // a hand it covers is scrolled just clear of it.
  function keepHandClear() {
    const strip = $('score-strip');
    if (getComputedStyle(strip).position !== 'sticky') return;
    const bar = strip.getBoundingClientRect();
    const hand = $('hand').getBoundingClientRect();
    if (hand.top < bar.bottom && hand.bottom > bar.top) window.scrollBy(0, hand.top - bar.bottom - 8);
  }

  // A short beep when it becomes your turn, if the player ticked the box (off by default).
  function beep() {
    if (!$('beep').checked) return;
    try {
      app.audio = app.audio || new AudioContext();
      const tone = app.audio.createOscillator();
      const gain = app.audio.createGain();
      tone.frequency.value = 660;
      gain.gain.setValueAtTime(0.15, app.audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, app.audio.currentTime + 0.25);
      tone.connect(gain).connect(app.audio.destination);
      tone.start();
      tone.stop(app.audio.currentTime + 0.25);
    } catch (_) { /* no audio here */ }
  }

  function renderInvites() {
    const s = app.session;
    const g = app.game;
    const entries = s && g && s.table === g.table ? Object.entries(s.invites || {}) : [];
    $('invites').hidden = !(s && g && s.table === g.table);
    $('invite-hint').hidden = entries.length === 0;
    const ownUrl = s ? `${location.origin}/?table=${encodeURIComponent(s.table)}&seat=${s.seat}&token=${encodeURIComponent(s.token)}` : '';
    $('own-seat-link').replaceChildren(...(s ? [el('b', {}, `Your seat ${s.seat}`), ': ',
      el('a', { href: ownUrl, 'data-testid': 'own-seat-link', class: 'invite-link' }, ownUrl), ' ',
      el('button', { type: 'button', class: 'small', onclick: () => copyText(ownUrl) }, 'copy link'),
      el('div', { class: 'hint' }, 'Your way back to this seat from another tab or device (this device remembers it); keep it to yourself.')] : []));
    $('invite-list').replaceChildren(...entries.map(([seat, token]) => {
      const url = `${location.origin}/?table=${encodeURIComponent(s.table)}&seat=${seat}&token=${encodeURIComponent(token)}`;
      const joined = g.players[seat] && g.players[seat].connected;
      return el('li', { 'data-testid': `invite-${seat}` },
        el('div', {}, el('b', {}, `Seat ${seat}`), ` · ${relation(Number(seat))} · `,
          el('span', { class: joined ? 'ok' : 'hint' }, joined ? 'joined' : 'not joined yet')),
        el('a', { href: url, target: '_blank', rel: 'noopener', 'data-testid': `invite-link-${seat}`,
          class: 'invite-link' }, url),
        el('div', { class: 'hint' }, 'token ', el('code', {}, token), ' ',
          el('button', { type: 'button', class: 'small', onclick: () => copyText(url) }, 'copy link')));
    }));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).catch(() => window.prompt('Copy the link:', text));
    } else {
      window.prompt('Copy the link:', text);
    }
  }

  function renderSummary() {
    const g = app.game;
    const box = $('summary');
    if (!g.over) { box.hidden = true; box.replaceChildren(); return; }
    const o = g.over;
    const rows = [0, 1, 2, 3].map((seat) => el('tr', { class: seat % 2 === g.seat % 2 ? 'mine' : '' },
      el('td', {}, String(seat)),
      el('td', {}, label(seat)),
      el('td', { class: 'num', 'data-testid': `summary-score-${seat}` }, String(o.scores[seat])),
      el('td', {}, cardRow(sortCards(g.captured[seat] || []), 'mini', `summary-captured-${seat}`)),
      el('td', { class: 'num', 'data-testid': `summary-return-${seat}` },
        o.returns ? String(o.returns[seat]) : '—')));
    let verdict = '';
    if (o.returns) {
      const r = o.returns[g.seat];
      verdict = r > 0 ? `Your team wins by ${r}.` : r < 0 ? `Your team loses by ${-r}.` : 'A draw.';
    }
    const gameId = o.game_id === undefined ? g.gameId : o.game_id;
    const matchId = g.match.id;
    box.replaceChildren(...[
      el('h2', {}, isMatch(g) ? `Hand ${g.match.hand} of ${g.match.hands} is over` : 'The hand is over'),
      verdict ? el('p', { class: 'verdict', 'data-testid': 'verdict' }, verdict) : null,
      g.matchOver && isMatch(g) ? el('p', { class: 'match-result', 'data-testid': 'match-result' }, matchVerdict(g)) : null,
      isMatch(g) && !g.matchOver ? el('div', { class: 'next-line', id: 'next-line' }) : null,
      el('table', { class: 'summary-table', 'data-testid': 'summary-table' },
        el('thead', {}, el('tr', {}, el('th', {}, 'seat'), el('th', {}, 'player'), el('th', { class: 'num' }, 'pile score'),
          el('th', {}, 'scoring cards'), el('th', { class: 'num', title: 'the seat\'s team points less the other team\'s' }, 'result'))),
        el('tbody', {}, rows)),
      el('p', { class: 'teams' },
        'Seats 0 + 2: ', el('b', { 'data-testid': 'summary-team-0' }, String(o.team[0])),
        ' · Seats 1 + 3: ', el('b', { 'data-testid': 'summary-team-1' }, String(o.team[1]))),
      el('p', { class: 'links' },
        el('a', { href: `/?replay=${gameId}`, 'data-testid': 'replay-link' }, 'Replay this hand'), ' · ',
        el('a', { href: `/api/games/${gameId}/export`, 'data-testid': 'export-link', target: '_blank' },
          'Export as text'), ' · ',
        isMatch(g) && matchId !== null ? [el('a', { href: `/?match=${matchId}`, 'data-testid': 'match-replay-link' },
          'Replay the match'), ' · '] : null,
        el('button', { type: 'button', class: g.between ? '' : 'primary', onclick: leaveTable }, 'Open a new table')),
      el('p', { class: 'review-ask' },
        el('button', { type: 'button', 'data-testid': 'review-button', disabled: Boolean(g.review),
          onclick: () => askReview(gameId) }, g.review ? 'Review asked for: see below' : 'Review my moves'),
        el('span', { class: 'hint' }, ' the AI as a coach: what it finds for each card you could have played')),
    ].filter((part) => part !== null)); // replaceChildren writes a null as the text "null"
    box.dataset.gameId = String(gameId);
    box.hidden = false;
    if (g.between || (isMatch(g) && !g.matchOver)) renderNextLine();
  }

  // Between two hands of a match: the "Next hand" button, who is ready, when it starts anyway.
  function renderNextLine() {
    const g = app.game;
    const line = $('next-line');
    if (!line) return;
    if (!g.between) {
      line.replaceChildren(el('span', { class: 'hint' }, 'The next hand starts when every seat is ready.'));
      return;
    }
    const ready = [...g.between.ready].sort();
    const left = g.between.nextAt === null ? null : fmtClock((g.between.nextAt - Date.now()) / 1000);
    const mineReady = g.readySent || g.between.ready.has(g.seat);
    const signature = JSON.stringify([ready, left, mineReady]);
    if (line.dataset.signature === signature) return;
    line.dataset.signature = signature;
    line.replaceChildren(
      el('button', { type: 'button', class: 'primary', 'data-testid': 'next-hand', disabled: mineReady,
        onclick: sendNext }, mineReady ? 'Ready: waiting for the others' : 'Next hand'),
      el('span', { class: 'hint', 'data-testid': 'next-hand-info' },
        left === null ? 'starts when every seat is ready' : `starts by itself in ${left}`,
        ready.length ? ` · ready: ${ready.map(label).join(', ')}` : ''));
  }

  function sendNext() {
    const g = app.game;
    if (!g || !g.between || g.readySent) return;
    if (send({ type: 'next' })) {
      g.readySent = true;
      renderNextLine();
    }
  }

  function matchVerdict(g) {
    const m = g.matchOver;
    const mine = g.seat % 2;
    const [us, them] = [m.totals[mine], m.totals[1 - mine]];
    const played = `after ${m.hands_played} hand${m.hands_played === 1 ? '' : 's'}`;
    if (m.winner === null || m.winner === undefined) return `A tie, ${us} to ${them}, ${played}.`;
    return `${m.winner === mine ? 'Your team wins' : 'Your team loses'} the match, ${us} to ${them}, ${played}.`;
  }

  // The score of each finished hand of the match and the running totals (hidden for one hand).
  function renderMatch() {
    const g = app.game;
    const panel = $('match-panel');
    panel.hidden = !isMatch(g);
    if (!isMatch(g)) return;
    const m = g.match;
    $('match-info').textContent = `Hand ${m.hand} of ${m.hands}` + (m.target ? ` · to a lead of ${m.target}` : '');
    const mineTeam = g.seat % 2;
    $('match-body').replaceChildren(
      ...m.history.map((h) => el('tr', { 'data-testid': `match-hand-${h.hand}` },
        el('td', {}, el('a', { href: `/?replay=${h.game_id}&seat=${g.seat}` }, `hand ${h.hand}`), ' · ',
          el('a', { href: `/?review=${h.game_id}&seat=${g.seat}`, target: '_blank', rel: 'noopener',
            'data-testid': `match-review-${h.hand}`, title: 'the review of your moves in this hand, in a new tab' }, 'review')),
        el('td', { class: mineTeam === 0 ? 'mine' : '' }, String(h.team[0])),
        el('td', { class: mineTeam === 1 ? 'mine' : '' }, String(h.team[1])))),
      el('tr', { class: 'total' }, el('td', {}, 'total'),
        el('td', { 'data-testid': 'match-total-0' }, String(m.totals[0])),
        el('td', { 'data-testid': 'match-total-1' }, String(m.totals[1]))));
  }

  function renderGame() {
    if (!app.game) return;
    $('hand-bar').hidden = handIsOver(app.game);
    renderSeats();
    renderMatch();
    renderTrick();
    renderHand();
    renderTurn();
    renderInvites();
    renderSummary();
    renderThinking();
    renderReview();
  }

  // --- the review of a seat's moves (GET /api/games/ID/review?seat=S) ------------------------
  // Shown under the table after a hand and on a page of its own (/?review=GAME_ID&seat=S): each
  // move where it happened (the trick as it lay, the cards the seat could play and what the AI
  // found each worth), and a practice of the worst moves. A review is {gameId, seat, nameOf,
  // state: the server's answer, error, selected: the ply shown, practice}.
  const POSITION_WORDS = ['led', 'played second', 'played third', 'played last'];
  const PLAY_WORDS = ['lead', 'play second', 'play third', 'play last'];

  function newReview(gameId, seat, nameOf) {
    return { gameId, seat, nameOf, state: null, error: null, selected: null, practice: null };
  }

  // Ask for the review (the first ask starts it) and again while it is computed; stops once
  // `alive()` is false (a new hand, another page).
  async function pollReview(review, render, alive) {
    if (!alive()) return;
    try {
      review.state = await getJSON(`/api/games/${review.gameId}/review?seat=${review.seat}`);
      review.error = null;
    } catch (err) {
      review.error = err.message;
    }
    if (!alive()) return;
    render();
    if (!review.error && review.state.status === 'running') setTimeout(() => pollReview(review, render, alive), 700);
  }

  // a number of points; null: an error the review could not estimate (too few distinct deals)
  const fmt = (x) => (x === null || x === undefined ? '?' : Math.abs(x) < 0.05 ? '0' : x.toFixed(1));
  const whereWords = (m) => `trick ${m.trick}, you ${POSITION_WORDS[m.position - 1]}`;
  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  // A card's verdict in words: "mistake: about 32 points", "about as good", "best", "forced".
  function verdictWords(v) {
    if (v.verdict === 'mistake') return `mistake: about ${Math.round(v.loss)} points`;
    return v.verdict === 'as_good' ? 'about as good' : v.verdict;
  }

  // What a value means, and when a card is called a mistake (the review's own settings).
  function valueWords(settings) {
    return 'A card\'s value is what the AI expects your team\'s points minus the other team\'s to be '
      + 'at the end of the hand if you play that card then, from what you could see (± its error). '
      + `A card is a mistake when it is worse than the AI's card by more than ${settings.min_loss} points `
      + `and more than ${settings.z} times its error; else it is about as good.`;
  }

  // The trick as it lay when the seat was to play: the cards on the table at their seats'
  // places, the seat at the bottom with `mine` (its card, or null: a question mark).
  function trickPicture(table, seat, nameOf, mine, testid) {
    const area = el('div', { class: `center review-trick${table.length ? '' : ' lead'}`, 'data-testid': testid,
      'data-cards': table.map((t) => t.card).join(' ') },
    ...POSITIONS.map((p) => el('div', { class: `trick-card pos-${p}` })));
    const pos = (s) => POSITIONS[(s - seat + 4) % 4];
    fillTrick(area, el('span'), table.map((t) => [t.seat, t.card]), null, nameOf, pos, false);
    const slot = area.querySelector('.pos-bottom');
    slot.replaceChildren(mine ? cardFace(mine, { size: 'table', extra: 'mine' })
      : el('span', { class: 'card table empty-slot' }, '?'), el('span', { class: 'trick-name' }, mine ? 'your card' : 'you'));
    return el('div', { class: 'review-felt' }, area);
  }

  // A part of the page brought into view when it is off the screen (a phone's one column).
  function reveal(node) {
    const rect = node.getBoundingClientRect();
    if (rect.top < 0 || rect.top > window.innerHeight * 0.6) node.scrollIntoView({ block: 'start' });
  }

  function renderReviewInto(box, review, rerender) {
    const head = el('h3', {}, review.title || 'Review of your moves');
    const st = review.state;
    if (review.error || (st && st.status === 'failed')) {
      box.replaceChildren(head, el('p', { class: 'error-text', 'data-testid': 'review-status' },
        `The review could not be made: ${review.error || st.error}`));
      return;
    }
    if (!st || st.status === 'running') {
      const done = st ? st.done : 0;
      const total = st ? st.total : 13;
      box.replaceChildren(head, el('p', { 'data-testid': 'review-status' },
        el('progress', { max: String(total), value: String(done) }),
        ` The AI is looking at your move ${Math.min(done + 1, total)} of ${total}…`));
      return;
    }
    const r = st.review;
    if (review.practice) {
      box.replaceChildren(head, practiceView(review, rerender));
      return;
    }
    const worst = r.costliest.length ? r.moves.find((m) => m.ply === r.costliest[0].ply) : null;
    const selected = r.moves.find((m) => m.ply === review.selected) || worst || r.moves[0];
    const rows = r.moves.map((m) => el('li', { class: `review-move ${m.verdict}${m === selected ? ' selected' : ''}`,
      'data-testid': `review-move-${m.ply}`, 'data-ply': m.ply },
    el('button', { type: 'button', 'aria-pressed': String(m === selected),
      onclick: () => { review.selected = m.ply; rerender(); reveal(box.querySelector('.review-detail')); } },
    el('span', { class: 'where' }, capital(whereWords(m))),
    el('span', { class: 'played' }, cardText(m.card), m.card === m.ai_card ? '' : [' · AI ', cardText(m.ai_card)]),
    el('span', { class: 'verdict-word' }, verdictWords(m)))));
    const result = r.result
      ? [`Your team ${r.result.team}, the others ${r.result.other} · `] : [];
    box.replaceChildren(head,
      el('p', { class: 'review-explanation', 'data-testid': 'review-explanation' }, r.explanation),
      el('p', { class: 'review-stats', 'data-testid': 'review-total' }, ...result,
        `${r.mistakes} mistake${r.mistakes === 1 ? '' : 's'} in ${r.moves.length} moves · about `,
        el('b', {}, fmt(r.total_given_up)), ' points given up'),
      review.matchLine ? el('p', { 'data-testid': 'review-match' }, review.matchLine) : '',
      el('p', { class: 'hint', 'data-testid': 'review-values-meaning' }, valueWords(r.settings)),
      el('p', {}, el('button', { type: 'button', class: 'primary', 'data-testid': 'practise-button',
        onclick: () => { startPractice(review); rerender(); } }, 'Practise your mistakes'),
      el('span', { class: 'hint' }, ' each position where you gave up the most, to choose again')),
      el('div', { class: 'review-cols' },
        el('ol', { class: 'review-moves', 'data-testid': 'review-moves' }, rows),
        moveDetail(review, selected)));
  }

  // One move where it happened: the trick, the seat's hand, every card it could play with its
  // value, and the way into the replay at that moment.
  function moveDetail(review, m) {
    const rows = m.values.map((v) => el('tr', { class: (v.card === m.card ? 'chosen ' : '') + v.verdict,
      'data-card': v.card },
    el('td', {}, cardText(v.card)),
    el('td', { class: 'num', 'data-testid': `review-value-${v.card}` },
      v.value === null ? '—' : `${fmt(v.value)} ± ${fmt(v.se)}`),
    el('td', { class: 'verdict-word' }, verdictWords(v)),
    el('td', { class: 'tags' }, [v.card === m.card ? 'you' : '', v.card === m.ai_card ? 'AI' : ''].filter(Boolean).join(', '))));
    return el('div', { class: 'review-detail', 'data-testid': 'review-detail', 'data-ply': m.ply },
      el('h4', {}, capital(whereWords(m)), ': ', cardText(m.card), ` · ${verdictWords(m)}`),
      trickPicture(m.table, review.seat, review.nameOf, m.card, 'review-table'),
      el('div', { class: 'hint' }, 'Your hand then:'), cardRow(m.hand, 'mini', 'review-hand'),
      el('table', { class: 'values review-values', 'data-testid': 'review-values' },
        el('thead', {}, el('tr', {}, el('th', {}, 'card'), el('th', { class: 'num' }, 'value'),
          el('th', {}, 'against the AI\'s card'), el('th', {}))),
        el('tbody', {}, rows)),
      el('p', {}, el('a', { href: `/?replay=${review.gameId}&seat=${review.seat}&move=${m.ply}`,
        'data-testid': 'review-replay-link' }, 'See it in the replay'),
      el('span', { class: 'hint' }, ' (the table just before this card)')));
  }

  // --- practice: the worst moves again ---------------------------------------------------------
  // Like lichess's "learn from your mistakes": each of the review's mistakes, worst first, from
  // the seat's own view then; a card chosen again is as good as the AI's when the review found
  // it best or about as good (within the noise).
  function startPractice(review) {
    const moves = review.state.review.moves.filter((m) => m.verdict === 'mistake')
      .sort((a, b) => b.given_up - a.given_up || a.ply - b.ply);
    review.practice = { moves, at: 0, choice: null, results: [] };
  }

  function practiceView(review, rerender) {
    const p = review.practice;
    const back = el('button', { type: 'button', 'data-testid': 'practice-back',
      onclick: () => { review.practice = null; rerender(); } }, 'Back to the review');
    if (!p.moves.length) {
      return el('div', { class: 'practice', 'data-testid': 'practice' },
        el('p', { 'data-testid': 'practice-none' }, 'Nothing to practise: none of your moves in this hand was a mistake.'),
        back);
    }
    if (p.at >= p.moves.length) {
      const good = p.results.filter((x) => x.good).length;
      return el('div', { class: 'practice', 'data-testid': 'practice' },
        el('p', { class: 'verdict', 'data-testid': 'practice-summary' },
          `${good} of ${p.moves.length} now as good as the AI.`),
        el('ol', {}, p.results.map((x) => el('li', {}, `${capital(whereWords(x.move))}: `, cardText(x.card),
          x.good ? ' — as good as the AI' : [' — the AI plays ', cardText(x.move.ai_card)]))),
        el('p', { class: 'links' },
          el('button', { type: 'button', onclick: () => { startPractice(review); rerender(); } }, 'Once more'), back));
    }
    const m = p.moves[p.at];
    const legal = new Map(m.values.map((v) => [v.card, v]));
    const chosen = p.choice ? legal.get(p.choice) : null;
    const pick = (card) => {
      if (p.choice || !legal.has(card)) return;
      p.choice = card;
      const v = legal.get(card);
      p.results.push({ move: m, card, good: v.verdict === 'best' || v.verdict === 'as_good' });
      rerender();
    };
    const next = () => { p.at += 1; p.choice = null; rerender(); };
    return el('div', { class: 'practice', 'data-testid': 'practice', 'data-ply': m.ply },
      el('h4', { 'data-testid': 'practice-where' }, `Position ${p.at + 1} of ${p.moves.length}: trick ${m.trick}, you ${PLAY_WORDS[m.position - 1]}`),
      el('p', { class: 'hint' }, p.choice ? '' : (m.table.length ? 'The cards on the table are below; ' : 'You lead this trick; ')
        + 'choose the card you would play now (the highlighted ones are legal).'),
      trickPicture(m.table, review.seat, review.nameOf, p.choice, 'practice-table'),
      practiceHand(m.hand, legal, p.choice, pick),
      chosen ? practiceVerdict(m, chosen) : '',
      el('p', { class: 'links' },
        chosen ? el('button', { type: 'button', class: 'primary', 'data-testid': 'practice-next', onclick: next },
          p.at + 1 < p.moves.length ? 'Next position' : 'See how it went') : '',
        back));
  }

  // The seat's hand at that moment, a fan as at the table: the legal cards raised to be chosen.
  function practiceHand(hand, legal, choice, pick) {
    const box = el('div', { class: 'hand practice-hand' + (choice ? '' : ' active'), 'data-testid': 'practice-hand' });
    const middle = (hand.length - 1) / 2;
    let suit = null;
    hand.forEach((code, i) => {
      const cls = [legal.has(code) ? 'legal' : 'dim'];
      if (code === choice) cls.push('picked');
      if (suit !== null && suitOf(code) !== suit) cls.push('suit-start');
      suit = suitOf(code);
      const fan = i - middle;
      box.append(cardFace(code, { tag: 'button', size: 'big', extra: cls.join(' '), attrs: {
        type: 'button', disabled: Boolean(choice) || !legal.has(code), style: `--fan: ${fan}; --fan2: ${fan * fan}`,
        onclick: () => pick(code) } }));
    });
    return box;
  }

  function practiceVerdict(m, v) {
    const good = v.verdict === 'best' || v.verdict === 'as_good';
    const why = v.card === m.ai_card ? ['It is the AI\'s own card.']
      : [`The AI plays `, cardText(m.ai_card), good
        ? `; yours is within the noise of it (about ${fmt(v.loss)} ± ${fmt(v.loss_se)} points).`
        : `: yours gives up about ${fmt(v.loss)} ± ${fmt(v.loss_se)} points of expected margin against it.`];
    return el('div', { class: `practice-verdict ${good ? 'good' : 'bad'}`, 'data-testid': 'practice-verdict',
      'data-good': String(good) },
    el('p', { class: 'verdict' }, good ? 'As good as the AI.' : 'Not as good as the AI.'),
    el('p', {}, ...why),
    el('p', { class: 'hint' }, 'In the hand you played ', cardText(m.card),
      `: a mistake of about ${fmt(m.loss)} ± ${fmt(m.loss_se)} points.`));
  }

  // --- the review at the table ----------------------------------------------------------------
  function askReview(gameId) {
    const g = app.game;
    if (!g || g.review) return;
    const review = newReview(gameId, g.seat, label);
    g.review = review;
    renderSummary();
    const alive = () => app.game && app.game.review === review;
    pollReview(review, () => { renderReview(); if (review.state && review.state.status === 'done') matchReviewLine(review, alive); }, alive);
  }

  // Once the match is over, its review's totals in a line (a match in play has none yet).
  async function matchReviewLine(review, alive) {
    const g = app.game;
    if (!g.matchOver || !isMatch(g) || g.match.id === null || review.matchLine) return;
    let m;
    try {
      m = await getJSON(`/api/matches/${g.match.id}/review?seat=${g.seat}`);
    } catch (_) { return; }
    if (!alive()) return;
    if (m.summary) {
      const s = m.summary;
      review.matchLine = `In the match: ${s.mistakes} mistake${s.mistakes === 1 ? '' : 's'}, about ${fmt(s.total_given_up)} points over ${s.hands} hand${s.hands === 1 ? '' : 's'}.`;
      renderReview();
    } else if (m.status === 'running') {
      setTimeout(() => matchReviewLine(review, alive), 1000);
    }
  }

  function renderReview() {
    const g = app.game;
    const panel = $('review-panel');
    const review = g && g.review;
    panel.hidden = !review;
    if (!review) { panel.replaceChildren(); return; }
    renderReviewInto(panel, review, renderReview);
  }

  // --- the review on a page of its own (/?review=GAME_ID&seat=S) --------------------------------
  async function showReviewPage(gameId, seat) {
    showSection('review');
    document.title = `Review of game ${gameId} - ${PAGE_TITLE}`;
    let game;
    try {
      game = await getJSON(`/api/games/${encodeURIComponent(gameId)}`);
    } catch (err) {
      showError(`Cannot load game ${gameId}: ${err.message}`);
      return;
    }
    if (seat === null) {
      const open = game.seats.find((s) => s.kind === 'open');
      seat = open ? open.seat : 0;
    }
    const names = seatLabels(game.seats.map((s) => personName(s, true)), seat, (s) => `seat ${s}`);
    const review = newReview(game.id, seat, (s) => names[s]);
    review.title = `Your moves at seat ${seat}`;
    const hand = game.match_id !== null && game.match_id !== undefined ? ` (hand ${game.hand} of match ${game.match_id})` : '';
    $('review-title').textContent = `Review of game ${game.id}${hand}`;
    $('review-links').replaceChildren(
      el('a', { href: `/?replay=${game.id}&seat=${seat}`, 'data-testid': 'review-page-replay' }, 'replay this hand'),
      ' · ', el('a', { href: '/' }, 'lobby'));
    app.pageReview = review;
    const render = () => renderReviewInto($('review-page-panel'), review, render);
    pollReview(review, render, () => app.pageReview === review);
  }

  // --- the thinking panel --------------------------------------------------------------------
  function renderThinking() {
    const g = app.game;
    if (!g) return;
    const toggle = $('thinking-toggle');
    toggle.setAttribute('aria-expanded', String(app.thinkingOpen));
    toggle.classList.toggle('open', app.thinkingOpen);
    $('thinking-panel').hidden = !app.thinkingOpen;
    const n = g.thoughts.length;
    $('thinking-status').textContent = !g.thinkingOn ? 'not shown at this table'
      : !g.liveThinking && !handIsOver(g) ? 'shown when the hand is over'
        : `${n} AI move${n === 1 ? '' : 's'} ${handIsOver(g) ? 'in this hand' : 'so far'}`;
    if (!app.thinkingOpen) return;
    const list = $('thinking-list');
    const detail = $('thinking-detail');
    if (!g.thoughts.length) {
      list.replaceChildren();
      detail.replaceChildren(el('p', { class: 'hint' }, !g.thinkingOn
        ? 'This table was opened without showing what the AI was thinking.'
        : !g.liveThinking && !handIsOver(g)
          ? 'What the AI was thinking names its cards: it is shown when the hand is over.'
          : 'No ScrofaZero move yet. Each move of a ScrofaZero seat shows up here.'));
      return;
    }
    const selected = g.thoughts.find((t) => t.ply === g.selectedPly) || g.thoughts[g.thoughts.length - 1];
    const signature = JSON.stringify([g.gameId, g.thoughts.map((t) => t.ply), selected.ply, Object.keys(g.plays).length, g.players.map((p) => p.name)]);
    if (list.dataset.signature === signature) return;
    list.dataset.signature = signature;
    list.replaceChildren(el('span', { class: 'hint' }, 'AI moves:'), ...g.thoughts.map((t) => {
      const played = g.plays[t.ply];
      return el('button', { type: 'button', class: 'chip' + (t === selected ? ' selected' : ''),
        'data-testid': 'thinking-item', 'data-ply': t.ply,
        onclick: () => { g.selectedPly = t === g.thoughts[g.thoughts.length - 1] ? null : t.ply; renderThinking(); } },
      `${t.ply} · ${label(t.seat)} `, played ? cardText(played.card) : '');
    }));
    const played = g.plays[selected.ply];
    renderThought(detail, selected, played ? played.card : null, label);
  }

  // One thinking record: values of the legal cards and the belief table.
  function renderThought(container, t, chosen, nameFn) {
    const parts = [el('h4', { 'data-testid': 'thinking-title', 'data-ply': t.ply },
      `Move ${t.ply} · ${withSeat(nameFn(t.seat), t.seat)}`, chosen ? [' played ', cardText(chosen)] : '')];
    if (t.forced) {
      parts.push(el('p', { class: 'hint', 'data-testid': 'thinking-forced' },
        'A forced move: its only legal card, so nothing was searched.'));
      container.replaceChildren(...parts);
      return;
    }
    const numbers = t.values.map((v) => v.value).filter((v) => v !== null);
    const lo = Math.min(...numbers);
    const hi = Math.max(...numbers);
    const valueRows = t.values.map((v) => {
      const width = v.value === null ? 0 : hi > lo ? 8 + 92 * (v.value - lo) / (hi - lo) : 100;
      const tags = [];
      if (v.card === chosen) tags.push('played');
      if (v.value !== null && v.value === hi) tags.push('best');
      return el('tr', { class: v.card === chosen ? 'chosen' : '', 'data-card': v.card },
        el('td', {}, cardText(v.card)),
        el('td', { class: 'bar' }, el('span', { style: `width:${width.toFixed(1)}%` })),
        el('td', { class: 'num', 'data-testid': `value-${v.card}` }, v.value === null ? '—' : v.value.toFixed(2)),
        el('td', { class: 'tags' }, tags.join(', ')));
    });
    parts.push(el('div', { class: 'thought-cols' },
      el('div', {},
        el('h5', {}, 'Searched value of each legal card'),
        el('p', { class: 'hint' }, 'Points for its team, over its sampled deals; higher is better.'),
        el('table', { class: 'values', 'data-testid': 'thinking-values' }, el('tbody', {}, valueRows))),
      el('div', {},
        el('h5', {}, 'Where it believed the unseen important cards were'),
        t.belief.length
          ? el('table', { class: 'belief', 'data-testid': 'thinking-belief' },
            el('thead', {}, el('tr', {}, el('th', {}, 'card'), [0, 1, 2, 3].map((s) => el('th', {
              'data-testid': `belief-seat-${s}`, title: `seat ${s}` }, nameFn(s), el('br'),
            el('span', { class: 'hint' }, s === t.seat ? '(itself)' : `seat ${s}`))))),
            el('tbody', {}, t.belief.map((b) => el('tr', { 'data-card': b.card }, el('td', {}, cardText(b.card)),
              b.p.map((p) => el('td', { class: 'num' + (p === 0 ? ' zero' : ''),
                style: `background: rgba(46, 125, 50, ${(0.08 + 0.6 * p).toFixed(3)})` },
              `${Math.round(p * 100)}%`))))))
          : el('p', { class: 'hint' }, 'It could see every important card.'),
        el('p', { class: 'hint', 'data-testid': 'thinking-deals' },
          `${t.deals} sampled deals · effective sample size ${t.ess}`))));
    container.replaceChildren(...parts);
  }

  // --- lobby ---------------------------------------------------------------------------------
  function kindLabel(kind) {
    if (kind === 'open') return 'open seat (another person or an outside bot)';
    const bot = app.options.bots.find((b) => b.kind === kind);
    return bot ? bot.name : kind;
  }

  function kindAbout(kind) {
    const bot = app.options.bots.find((b) => b.kind === kind);
    return bot ? bot.about : 'a person with the join link, or an outside bot with its token';
  }

  function renderSeatChoices() {
    const own = Number($('own-seat').value);
    const box = $('seat-choices');
    const previous = {};
    for (const select of box.querySelectorAll('select')) previous[select.dataset.rel] = select.value;
    const defaults = app.options.default_bots;
    box.replaceChildren(...[1, 2, 3].map((rel) => {
      const seat = (own + rel) % 4;
      const select = el('select', { id: `seat-kind-${seat}`, 'data-testid': `seat-kind-${seat}`, 'data-rel': rel },
        app.options.seat_kinds.map((k) => el('option', { value: k, title: kindAbout(k) }, kindLabel(k))));
      select.value = previous[rel] || defaults[rel - 1] || app.options.seat_kinds[1];
      const about = el('span', { class: 'hint', 'data-testid': `seat-about-${seat}` }, kindAbout(select.value));
      select.addEventListener('change', () => { about.textContent = kindAbout(select.value); });
      return el('div', { class: 'form-row' },
        el('label', { for: select.id }, `Seat ${seat} · ${['', 'left opponent', 'partner', 'right opponent'][rel]}`),
        select, about);
    }));
  }

  async function showLobby() {
    showSection('lobby');
    document.title = 'ScrofaZero tables';
    $('player-name').value = localStorage.getItem(NAME_KEY) || '';
    try {
      await loadOptions();
    } catch (err) {
      showError(`Cannot read the server's options: ${err.message}`);
      return;
    }
    const o = app.options;
    if (!$('seat-choices').children.length) {
      $('show-thinking').checked = Boolean(o.thinking);
      $('deal-number').max = String(o.standard_deals - 1);
      $('deal-hint').textContent = `empty: a random deal; 0-${o.standard_deals - 1}: a standard deal for the first hand (an open deal: everyone at the table is told, and can know every hand of it; later hands are random)`;
    }
    renderSeatChoices();
    $('checkpoint-note').textContent = `ScrofaZero seats play with the network ${o.checkpoint}. `
      + `Each move has ${o.move_deadline_s} s.`;
    $('create-button').disabled = false;
    loadGames();
    loadOpenTables();
  }

  async function loadGames() {
    const body = $('games-body');
    let games;
    try {
      games = await getJSON('/api/games?limit=20');
    } catch (err) {
      body.replaceChildren(el('tr', {}, el('td', { colspan: 6, class: 'hint' }, String(err.message))));
      return;
    }
    if (!games.length) {
      body.replaceChildren(el('tr', {}, el('td', { colspan: 6, class: 'hint' }, 'no games yet')));
      return;
    }
    body.replaceChildren(...games.map((game) => {
      const when = new Date(game.created_at);
      const done = game.status === 'finished';
      return el('tr', { 'data-game': game.id },
        el('td', {}, String(game.id)),
        el('td', { title: game.created_at }, when.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })),
        el('td', {}, game.status),
        el('td', { class: 'seats' }, game.seats.map((s) => personName(s, true)).join(', ')),
        el('td', { class: 'num' }, game.scores ? game.scores.join(' / ') : ''),
        el('td', {}, done ? [el('a', { href: `/?replay=${game.id}`, 'data-testid': `replay-link-${game.id}` }, 'replay'), ' ',
          el('a', { href: `/api/games/${game.id}/export`, target: '_blank' }, 'text')] : ''));
    }));
  }

  function createTable(event) {
    event.preventDefault();
    hideError();
    const own = Number($('own-seat').value);
    const seats = ['open', 'open', 'open', 'open'];
    for (const select of $('seat-choices').querySelectorAll('select')) {
      seats[Number(select.id.replace('seat-kind-', ''))] = select.value;
    }
    seats[own] = 'open';
    const dealText = $('deal-number').value.trim();
    let deal = null;
    if (dealText !== '') {
      deal = Number(dealText);
      const count = app.options.standard_deals;
      if (!Number.isInteger(deal) || deal < 0 || deal >= count) {
        showError(`The deal must be empty (random) or a standard deal number 0-${count - 1}.`);
        return;
      }
    }
    const hands = Number($('hands').value.trim() || '1');
    if (!Number.isInteger(hands) || hands < 1 || hands > 100) {
      showError('Hands must be a whole number 1-100.');
      return;
    }
    const targetText = $('target').value.trim();
    const target = targetText === '' ? null : Number(targetText);
    if (target !== null && (!Number.isInteger(target) || target < 1 || target > 100000)) {
      showError('Play to a lead of must be empty (no lead ends the match) or a whole number 1-100000.');
      return;
    }
    const name = rememberName($('player-name').value);
    const msg = { type: 'create', seats, deal, leader: Number($('leader').value),
      thinking: $('show-thinking').checked, live_thinking: $('live-thinking').checked,
      hands, target, public: $('public').checked };
    app.creating = { ownSeat: own, msg };
    app.game = null;
    $('log').replaceChildren();
    $('create-button').disabled = true;
    app.wsWanted = false;
    connect(() => send(msg));
  }

  function rememberName(text) {
    const name = text.trim();
    if (name) localStorage.setItem(NAME_KEY, name); else localStorage.removeItem(NAME_KEY);
    return name;
  }

  // Public tables with a seat nobody has taken yet, each with a Join button per open seat.
  async function loadOpenTables() {
    const body = $('open-tables-body');
    let tables;
    try {
      const limit = (await loadOptions()).max_page_size; // a larger page is refused (400)
      tables = (await getJSON(`/api/tables?public=true&limit=${limit}`)).filter((t) => t.public && (t.open_seats || []).length);
    } catch (err) {
      body.replaceChildren(el('tr', {}, el('td', { colspan: 4, class: 'hint' }, String(err.message))));
      return;
    }
    if (!tables.length) {
      body.replaceChildren(el('tr', {}, el('td', { colspan: 4, class: 'hint' }, 'no public table has an open seat')));
      return;
    }
    body.replaceChildren(...tables.map((t) => el('tr', { 'data-table': t.table },
      el('td', {}, el('code', {}, t.table)),
      el('td', { class: 'seats' }, t.players.map((p) => `${p.seat}: ${personName(p, !t.open_seats.includes(p.seat))}`).join(', ')),
      el('td', {}, t.hands > 1 ? `${t.hands} hands` : 'one hand'),
      el('td', {}, t.open_seats.map((seat) => el('button', { type: 'button', class: 'small',
        'data-testid': `claim-${t.table}-${seat}`, onclick: () => claimSeat(t.table, seat) }, `Join seat ${seat}`))))));
  }

  async function claimSeat(table, seat) {
    hideError();
    const name = rememberName($('player-name').value);
    let claim;
    try {
      claim = await postJSON(`/api/tables/${encodeURIComponent(table)}/claim`, { seat, ...(name ? { name } : {}) });
    } catch (err) {
      showError(`Cannot take seat ${seat} of table ${table}: ${err.message}`);
      loadOpenTables();
      return;
    }
    app.session = { table, seat: claim.seat, token: claim.token, invites: {} };
    saveSession();
    history.replaceState(null, '', `/?table=${encodeURIComponent(table)}&seat=${claim.seat}`);
    showSection('game');
    $('turn-line').textContent = 'Joining…';
    joinSession();
  }

  // An open deal (docs/protocol.md "Making a table"): what everyone at the table is told.
  function openDealText(hands) {
    return `open deal: ${hands > 1 ? `hands 1-${hands} play standard deals` : 'the first hand plays a standard deal'}`
      + ' its creator chose; anyone can look up every hand of it from their own cards';
  }

  // Whether the table is an open deal, asked before the seat is taken: a watcher's welcome
  // on a socket of its own (it carries no cards). Resolves to its open_hands, or 0.
  function peekOpenDeal(table) {
    return new Promise((resolve) => {
      let ws;
      try { ws = new WebSocket(wsURL()); } catch (err) { resolve(0); return; }
      const done = (hands) => { resolve(hands); ws.close(); };
      ws.onopen = () => ws.send(JSON.stringify({ v: 1, type: 'watch', table }));
      ws.onmessage = (event) => {
        const msg = JSON.parse(event.data);
        if (msg.type === 'welcome' || msg.type === 'error') done(msg.open_hands || 0);
      };
      ws.onerror = () => resolve(0);
    });
  }

  // An invitation link opened in a fresh tab: ask the person's name, then take the seat.
  function askName(table, seat, token) {
    showSection('join');
    document.title = `Seat ${seat} - ${PAGE_TITLE}`;
    $('join-text').textContent = `You are invited to seat ${seat} of table ${table}.`;
    $('join-open-deal').hidden = true;
    peekOpenDeal(table).then((hands) => {
      if (!hands) return;
      $('join-open-deal').textContent = `This table is an ${openDealText(hands)}: a table for practising known deals, not a fair game.`;
      $('join-open-deal').hidden = false;
    });
    $('join-name').value = localStorage.getItem(NAME_KEY) || '';
    $('join-form').onsubmit = (event) => {
      event.preventDefault();
      rememberName($('join-name').value);
      app.session = { table, seat, token, invites: {} };
      saveSession();
      history.replaceState(null, '', `/?table=${encodeURIComponent(table)}&seat=${seat}`);
      showSection('game');
      $('turn-line').textContent = 'Joining…';
      joinSession();
    };
    $('join-name').focus();
  }

  // Leaving a hand in play (New table, Lobby, Fish, the title, the browser's Back) asks first.
  const inPlay = () => {
    const g = app.game;
    return Boolean(g && !g.replaced && (g.status === 'playing' || g.between) && !$('game').hidden);
  };

  // true: go
  function confirmLeave() {
    return !inPlay() || window.confirm('Leave this table? Your seat plays the lowest legal card once you are gone.');
  }

  function leaveTable() {
    if (confirmLeave()) quitTable(() => { location.href = '/'; });
  }

  function quitTable(then) {
    const g = app.game;
    app.wsWanted = false;
    clearTimeout(app.reconnectTimer);
    if (app.ws) { const ws = app.ws; app.ws = null; ws.close(); }
    if (g) sessionStorage.removeItem(THOUGHTS_KEY + g.table);
    app.session = null;
    saveSession();
    app.game = null;
    then();
  }

  // The browser's Back at a table first steps off an entry of the table's own (pushed when the
  // table opens), so the page can ask as the Lobby link does: kept, the entry is pushed again;
  // left, the lobby takes the table's place in the history. With no hand in play Back goes on.
  function guardBack() {
    if (!(history.state && history.state.table)) history.pushState({ table: true }, '', location.href);
  }

  function onBack() {
    if (!app.game || $('game').hidden || (history.state && history.state.table)) return;
    if (!inPlay()) history.back();
    else if (confirmLeave()) quitTable(() => location.replace('/'));
    else guardBack();
  }

  // --- replay --------------------------------------------------------------------------------
  // `/?replay=GAME_ID` (one hand) or `/?match=MATCH_ID` (every hand of a match, in order);
  // `&move=N` (from a review) opens a hand at the moment before its move N.
  async function showReplay(kind, id, viewer, move) {
    showSection('replay');
    const what = kind === 'match' ? `match ${id}` : `game ${id}`;
    document.title = `Replay of ${what} - ${PAGE_TITLE}`;
    let hands;
    let match = null;
    try {
      if (kind === 'match') {
        const data = await getJSON(`/api/matches/${encodeURIComponent(id)}/replay`);
        match = data.match;
        hands = data.hands;
        if (!hands.length) throw new Error('it has no hand on record');
      } else {
        hands = [await getJSON(`/api/games/${encodeURIComponent(id)}/replay`)];
      }
    } catch (err) {
      showError(`Cannot load ${what}: ${err.message}`);
      return;
    }
    if (viewer === null) {
      const open = hands[0].seats.find((s) => s.kind === 'open');
      viewer = open ? open.seat : 0;
    }
    app.replay = { hands, match, hand: 0, data: hands[0], idx: 0, viewer, move };
    $('replay-title').textContent = match
      ? `Replay of match ${match.id ?? id} (${match.status}, ${hands.length} hand${hands.length === 1 ? '' : 's'})`
      : `Replay of game ${hands[0].id} (${hands[0].status})`;
    const select = $('rp-hand');
    select.hidden = !match;
    select.replaceChildren(...hands.map((h, i) => el('option', { value: i }, `hand ${i + 1} (game ${h.id})`)));
    $('rp-slider').disabled = $('rp-hand').disabled = false; // renderReplay sets the buttons
    replayHand(0, move ? move - 1 : 0);
  }

  function replayHand(hand, idx) {
    const r = app.replay;
    r.hand = hand;
    r.data = r.hands[hand];
    r.idx = Math.max(0, Math.min(r.data.frames.length - 1, idx));
    $('rp-hand').value = String(hand);
    $('rp-slider').max = String(r.data.frames.length - 1);
    $('replay-links').replaceChildren(
      el('a', { href: `/?review=${r.data.id}&seat=${r.viewer}`, 'data-testid': 'replay-review-link',
        title: `the AI's review of seat ${r.viewer}'s moves in this hand` }, `review seat ${r.viewer}'s moves`),
      ' · ', el('a', { href: `/api/games/${r.data.id}/export`, target: '_blank', 'data-testid': 'replay-export' }, 'export as text'),
      ' · ', el('a', { href: '/' }, 'lobby'));
    renderReplay();
  }

  // A step past either end of a hand goes on into the hand before or after it.
  function replayGo(idx) {
    const r = app.replay;
    if (!r) return;
    const last = r.data.frames.length - 1;
    if (idx > last && r.hand < r.hands.length - 1) replayHand(r.hand + 1, idx === Infinity ? Infinity : 0);
    else if (idx < 0 && r.hand > 0) replayHand(r.hand - 1, idx === -Infinity ? 0 : Infinity);
    else {
      r.idx = Math.max(0, Math.min(last, idx));
      renderReplay();
    }
  }

  function renderReplay() {
    const r = app.replay;
    const { data } = r;
    const f = data.frames[r.idx];
    const last = data.frames.length - 1;
    const labels = seatLabels(data.seats.map((s) => personName(s, true)), null, (s) => `seat ${s}`);
    const nameFn = (s) => labels[s];
    const pos = (s) => POSITIONS[(s - r.viewer + 4) % 4];
    const toMove = r.idx < last && data.frames[r.idx + 1] ? data.frames[r.idx + 1].seat : null;
    for (let seat = 0; seat < 4; seat++) {
      const classes = ['seat-box', 'replay-seat'];
      if (f.seat === seat && f.ply) classes.push('just-played');
      if (toMove === seat) classes.push('to-move');
      const captured = sortCards(f.captured[seat]);
      $(`rp-slot-${pos(seat)}`).replaceChildren(el('div', { class: classes.join(' '), 'data-testid': `replay-seat-${seat}` },
        el('div', { class: 'seat-head' },
          el('span', { class: 'seat-name' }, nameFn(seat)),
          el('span', { class: 'seat-tag', 'data-kind': data.seats[seat].kind },
            data.seats[seat].kind === 'open' ? 'player' : 'bot')),
        el('div', { class: 'seat-score' }, 'pile ',
          el('span', { class: 'num', 'data-testid': `replay-pile-score-${seat}` }, String(f.scores[seat]))),
        cardRow(sortCards(f.hands[seat]), 'small', `replay-hand-${seat}`),
        captured.length ? cardRow(captured, 'mini', `replay-captured-${seat}`)
          : el('div', { class: 'card-row empty', 'data-testid': `replay-captured-${seat}` }, 'no scoring cards')));
    }
    fillTrick($('rp-trick'), $('rp-trick-note'), f.trick, f.winner, nameFn, pos, true);
    $('rp-team-score-0').textContent = String(f.team[0]);
    $('rp-team-score-1').textContent = String(f.team[1]);
    for (const t of [0, 1]) {
      $(`rp-team-label-${t}`).replaceChildren(el('div', {}, `Seats ${t} + ${t + 2}`),
        el('div', { class: 'hint' }, `${nameFn(t)}, ${nameFn(t + 2)}`));
    }
    $('rp-ply').textContent = (r.match ? `hand ${r.hand + 1} of ${r.hands.length} · ` : '') + `move ${f.ply} / ${last}`;
    $('rp-ply').dataset.hand = String(r.hand + 1);
    $('rp-ply').dataset.ply = String(f.ply);
    $('rp-slider').value = String(r.idx);
    $('rp-move').replaceChildren(...(f.ply
      ? [`${f.ply}. ${withSeat(nameFn(f.seat), f.seat)} played `, cardText(f.card),
        f.fallback ? ` (played for the seat: ${f.fallback})` : '']
      : [`The deal; ${withSeat(nameFn(data.leader), data.leader)} leads.`]),
    r.move && r.hand === 0 && f.ply === r.move - 1
      ? el('div', { class: 'at-move', 'data-testid': 'replay-at-move' }, `Next: move ${r.move}, the one the review is about.`) : '');
    const thinking = $('rp-thinking');
    if (f.thinking) {
      renderThought(thinking, { ...f.thinking, seat: f.seat, ply: f.ply }, f.card, nameFn);
    } else {
      thinking.replaceChildren(el('h4', {}, 'What the AI was thinking'),
        el('p', { class: 'hint' }, f.ply ? 'Nothing recorded for this move: only ScrofaZero\'s moves carry their thinking.'
          : 'Step through the moves; each ScrofaZero move shows its values and beliefs here.'));
    }
    const atStart = r.idx === 0 && r.hand === 0;
    const atEnd = r.idx === last && r.hand === r.hands.length - 1;
    for (const [id, disabled] of [['rp-first', atStart], ['rp-prev', atStart],
      ['rp-next', atEnd], ['rp-last', atEnd]]) $(id).disabled = disabled;
    const final = $('rp-final');
    if (r.idx === last && data.scores) {
      final.hidden = false;
      final.replaceChildren(el('h3', {}, 'Final scores'), el('table', { class: 'team-scores' },
        [0, 1, 2, 3].map((s) => el('tr', {}, el('td', {}, withSeat(nameFn(s), s)),
          el('td', { class: 'num', 'data-testid': `replay-final-score-${s}` }, String(data.scores[s]))))),
      ...(r.match && atEnd && Array.isArray(r.match.totals) ? [el('h3', {}, 'Match totals'), el('table', { class: 'team-scores' },
        [0, 1].map((t) => el('tr', {}, el('td', {}, `Seats ${t} + ${t + 2}`),
          el('td', { class: 'num', 'data-testid': `replay-match-total-${t}` }, String(r.match.totals[t])))))] : []));
    } else {
      final.hidden = true;
    }
  }

  // --- start ---------------------------------------------------------------------------------
  function tick() {
    if (app.game && !$('game').hidden) renderTurn();
  }

  function init() {
    $('error-close').addEventListener('click', hideError);
    $('create-form').addEventListener('submit', createTable);
    $('own-seat').addEventListener('change', () => { if (app.options) renderSeatChoices(); });
    $('new-table').addEventListener('click', leaveTable);
    for (const id of ['lobby-link', 'fish-link', 'brand-link']) {
      $(id).addEventListener('click', (event) => { if (!confirmLeave()) event.preventDefault(); });
    }
    $('thinking-toggle').addEventListener('click', () => {
      app.thinkingOpen = !app.thinkingOpen;
      $('thinking-list').dataset.signature = '';
      renderThinking();
    });
    for (const id of ['felt', 'hand-bar']) $(id).addEventListener('click', endHold);
    window.addEventListener('popstate', onBack);
    $('trick-review-prev').addEventListener('click', () => stepTrick(-1));
    $('trick-review-next').addEventListener('click', () => stepTrick(1));
    $('beep').checked = localStorage.getItem(BEEP_KEY) === '1';
    $('beep').addEventListener('change', () => {
      localStorage.setItem(BEEP_KEY, $('beep').checked ? '1' : '0');
      beep(); // a sample, and a user gesture that lets the page play sound later
    });
    const replayFirst = () => replayHand(0, 0);
    const replayLast = () => replayHand(app.replay.hands.length - 1, Infinity);
    $('rp-first').addEventListener('click', replayFirst);
    $('rp-prev').addEventListener('click', () => replayGo(app.replay.idx - 1));
    $('rp-next').addEventListener('click', () => replayGo(app.replay.idx + 1));
    $('rp-last').addEventListener('click', replayLast);
    $('rp-slider').addEventListener('input', (e) => replayGo(Number(e.target.value)));
    $('rp-hand').addEventListener('change', (e) => replayHand(Number(e.target.value), 0));
    document.addEventListener('keydown', (e) => {
      if (!app.replay || $('replay').hidden || ['INPUT', 'SELECT'].includes(e.target.tagName)) return;
      const moves = { ArrowLeft: -1, ArrowRight: 1 };
      const keys = { Home: replayFirst, End: replayLast };
      if (!(e.key in moves) && !(e.key in keys)) return;
      e.preventDefault(); // the keys step the replay; they do not also scroll the page
      if (e.key in moves) replayGo(app.replay.idx + moves[e.key]);
      else keys[e.key]();
    });
    setInterval(tick, 250);
    setInterval(() => { if (app.ws && app.ws.readyState === WebSocket.OPEN) send({ type: 'ping' }); }, 25000);

    const params = new URLSearchParams(location.search);
    const asked = params.has('seat') ? Number(params.get('seat')) % 4 : null;
    const viewer = Number.isInteger(asked) ? asked : null;
    for (const kind of ['replay', 'match']) {
      if (!params.has(kind)) continue;
      const move = Number(params.get('move'));
      showReplay(kind, params.get(kind), viewer, Number.isInteger(move) && move >= 1 && move <= 52 ? move : null);
      return;
    }
    if (params.has('review')) {
      showReviewPage(params.get('review'), viewer);
      return;
    }
    const stored = loadSession();
    if (params.has('table') && params.has('seat')) {
      const table = params.get('table');
      const seat = Number(params.get('seat'));
      const kept = deviceSeats()[table];
      const onDevice = kept && kept.seat === seat && !params.get('token') ? kept : null;
      const same = (stored && stored.table === table && stored.seat === seat) || Boolean(onDevice);
      const token = params.get('token') || (stored && stored.table === table && stored.seat === seat ? stored.token
        : onDevice ? onDevice.token : null);
      if (!token || !Number.isInteger(seat)) {
        showLobby();
        showError(`No token for seat ${params.get('seat')} of table ${table}: open the join link you were given.`);
        return;
      }
      if (!same) { // an invitation: the person says who they are first
        askName(table, seat, token);
        return;
      }
      app.session = { table, seat, token, invites: (onDevice || stored).invites || {} };
      saveSession();
      showSection('game');
      $('turn-line').textContent = 'Joining…';
      joinSession();
      return;
    }
    showLobby();
    if (stored && stored.table) {
      const note = el('p', { class: 'resume', 'data-testid': 'resume' }, 'Your table ', el('b', {}, stored.table), ': ',
        el('a', { href: `/?table=${encodeURIComponent(stored.table)}&seat=${stored.seat}` }, 'go back to it'), '.');
      $('create-form').prepend(note);
    }
  }

  init();
})();
