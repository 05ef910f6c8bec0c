/**
 * The dashboard's one page: HTML, CSS and a plain script, with the report's chart library inlined
 * (chartLibrary(), the same standalone build the HTML report embeds), so nothing is fetched from anywhere
 * but the dashboard itself and the page works offline. The script writes every figure with textContent,
 * never as HTML: journal text (a strategy's reasons, a gateway's messages) cannot become markup.
 *
 * Every figure carries its raw number in `data-value` (the browser test compares those with the journal
 * and the simulator), and the body says `data-ready="true"` once the first snapshot is drawn.
 */
import { chartLibrary } from '../../report/html.ts';

const STYLE = `
:root { --bg:#f8fafc; --card:#fff; --ink:#0f172a; --muted:#64748b; --line:#e2e8f0; --good:#16a34a; --bad:#dc2626; --warn:#d97706; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; background:var(--bg); color:var(--ink); }
header.top { position:sticky; top:0; z-index:5; display:flex; gap:.75rem; align-items:center; flex-wrap:wrap; padding:.6rem 1rem; background:#0f172a; color:#fff; }
header.top h1 { font-size:1rem; margin:0; }
#conn { font-size:.8rem; padding:.1rem .5rem; border-radius:1rem; background:#475569; }
#conn.live { background:var(--good); }
#conn.down { background:var(--bad); }
header.top .spacer { flex:1; }
main { padding:.75rem; max-width:1400px; margin:0 auto; }
section.account { margin-bottom:1.5rem; }
section.account > h2 { font-size:1.1rem; margin:.25rem 0 .5rem; display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; }
.grid { display:grid; gap:.75rem; grid-template-columns:repeat(auto-fit, minmax(min(100%, 340px), 1fr)); }
.card { background:var(--card); border:1px solid var(--line); border-radius:.5rem; padding:.6rem .75rem; min-width:0; }
.card h3 { font-size:.8rem; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:0 0 .4rem; }
.figures { display:grid; grid-template-columns:repeat(auto-fit, minmax(120px, 1fr)); gap:.4rem; }
.figure .label { font-size:.75rem; color:var(--muted); }
.figure .value { font-size:1.25rem; font-variant-numeric:tabular-nums; }
.pos { color:var(--good); } .neg { color:var(--bad); }
.badge { font-size:.75rem; padding:.1rem .5rem; border-radius:1rem; background:#e2e8f0; color:var(--ink); }
.badge.ACTIVE { background:#dcfce7; color:#166534; } .badge.REDUCING { background:#fef3c7; color:#92400e; } .badge.HALTED { background:#fee2e2; color:#991b1b; }
.bar { height:.6rem; background:#e2e8f0; border-radius:.3rem; overflow:hidden; margin:.15rem 0 .5rem; }
.bar > span { display:block; height:100%; background:var(--good); }
.bar.warn > span { background:var(--warn); } .bar.bad > span { background:var(--bad); }
.limit-row { display:flex; justify-content:space-between; gap:.5rem; font-variant-numeric:tabular-nums; flex-wrap:wrap; }
.table-wrap { overflow-x:auto; }
table { width:100%; border-collapse:collapse; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:.25rem .4rem; border-bottom:1px solid var(--line); }
th, td.num { white-space:nowrap; }
td.num, th.num { text-align:right; }
.empty { color:var(--muted); font-style:italic; }
ul.list { list-style:none; margin:0; padding:0; max-height:16rem; overflow-y:auto; }
ul.list li { padding:.25rem 0; border-bottom:1px solid var(--line); }
ul.list li.refused { color:#991b1b; }
.time { color:var(--muted); font-size:.75rem; margin-right:.4rem; font-variant-numeric:tabular-nums; }
.chart { height:180px; }
.actions { display:flex; gap:.5rem; flex-wrap:wrap; }
button { font:inherit; padding:.5rem .9rem; border-radius:.4rem; border:1px solid #94a3b8; background:#fff; cursor:pointer; min-height:2.5rem; }
button.danger { background:var(--bad); border-color:var(--bad); color:#fff; font-weight:600; }
dialog { border:none; border-radius:.6rem; padding:1rem; max-width:26rem; width:calc(100% - 2rem); }
dialog::backdrop { background:rgba(15,23,42,.6); }
dialog .actions { justify-content:flex-end; margin-top:1rem; }
#toast { position:fixed; bottom:1rem; left:50%; transform:translateX(-50%); background:#0f172a; color:#fff; padding:.5rem 1rem; border-radius:.4rem; max-width:90%; display:none; z-index:10; }
@media (max-width: 640px) { main { padding:.4rem; } .figure .value { font-size:1.1rem; } .chart { height:150px; } }
`;

/** The page's script (plain ES2017, no modules): it runs in whatever browser a phone has. */
const SCRIPT = `
(function () {
  'use strict';
  var LC = window.LightweightCharts;
  var views = {};
  var state = { received: [], lastSeq: 0 };
  window.ticklineDashboard = state;

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'cls') node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) node.appendChild(arguments[i]);
    return node;
  }
  function money(v) { return v == null || !isFinite(v) ? '—' : (v < 0 ? '-' : '') + '$' + Math.abs(v).toFixed(2); }
  function signCls(v) { return v > 0 ? 'pos' : v < 0 ? 'neg' : ''; }
  function clock(t) { return t == null ? '—' : new Date(t).toISOString().replace('T', ' ').slice(0, 19) + 'Z'; }
  function age(ms) {
    if (ms == null) return '—';
    var s = Math.round(ms / 1000);
    return s < 120 ? s + ' s' : s < 7200 ? Math.round(s / 60) + ' min' : Math.round(s / 3600) + ' h';
  }
  function figure(field, label, value, text, cls) {
    return el('div', { cls: 'figure' }, el('div', { cls: 'label', text: label }),
      el('div', { cls: 'value ' + (cls || ''), 'data-field': field, 'data-value': String(value), text: text }));
  }
  function fill(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    for (var i = 1; i < arguments.length; i++) if (arguments[i] != null) node.appendChild(arguments[i]);
  }
  function table(heads, rows, numeric, rowAttrs) {
    if (rows.length === 0) return el('p', { cls: 'empty', text: 'none' });
    var head = el('tr');
    heads.forEach(function (h, k) { head.appendChild(el('th', { cls: numeric[k] ? 'num' : '', text: h })); });
    var body = el('tbody');
    rows.forEach(function (row, i) {
      var tr = el('tr', rowAttrs ? rowAttrs(i) : null);
      row.forEach(function (cell, k) {
        var td = el('td', { cls: numeric[k] ? 'num' : '' });
        if (cell && typeof cell === 'object') { td.textContent = cell.text; td.setAttribute('data-field', cell.field); td.setAttribute('data-value', String(cell.value)); if (cell.cls) td.className += ' ' + cell.cls; }
        else td.textContent = cell == null ? '—' : String(cell);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    return el('div', { cls: 'table-wrap' }, el('table', null, el('thead', null, head), body));
  }

  function toast(text) {
    var t = document.getElementById('toast');
    t.textContent = text; t.style.display = 'block';
    clearTimeout(toast.timer); toast.timer = setTimeout(function () { t.style.display = 'none'; }, 8000);
  }

  var pendingAction = null;
  function ask(action, account, text, bot) {
    pendingAction = { action: action, account: account, bot: bot };
    document.getElementById('confirm-text').textContent = text;
    document.getElementById('confirm').showModal();
  }
  function act() {
    var a = pendingAction; pendingAction = null;
    document.getElementById('confirm').close();
    if (!a) return;
    toast(a.action + ' sent ...');
    fetch('/api/actions', { method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'same-origin',
      body: JSON.stringify(a.bot ? { action: a.action, account: a.account, bot: a.bot, confirm: true } : { action: a.action, account: a.account, confirm: true }) })
      .then(function (r) { return r.json(); })
      .then(function (body) {
        if (body.results) toast(body.results.map(function (r) { return r.message; }).join(' | '));
        else toast(body.error || 'action failed');
        document.body.setAttribute('data-last-action', JSON.stringify(body));
      })
      .catch(function (e) { toast('action failed: ' + e); });
  }

  function makeChart(node) {
    var chart = LC.createChart(node, {
      autoSize: true,
      layout: { background: { color: '#ffffff' }, textColor: '#334155', fontSize: 11 },
      grid: { vertLines: { color: '#f1f5f9' }, horzLines: { color: '#f1f5f9' } },
      timeScale: { timeVisible: true, secondsVisible: false, borderColor: '#e2e8f0' },
      rightPriceScale: { borderColor: '#e2e8f0' },
    });
    var series = chart.addSeries(LC.LineSeries, { color: '#2563eb', lineWidth: 2, priceFormat: { type: 'price', precision: 2, minMove: 0.01 } });
    return { chart: chart, series: series, last: -Infinity, count: 0 };
  }
  function toLine(points) {
    var out = [];
    points.forEach(function (p) {
      var t = Math.floor(p.time / 1000);
      if (out.length > 0 && out[out.length - 1].time >= t) out[out.length - 1].value = p.equity;
      else out.push({ time: t, value: p.equity });
    });
    return out;
  }
  function setLine(c, points) {
    var data = toLine(points);
    c.series.setData(data);
    c.last = data.length ? data[data.length - 1].time : -Infinity;
    c.count = data.length;
    c.chart.timeScale().fitContent();
  }
  function addPoint(c, time, equity) {
    var t = Math.floor(time / 1000);
    if (t < c.last) return;
    c.series.update({ time: t, value: equity });
    if (t > c.last) c.count++;
    c.last = t;
  }

  function view(snap) {
    var v = views[snap.id];
    if (v) return v;
    var s = el('section', { cls: 'account', 'data-account': snap.id });
    var title = el('h2');
    var parts = {};
    ['summary', 'bots', 'headroom', 'evaluation', 'positions', 'orders', 'decisions', 'anomalies', 'health', 'calendar'].forEach(function (k) { parts[k] = el('div'); });
    var dayNode = el('div', { cls: 'chart', 'data-chart': 'day' });
    var sessionNode = el('div', { cls: 'chart', 'data-chart': 'session' });
    var pause = el('button', { 'data-action': 'pause', text: 'Pause' });
    var resume = el('button', { 'data-action': 'resume', text: 'Resume' });
    var kill = el('button', { cls: 'danger', 'data-action': 'kill', text: 'Kill switch' });
    pause.onclick = function () { ask('pause', snap.id, 'Pause ' + snap.name + '? Only orders that reduce a position will pass until you resume.'); };
    resume.onclick = function () { ask('resume', snap.id, 'Resume ' + snap.name + '? The strategy may open new positions again.'); };
    kill.onclick = function () { ask('kill', snap.id, 'Kill switch on ' + snap.name + ': cancel every working order, close every position and halt the bot?'); };
    s.appendChild(title);
    s.appendChild(el('div', { cls: 'grid' },
      el('div', { cls: 'card' }, el('h3', { text: 'Account' }), parts.summary, el('div', { cls: 'actions' }, pause, resume, kill)),
      el('div', { cls: 'card' }, el('h3', { text: 'Bots' }), parts.bots),
      el('div', { cls: 'card' }, el('h3', { text: 'Room under each limit' }), parts.headroom, parts.evaluation),
      el('div', { cls: 'card' }, el('h3', { text: 'Equity today' }), dayNode),
      el('div', { cls: 'card' }, el('h3', { text: 'Equity this session' }), sessionNode),
      el('div', { cls: 'card' }, el('h3', { text: 'Positions' }), parts.positions),
      el('div', { cls: 'card' }, el('h3', { text: 'Working orders' }), parts.orders),
      el('div', { cls: 'card' }, el('h3', { text: 'Latest decisions (refusals first)' }), parts.decisions),
      el('div', { cls: 'card' }, el('h3', { text: 'Anomalies' }), parts.anomalies),
      el('div', { cls: 'card' }, el('h3', { text: 'Connection health' }), parts.health),
      el('div', { cls: 'card' }, el('h3', { text: 'Calendar' }), parts.calendar)));
    document.getElementById('accounts').appendChild(s);
    v = { section: s, title: title, parts: parts, day: makeChart(dayNode), session: makeChart(sessionNode), tradingDay: null, points: null };
    views[snap.id] = v;
    fetch('/api/accounts/' + encodeURIComponent(snap.id) + '/equity', { credentials: 'same-origin' })
      .then(function (r) { return r.json(); })
      .then(function (body) { v.points = body.points; drawCurves(v, v.tradingDay); })
      .catch(function (e) { toast('equity curve unavailable: ' + e); });
    return v;
  }
  function drawCurves(v, tradingDay) {
    if (!v.points) return;
    setLine(v.session, v.points);
    setLine(v.day, v.points.filter(function (p) { return p.tradingDay === tradingDay; }));
  }

  function render(snap) {
    var v = view(snap);
    fill(v.title, document.createTextNode(snap.name + ' '),
      el('span', { cls: 'badge', text: snap.mode.toUpperCase() }),
      el('span', { cls: 'badge ' + snap.state.state, 'data-field': 'state', 'data-value': snap.state.state, text: snap.state.state + (snap.state.paused ? ' (paused)' : '') }),
      snap.passLock ? el('span', { cls: 'badge', 'data-field': 'pass-lock', 'data-value': String(snap.passLock.locked), text: 'pass-lock: ' + snap.passLock.reason }) : null,
      el('span', { cls: 'time', text: snap.strategy + ' · day ' + snap.tradingDay + ' · ' + clock(snap.time) }));
    fill(v.parts.summary,
      el('div', { cls: 'figures' },
        figure('balance', 'Balance', snap.balance, money(snap.balance)),
        figure('day-pnl', "Today's PnL", snap.dayPnl, money(snap.dayPnl), signCls(snap.dayPnl)),
        figure('equity', 'Equity', snap.equity, money(snap.equity)),
        figure('open-pnl', 'Open PnL', snap.openPnl, money(snap.openPnl), signCls(snap.openPnl))),
      el('p', { cls: 'time', text: snap.state.reason ? 'state: ' + snap.state.reason : '' }));
    fill.apply(null, [v.parts.bots].concat(snap.bots.map(function (b) {
      var button = el('button', { 'data-bot-action': b.paused ? 'resume' : 'pause', 'data-bot': b.id, text: b.paused ? 'Resume' : 'Pause' });
      button.onclick = function () {
        ask(b.paused ? 'resume' : 'pause', snap.id, b.paused
          ? 'Resume ' + b.id + ' on ' + snap.name + '? It may open new positions again.'
          : 'Pause ' + b.id + ' on ' + snap.name + '? It opens no new risk until you resume; its reductions, cancels and flattens pass.', b.id);
      };
      var held = b.positions.map(function (p) { return (p.size > 0 ? '+' : '') + p.size; }).join(' ') || 'flat';
      return el('div', { cls: 'limit-row', 'data-bot': b.id, 'data-paused': String(b.paused) },
        el('span', { text: b.id + (b.paused ? ' (paused)' : '') + ' · ' + held + ' · ' + money(b.netPnl) + ' · ' + b.trades + ' trades' }),
        button);
    })));
    var rooms = snap.headroom.map(function (h) {
      var used = Math.max(0, Math.min(1, h.used));
      var bar = el('div', { cls: 'bar' + (h.limit === 'personalDailyProfitTarget' ? '' : used > 0.8 ? ' bad' : used > 0.5 ? ' warn' : '') },
        el('span', { style: 'width:' + Math.round((h.limit === 'personalDailyProfitTarget' ? used : 1 - used) * 100) + '%' }));
      return el('div', { 'data-limit': h.limit },
        el('div', { cls: 'limit-row' }, el('span', { text: h.label + ' ' + money(h.amount) }),
          el('span', { 'data-field': 'room', 'data-value': String(h.room), text: (h.limit === 'personalDailyProfitTarget' ? 'to go ' : 'room ') + money(h.room) })),
        h.floor == null ? null : el('div', { cls: 'time', 'data-field': 'floor', 'data-value': String(h.floor), text: 'floor ' + money(h.floor) }),
        bar);
    });
    fill(v.parts.headroom, rooms.length ? el('div', null) : el('p', { cls: 'empty', text: 'no account limit known to the guard' }));
    rooms.forEach(function (r) { v.parts.headroom.firstChild.appendChild(r); });
    var e = snap.evaluation;
    if (e) {
      var pct = Math.max(0, Math.min(1, e.targetReached));
      fill(v.parts.evaluation, el('h3', { text: 'Evaluation: ' + e.name }),
        el('div', { cls: 'limit-row' }, el('span', { text: 'profit target ' + money(e.profitTarget) }),
          el('span', { 'data-field': 'target-reached', 'data-value': String(e.targetReached), text: Math.round(e.targetReached * 100) + '% (' + money(e.profit) + ')' })),
        el('div', { cls: 'bar' }, el('span', { style: 'width:' + Math.round(pct * 100) + '%' })),
        el('div', { cls: 'time', text: 'trading days ' + e.tradingDays + (e.minimumTradingDays != null ? ' of ' + e.minimumTradingDays + ' (' + e.daysLeft + ' left)' : '') +
          (e.consistencyShare != null ? ' · consistency ' + (e.consistent === false ? 'NOT met' : e.consistent ? 'met' : 'n/a') + ' (best day ' + money(e.bestDay) + ', below ' + Math.round(e.consistencyShare * 100) + '%)' : '') +
          (e.targetsMet ? ' · targets met' : '') }));
    } else fill(v.parts.evaluation);
    fill(v.parts.positions, table(['Contract', 'Size', 'Avg', 'Last', 'Open PnL'],
      snap.positions.map(function (p) {
        return [p.name, { text: (p.size > 0 ? '+' : '') + p.size, field: 'position-size', value: p.size }, p.averagePrice, p.lastPrice,
          { text: money(p.openPnl), field: 'open-pnl', value: p.openPnl, cls: signCls(p.openPnl) }];
      }), [false, true, true, true, true], function (i) { return { 'data-contract': snap.positions[i].contractId }; }));
    fill(v.parts.orders, table(['Order', 'Contract', 'Side', 'Size', 'Type', 'Price', 'State'],
      snap.orders.map(function (o) { return [o.id, o.name, o.side, { text: o.filledSize ? o.filledSize + '/' + o.size : String(o.size), field: 'order-size', value: o.size }, o.type, o.price, o.state]; }),
      [false, false, false, true, false, true, false], function (i) { return { 'data-order': snap.orders[i].id }; }));
    var decisions = el('ul', { cls: 'list' });
    snap.decisions.forEach(function (d) {
      decisions.appendChild(el('li', { cls: d.accepted ? '' : 'refused' }, el('span', { cls: 'time', text: clock(d.time) }),
        document.createTextNode((d.accepted ? 'accepted ' : 'REFUSED ') + d.subject + (d.code ? ' · ' + d.code : '') + (d.message ? ': ' + d.message : ''))));
    });
    fill(v.parts.decisions, snap.decisions.length ? decisions : el('p', { cls: 'empty', text: 'no decision yet' }));
    var anomalies = el('ul', { cls: 'list' });
    snap.anomalies.forEach(function (a) { anomalies.appendChild(el('li', null, el('span', { cls: 'time', text: clock(a.time) }), document.createTextNode(a.message))); });
    fill(v.parts.anomalies, snap.anomalies.length ? anomalies : el('p', { cls: 'empty', text: 'none' }));
    var h = snap.health;
    fill(v.parts.health,
      el('div', { cls: 'figures' },
        figure('visible', 'Positions', h.visible, h.visible ? 'visible' : 'BLIND', h.visible ? 'pos' : 'neg'),
        figure('user-hub', 'User hub', h.userHub, h.userHub, h.userHub === 'connected' ? 'pos' : h.userHub === 'none' ? '' : 'neg'),
        figure('market-hub', 'Market hub', h.marketHub, h.marketHub, h.marketHub === 'connected' ? 'pos' : h.marketHub === 'none' ? '' : 'neg')),
      h.blindReason ? el('p', { cls: 'neg', text: h.blindReason }) : null,
      table(['Last bar', 'Bar end', 'Age'], h.bars.map(function (b) { return [b.contractId, clock(b.lastBarAt), { text: age(b.ageMs), field: 'bar-age', value: b.ageMs }]; }), [false, false, true]),
      table(['Poll', 'Last ok', 'Error'], h.polls.map(function (p) { return [p.name, p.lastOkAt == null ? '—' : age(snap.time - p.lastOkAt) + ' ago', p.error || '']; }), [false, true, false]));
    function short(t) { return t == null ? '—' : clock(t).slice(0, 16) + 'Z'; }
    fill(v.parts.calendar, table(['Month', 'Market', 'Next close', 'Next roll'],
      snap.calendar.map(function (c) {
        return [c.month, c.open ? 'open' : 'closed' + (c.nextOpen ? ', opens ' + short(c.nextOpen) : ''), short(c.nextClose),
          c.nextRoll ? (c.nextRoll.kind === 'roll' ? clock(c.nextRoll.at).slice(0, 10) + (c.nextRoll.to ? ' to ' + c.nextRoll.to.replace(/^CON.F.US./, '') : '') : 'expires; flat by ' + short(c.nextRoll.at)) : '—'];
      }), [false, false, false, false], function (i) { return { title: snap.calendar[i].contractId }; }));
    v.section.querySelector('[data-action=resume]').disabled = !snap.state.paused;
    v.section.querySelector('[data-action=pause]').disabled = snap.state.state !== 'ACTIVE';
    if (v.points) {
      if (v.tradingDay !== snap.tradingDay) { v.tradingDay = snap.tradingDay; drawCurves(v, snap.tradingDay); }
      v.points.push({ time: snap.time, equity: snap.equity, tradingDay: snap.tradingDay });
      addPoint(v.session, snap.time, snap.equity);
      addPoint(v.day, snap.time, snap.equity);
    } else v.tradingDay = snap.tradingDay;
    document.body.setAttribute('data-ready', 'true');
  }

  document.getElementById('confirm-yes').onclick = act;
  document.getElementById('confirm-no').onclick = function () { pendingAction = null; document.getElementById('confirm').close(); };
  document.getElementById('kill-all').onclick = function () { ask('kill', 'all', 'Kill switch on EVERY account: cancel every working order, close every position and halt every bot?'); };

  var conn = document.getElementById('conn');
  var source = new EventSource('/api/events');
  source.onopen = function () { conn.textContent = 'live'; conn.className = 'live'; };
  source.onerror = function () { conn.textContent = 'reconnecting'; conn.className = 'down'; };
  source.addEventListener('snapshot', function (event) { render(JSON.parse(event.data)); });
  source.addEventListener('entry', function (event) {
    var data = JSON.parse(event.data);
    state.lastSeq = data.entry.seq;
    state.received.push({ seq: data.entry.seq, at: Date.now() });
    if (state.received.length > 10000) state.received.splice(0, 5000);
    document.body.setAttribute('data-last-seq', String(data.entry.seq));
  });
})();
`;

export function dashboardPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>tickline dashboard</title>
<style>${STYLE}</style>
</head>
<body data-ready="false">
<header class="top"><h1>tickline</h1><span id="conn">connecting</span><span class="spacer"></span><button id="kill-all" class="danger" data-action="kill-all">Kill all</button></header>
<main id="accounts"></main>
<dialog id="confirm"><p id="confirm-text"></p><div class="actions"><button id="confirm-no">Cancel</button><button id="confirm-yes" class="danger">Confirm</button></div></dialog>
<div id="toast" role="status"></div>
<script nonce="${nonce}">${chartLibrary()}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}
