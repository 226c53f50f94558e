// The Big Two web table: lobby, live table (one websocket per seat) and replays.
// Everything the page shows comes from the server; the engine on the server is the referee.
"use strict";
const $ = (s) => document.querySelector(s);
const params = new URLSearchParams(location.search);
const SUIT = { D: "\u2666", C: "\u2663", H: "\u2665", S: "\u2660" };
const esc = (t) => String(t).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// ---------------------------------------------------------------- cards as pictures

function cardSvg(card, w = 52) {
  const h = Math.round(w * 1.4), rank = card.slice(0, -1), suit = card.slice(-1);
  const color = suit === "D" || suit === "H" ? "#c62828" : "#1b1b1b";
  return `<svg width="${w}" height="${h}" viewBox="0 0 50 70" role="img" aria-label="${esc(card)}">
    <rect class="face" x="1" y="1" width="48" height="68" rx="5" fill="#fff" stroke="#999" stroke-width="1.5"/>
    <text x="5" y="15" font-size="13" font-weight="bold" fill="${color}">${esc(rank)}</text>
    <text x="5" y="27" font-size="12" fill="${color}">${SUIT[suit] || "?"}</text>
    <text x="25" y="52" font-size="26" text-anchor="middle" fill="${color}">${SUIT[suit] || "?"}</text></svg>`;
}
function backSvg(w = 34) {
  const h = Math.round(w * 1.4);
  return `<svg width="${w}" height="${h}" viewBox="0 0 50 70"><rect x="1" y="1" width="48" height="68" rx="5"
    fill="#2c4f9e" stroke="#fff" stroke-width="2"/><rect x="7" y="7" width="36" height="56" rx="3" fill="none"
    stroke="#9fb8f0" stroke-width="2" stroke-dasharray="4 3"/></svg>`;
}
const cardsHtml = (cards, w) => `<span class="cards">${cards.map((c) => cardSvg(c, w)).join("")}</span>`;
const playText = (cards) => (cards.length ? cards.join(" ") : "pass");

// body: an object sent as JSON, or JSON text sent as it is (a record file: its 64-bit seed must not be rounded)
async function api(path, body) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const opts = body === undefined ? {} : { method: "POST", body: text, headers: { "Content-Type": "application/json" } };
  const res = await fetch(path, opts);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

// ---------------------------------------------------------------- lobby

async function startLobby() {
  $("#lobby").hidden = false;
  $("#where").textContent = "lobby";
  const options = await api("/api/options");
  const variants = Object.fromEntries(options.variants.map((v) => [v.name, v]));
  $("#variant").innerHTML = options.variants.map((v) => `<option value="${esc(v.name)}">${esc(v.name)}</option>`).join("");
  $("#variant").value = variants.taiwan ? "taiwan" : options.variants[0].name;
  $("#pace").value = options.pace;
  const kinds = ["person", ...options.agents];
  function seatChoices() {
    const v = variants[$("#variant").value], n = Number($("#players").value);
    $("#agent-note").textContent = v.why;
    $("#seat-choices").innerHTML = Array.from({ length: n }, (_, i) => `<label>Seat ${i}
      <select class="seat-kind" data-seat="${i}">${kinds.map((k) => `<option ${k === (i === 0 ? "person" : n === v.players ? v.default : "heuristic") ? "selected" : ""}>${esc(k)}</option>`).join("")}</select>
      <input class="seat-name" data-seat="${i}" placeholder="name" size="10"></label>`).join("");
  }
  $("#variant").onchange = () => { $("#players").value = variants[$("#variant").value].players; seatChoices(); };
  $("#players").onchange = seatChoices;
  $("#variant").onchange();
  async function create(watch) {
    $("#lobby-error").textContent = "";
    const seats = [...document.querySelectorAll(".seat-kind")].map((s) => s.value);
    const body = {
      seats: watch ? seats.map((s) => (s === "person" ? variants[$("#variant").value].default : s)) : seats,
      names: [...document.querySelectorAll(".seat-name")].map((s) => s.value),
      pace: Number($("#pace").value),
      settings: seats.length === variants[$("#variant").value].players ? {} : { players: seats.length },
    };
    const file = $("#yaml").files[0];
    if (file) body.yaml = await file.text(); else body.variant = $("#variant").value;
    try {
      const room = await api("/api/rooms", body);
      if (watch || !room.links.length) { location.href = room.watch; return; }
      $("#links").innerHTML = `<p>Room <b>${esc(room.room)}</b>. Each link opens one seat (keep it: it is the seat's key).</p>` +
        room.links.map((l) => `<p>Seat ${esc(l.seat)} (${esc(l.name)}): <a class="seat-link" href="${esc(l.url)}">${esc(l.url)}</a></p>`).join("") +
        `<p>Spectators: <a href="${esc(room.watch)}">${esc(room.watch)}</a></p>`;
      refreshRooms();
    } catch (e) { $("#lobby-error").textContent = e.message; }
  }
  $("#create").onsubmit = (e) => { e.preventDefault(); create(false); };
  $("#create-watch").onclick = () => create(true);
  $("#record-file").onchange = async () => {
    try { showReplay(await api("/api/replay?coach=1", await $("#record-file").files[0].text())); }
    catch (e) { $("#lobby-error").textContent = e.message; }
  };
  refreshRooms();
}

async function refreshRooms() {
  const { rooms } = await api("/api/rooms");
  $("#room-list").innerHTML = rooms.map((r) => `<li><b>${esc(r.room)}</b> ${esc(r.variant)}: ${r.seats.map((s) => esc(s.name)).join(", ")}
    &middot; match ${esc(r.match)}${r.over ? " (over)" : ""} &middot; <a href="/?room=${encodeURIComponent(r.room)}">watch</a>
    ${r.finished_matches.map((m) => `&middot; <a class="replay-link" href="/?replay=${encodeURIComponent(r.room)}&match=${esc(m)}">replay ${esc(m)}</a>`).join(" ")}</li>`).join("");
}

// ---------------------------------------------------------------- the live table

const live = { ws: null, state: null, selected: new Set(), fatal: false };

function startTable(room, token) {
  $("#table").hidden = false;
  $("#where").textContent = `room ${room}` + (token ? "" : " (watching)");
  const connect = () => {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${proto}://${location.host}/ws/${room}${token ? `?token=${encodeURIComponent(token)}` : ""}`);
    live.ws = ws;
    setConn("connecting");
    ws.onopen = () => setConn("connected");
    ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
    ws.onclose = () => { if (live.fatal) return setConn("closed"); setConn("disconnected, reconnecting"); setTimeout(connect, 1000); };
  };
  connect();
  const send = (msg) => live.ws && live.ws.readyState === 1 && live.ws.send(JSON.stringify(msg));
  $("#play").onclick = () => {
    if (!live.selected.size) return say("select cards to play (or press Pass)", true);
    send({ type: "play", cards: [...live.selected].join(" "), seq: live.state.seq, match: live.state.match });
  };
  $("#pass").onclick = () => send({ type: "play", cards: "pass", seq: live.state.seq, match: live.state.match });
  $("#clear").onclick = () => { live.selected.clear(); render(); };
  $("#coach").onclick = () => send({ type: "coach" });
  $("#next-match").onclick = () => send({ type: "next_match" });
  $("#pace-live").oninput = () => send({ type: "pace", seconds: Number($("#pace-live").value) });
  live.send = send;
}

function setConn(text) { $("#conn").textContent = `connection: ${text}`; $("#conn").dataset.state = text.split(",")[0]; }
function say(text, isError) { $("#message").textContent = text; $("#message").className = isError ? "error" : ""; }

function onMessage(msg) {
  if (msg.type === "error") {
    say(msg.message, true);
    if (msg.fatal) { live.fatal = true; live.ws.close(); }
    return;
  }
  if (msg.type === "notice") {
    $("#notice").textContent = msg.message;
    $("#notice").hidden = false;
    return;
  }
  if (msg.type === "coach") {
    $("#coach-box").innerHTML = adviceHtml(msg);
    return;
  }
  const moved = !live.state || live.state.seq !== msg.seq || live.state.match !== msg.match;
  live.state = msg;
  if (moved) { live.selected.clear(); $("#coach-box").innerHTML = ""; say(""); }
  render();
}

function adviceHtml(a) {
  const unit = (v) => (v === null ? "(the only sensible play)" : a.kind === "payoff" ? `${v >= 0 ? "+" : ""}${v.toFixed(2)} pts/game` : `score ${v.toFixed(2)}`);
  return `<div class="advice"><b>Coach (${esc(a.agent)})</b>: ${a.plays.map((p) => `<span class="chip coach-play">${esc(p.cards)}</span> ${unit(p.value)}`).join(" &middot; ")}
    <div class="note">${esc(a.why)}</div></div>`;
}

function spots(n, me) {
  const names = { 2: ["bottom", "top"], 3: ["bottom", "right", "left"], 4: ["bottom", "right", "top", "left"] }[n];
  const out = {};
  for (let k = 0; k < n; k++) out[(me + k) % n] = names[k];
  return out;
}

function render() {
  const s = live.state;
  if (!s) return;
  const me = s.you === null ? 0 : s.you;
  const where = spots(s.seats.length, me);
  document.querySelectorAll(".spot").forEach((el) => (el.innerHTML = ""));
  for (const seat of s.seats) {
    const conn = { connected: "connected", away: "away", "stand-in": "away: an agent plays for them", agent: `agent: ${seat.agent}` }[seat.connection] +
      (seat.connections > 1 ? ` (open in ${seat.connections} places)` : "");
    const el = document.createElement("div");
    el.className = "seat" + (s.to_act === seat.seat ? " acting" : "");
    el.dataset.seat = seat.seat;
    el.innerHTML = `<div class="name">${esc(seat.name)}${s.you === seat.seat ? " (you)" : ""}</div>
      <div class="meta"><span class="dot ${seat.connection}"></span><span class="conn">${esc(conn)}</span></div>
      <div class="meta">cards left: <b class="left">${esc(seat.cards_left)}</b> &middot; score ${esc(seat.score)}</div>
      <div class="backs">${s.you === seat.seat ? "" : backSvg(28).repeat(Math.min(seat.cards_left, 13))}</div>`;
    $(`.spot.${where[seat.seat]}`).appendChild(el);
  }
  const name = (i) => esc(s.seats[i].name);
  let status;
  if (s.over) {
    const best = Math.max(...s.scores);
    status = `Match over. Winner: ${s.seats.filter((x, i) => s.scores[i] === best).map((x) => esc(x.name)).join(", ")}`;
  } else {
    const who = s.to_act === s.you ? "Your turn" : `${name(s.to_act)} to play`;
    const how = { "stand-in": " (an agent plays for them)", waiting: ` (away: an agent plays for them in ${esc(s.stand_in_in)}s)` }[s.controller] || "";
    const clock = s.turn_left === null ? "" : ` (${esc(s.turn_left)}s left)`;
    status = `${who}${how}${clock} &middot; game ${esc(s.game)} of ${esc(s.games)}` + (s.opening_card ? ` &middot; opening card ${esc(s.opening_card)}` : "");
  }
  if (s.seed_chosen) status += ` &middot; <span id="seed-chosen">this deal was chosen by the room's creator (a set seed)</span>`;
  $("#status").innerHTML = status;
  if (s.your_connections > 1) {
    $("#notice").textContent = `your seat is open in ${s.your_connections} places: if that is not all you, someone else has your seat's link`;
    $("#notice").hidden = false;
  } else if (s.your_connections === 1) $("#notice").hidden = true;
  $("#trick").innerHTML = s.trick.slice(-s.seats.length).map((m, i) => `<div class="trick-play${i === s.trick.length - 1 || (s.table && m.seat === s.table.seat && playText(m.cards) === playText(s.table.cards)) ? " top-play" : ""}">
    <span class="who">${name(m.seat)}</span>${m.cards.length ? cardsHtml(m.cards, 40) : "<i>pass</i>"}</div>`).join("");
  // the hand
  const legal = s.legal || [];
  const playable = new Set(legal.flat());
  $("#hand").innerHTML = (s.hand || []).map((c) => `<span class="card${live.selected.has(c) ? " selected" : ""}${playable.has(c) ? " playable" : ""}" data-card="${esc(c)}">${cardSvg(c, 56)}</span>`).join("");
  document.querySelectorAll("#hand .card").forEach((el) => (el.onclick = () => {
    const c = el.dataset.card;
    live.selected.has(c) ? live.selected.delete(c) : live.selected.add(c);
    render();
  }));
  const mine = s.legal !== null;
  $("#play").disabled = !mine; $("#pass").disabled = !mine || !legal.some((p) => p.length === 0);
  $("#coach").disabled = !mine; $("#clear").disabled = !mine;
  if (mine && live.selected.size) {
    const sel = [...live.selected].sort().join(" ");
    const ok = legal.some((p) => [...p].sort().join(" ") === sel);
    if (!ok) say(`${[...live.selected].join(" ")} is not among your legal plays; Play asks the referee why`, true);
    else say(`${[...live.selected].join(" ")} is a legal play`);
  }
  $("#legal-count").textContent = String(legal.length);
  $("#legal").innerHTML = legal.filter((p) => p.length).map((p) => `<span class="chip legal-play" data-cards="${esc(p.join(" "))}">${esc(p.join(" "))}</span>`).join("");
  document.querySelectorAll(".legal-play").forEach((el) => (el.onclick = () => { live.selected = new Set(el.dataset.cards.split(" ")); render(); }));
  $("#next-match").hidden = !(s.over && (s.you !== null || s.watch));
  $("#pace-box").hidden = !s.watch; $("#pace-value").textContent = s.pace;
  if (document.activeElement !== $("#pace-live")) $("#pace-live").value = s.pace;
  $("#scores").innerHTML = `<p>${esc(s.variant.name)} &middot; match ${esc(s.match)}</p><table class="scores">${s.seats.map((x, i) => `<tr><td>${esc(x.name)}</td><td>${esc(s.scores[i])}</td></tr>`).join("")}</table>`;
  $("#results").innerHTML = s.results.map((r) => `<p>Game ${esc(r.number)}: ${name(r.winner)} went out; payoffs ${esc(r.payoffs.join(", "))}</p>`).join("") +
    (s.over ? `<p><a id="replay-link" href="/?replay=${encodeURIComponent(s.room)}&match=${esc(s.match)}">Replay this match</a></p>` : "");
  $("#share").innerHTML = `<p class="note">Spectator link:<br><input readonly value="${esc(location.origin)}/?room=${esc(s.room)}"></p><p class="note">${esc(s.spectators)} watching</p>`;
}

// ---------------------------------------------------------------- replays

async function startReplay(room, match) {
  try { showReplay(await api(`/api/rooms/${encodeURIComponent(room)}/replay?match=${encodeURIComponent(match)}&coach=1`)); }
  catch (e) { $("#replay").hidden = false; $("#r-move").innerHTML = `<p class="error">${esc(e.message)}</p>`; }
}

function showReplay(data) {
  $("#lobby").hidden = true; $("#replay").hidden = false;
  const rec = data.record, steps = data.steps, n = steps.length;
  const seats = rec.seats || rec.games[0].deal.map((_, i) => `seat ${i}`);
  $("#where").textContent = `replay: ${rec.variant.name}` + (rec.info && rec.info.room ? `, room ${rec.info.room} match ${rec.info.match}` : "");  // text, not HTML
  let at = 0, timer = null;
  $("#r-jump").max = n;
  function draw() {
    const step = steps[Math.min(at, n - 1)], game = at < n ? step.game : rec.games.length;
    const hands = rec.games[game - 1].deal.map((h) => h.split(" "));
    let trick = [];
    steps.forEach((m, i) => {
      if (i >= at || m.game !== game) return;
      if (m.cards !== "pass") { const used = new Set(m.cards.split(" ")); hands[m.seat] = hands[m.seat].filter((c) => !used.has(c)); }
      trick = m.lead ? [m] : [...trick, m];
    });
    $("#rfelt").innerHTML = `<div>Game ${esc(game)} of ${esc(rec.games.length)}</div>` + hands.map((h, i) => `<div class="rseat${at < n && step.seat === i ? " acting" : ""}" data-seat="${i}">
      <span class="name">${esc(seats[i])}</span>${cardsHtml(h, 34)}</div>`).join("") +
      `<div>Trick: ${trick.map((m) => `${esc(seats[m.seat])}: ${esc(m.cards)}`).join(" &rarr; ") || "(new trick)"}</div>`;
    $("#r-step").textContent = `move ${at} of ${n}`;
    $("#r-jump").value = at;
    if (at < n) {
      $("#r-move").innerHTML = `<p>Next: <b>${esc(seats[step.seat])}</b> plays <span class="chip">${esc(step.cards)}</span></p>`;
      $("#r-coach").innerHTML = step.coach ? adviceHtml({ ...step.coach, why: `what the coach would play in ${seats[step.seat]}'s position, from that seat's information` }) : "";
    } else {
      const g = rec.games[rec.games.length - 1];
      $("#r-move").innerHTML = `<p id="r-final">Match over. Scores: ${rec.scores.map((x, i) => `${esc(seats[i])} ${esc(x)}`).join(", ")} (last game won by ${esc(seats[g.winner])})</p>`;
      $("#r-coach").innerHTML = "";
    }
  }
  const go = (k) => { at = Math.max(0, Math.min(n, k)); draw(); };
  $("#r-first").onclick = () => go(0); $("#r-prev").onclick = () => go(at - 1);
  $("#r-next").onclick = () => go(at + 1); $("#r-last").onclick = () => go(n);
  $("#r-jump").oninput = () => go(Number($("#r-jump").value));
  $("#r-play").onclick = () => {
    if (timer) { clearInterval(timer); timer = null; $("#r-play").textContent = "Play"; return; }
    $("#r-play").textContent = "Pause";
    timer = setInterval(() => { if (at >= n) { clearInterval(timer); timer = null; $("#r-play").textContent = "Play"; } else go(at + 1); }, 700);
  };
  draw();
}

// ---------------------------------------------------------------- start

if (params.get("replay")) startReplay(params.get("replay"), params.get("match") || "1");
else if (params.get("room")) startTable(params.get("room"), params.get("token"));
else startLobby();
