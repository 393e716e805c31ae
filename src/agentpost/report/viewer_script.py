"""The trajectory viewer's controls (HTML) and its one inline script (plain ES2017, no library).

The script reads the index (``#ap-index`` embedded, or ``window.__apIndex`` from the external
``index.js``), fills the filter menus, and lists a page of the trajectories that match the
filters, the numeric ranges and the search box, in the order of the column last clicked. A row
click or the location hash ``#traj=ID[&turn=N]`` opens one trajectory: its shard is read then
(an embedded block parsed, or ``s-NNNNNN.js`` loaded from the data folder) and kept for the
next one. The search box matches ids, tasks and agents; texts too when the data is embedded
(its shards are parsed on the first such search). It builds DOM nodes with ``textContent``
only, never innerHTML from data, so no trajectory text can inject markup into the report.

Layer: pure.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

PAGE = 100  # rows per page of the list

_COLUMNS = [("id", "trajectory", "l"), ("task", "task", "l"), ("agent", "agent", "l"),
            ("resolved", "resolved", ""), ("turns", "turns", ""), ("tokens", "tokens", ""),
            ("unprod", "unprod. turns", ""), ("h", "mean h", ""), ("flags", "flags", "l")]  # fmt: skip
_NUMERIC = {"turns", "tokens", "unprod", "h"}


def controls(data_dir: str | None) -> str:
    """The viewer's HTML: filter menus, search, the list (sortable headers, a row of range boxes
    under the numeric columns, paging) and the detail pane."""
    heads = "".join(f'<th class="{c} tv-sort" data-key="{k}">{escape(h)}</th>'
                    for k, h, c in _COLUMNS)  # fmt: skip
    ranges = "".join(
        f'<th><input class="tv-range" data-key="{k}" data-side="min" type="number" '
        f'step="any" placeholder="≥" aria-label="{k} at least">'
        f'<input class="tv-range" data-key="{k}" data-side="max" type="number" step="any" '
        f'placeholder="≤" aria-label="{k} at most"></th>'
        if k in _NUMERIC
        else "<th></th>"
        for k, _, _ in _COLUMNS
    )
    where = f' data-dir="{escape(data_dir, quote=True)}"' if data_dir else ""
    return f"""<div id="tv"{where}>
<div class="tv-controls">
<label>agent <select id="tv-agent"><option value="">all</option></select></label>
<label>task <select id="tv-task"><option value="">all</option></select></label>
<label>outcome <select id="tv-outcome"><option value="">all</option>
<option value="1">resolved</option><option value="0">not resolved</option>
<option value="?">unknown</option></select></label>
<label>behaviour <select id="tv-flag"><option value="">any</option></select></label>
<label>search <input id="tv-search" type="search"></label>
<span id="tv-count"></span>
</div>
<div class="tw tv-list"><table id="tv-list"><thead><tr>{heads}</tr>
<tr class="tv-ranges">{ranges}</tr></thead><tbody></tbody></table></div>
<div class="tv-pager"><button id="tv-prev" type="button">previous</button>
<span id="tv-page"></span><button id="tv-next" type="button">next</button></div>
<div id="tv-detail"></div>
</div>"""


SCRIPT = r"""
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var root = $('tv'), DIR = root.dataset.dir || null, PAGE = %(page)d;
  var D = DIR ? window.__apIndex : JSON.parse($('ap-index').textContent);
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  if (!D) {
    $('tv-detail').appendChild(el('p', 'The trajectory data of this report is missing: the folder ' +
      DIR + '/ must stay beside the page.', 'note caveat'));
    return;
  }
  var C = D.cols, N = D.n, F = D.filters;
  var WORDS = {R: 'repeated call', O: 'over-exploration', E: 'tool error', r: 'read-only'};
  var byId = new Map();
  for (var i = 0; i < N; i++) byId.set(C.id[i], i);
  var state = {key: null, desc: false, page: 0}, shown = [], shards = {}, waiting = {}, texts = null;
  function num(v) {
    if (v === null || v === undefined) return 'NA';
    if (typeof v !== 'number') return String(v);
    if (Math.abs(v) >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    return Number.isInteger(v) ? String(v) : v.toFixed(3);
  }
  function fill(sel, values, labels) {
    values.forEach(function (v, k) {
      var o = el('option', labels ? labels[v] : v); o.value = v; sel.appendChild(o);
    });
  }
  fill($('tv-agent'), D.agents);
  fill($('tv-task'), D.tasks);
  fill($('tv-flag'), Object.keys(F), F);
  $('tv-search').placeholder = DIR ? 'id, task, agent' : 'id, task, agent, text';
  function value(key, i) {
    if (key === 'task') return D.tasks[C.task[i]] || '';
    if (key === 'agent') return D.agents[C.agent[i]] || '';
    if (key === 'resolved') return C.resolved[i] === null ? null : C.resolved[i] ? 1 : 0;
    return C[key][i];
  }
  function shownTags(i) {
    var words = C.flags[i].split('').filter(function (c) { return WORDS[c]; })
      .map(function (c) { return WORDS[c]; });
    return words.concat(C.tags[i]).join(', ');
  }
  function ranges() {
    var out = [];
    document.querySelectorAll('.tv-range').forEach(function (box) {
      if (box.value !== '' && !isNaN(Number(box.value))) out.push([box.dataset.key, box.dataset.side, Number(box.value)]);
    });
    return out;
  }
  function shard(n) {  // a Promise of shard n's entries
    if (shards[n]) return Promise.resolve(shards[n]);
    if (!DIR) { shards[n] = JSON.parse($('ap-shard-' + n).textContent); return Promise.resolve(shards[n]); }
    if (!waiting[n]) {
      var w = waiting[n] = {};
      w.promise = new Promise(function (ok, fail) {
        var s = document.createElement('script');
        s.src = DIR + '/s-' + String(n).padStart(6, '0') + '.js';
        w.ok = ok;
        w.fail = function (e) { delete waiting[n]; s.remove(); fail(e); };
        s.onerror = function () { w.fail(new Error('cannot read ' + s.src)); };
        document.head.appendChild(s);
      });
    }
    return waiting[n].promise;
  }
  window.__apShard = function (n, digest, entries) {
    var w = waiting[n];
    if (!w || shards[n]) return;
    if (digest !== D.digests[n]) { w.fail(new Error('the data folder belongs to another build of this report')); return; }
    shards[n] = entries; w.ok(entries);
  };
  function loadTexts() {  // embedded data only: every trajectory's text, for the search box
    if (texts) return texts;
    texts = new Array(N);
    for (var i = 0; i < N; i++) {
      var sh = shards[C.shard[i]] || (shards[C.shard[i]] = JSON.parse($('ap-shard-' + C.shard[i]).textContent));
      var t = sh[C.pos[i]];
      texts[i] = t.turns.map(function (u) {
        return (u.text || '') + ' ' + u.calls.map(function (c) { return c.cmd; }).join(' ');
      }).join(' ').toLowerCase();
    }
    return texts;
  }
  function matches(i, f) {
    if (f.a !== null && C.agent[i] !== f.a) return false;
    if (f.k !== null && C.task[i] !== f.k) return false;
    var r = C.resolved[i];
    if (f.o === '1' && r !== true) return false;
    if (f.o === '0' && r !== false) return false;
    if (f.o === '?' && r !== null) return false;
    if (f.f && f.f.length === 1 && C.flags[i].indexOf(f.f) < 0) return false;
    if (f.f && f.f.length > 1 && C.tags[i].indexOf(f.f) < 0) return false;
    for (var j = 0; j < f.r.length; j++) {
      var v = C[f.r[j][0]][i];
      if (v === null || (f.r[j][1] === 'min' ? v < f.r[j][2] : v > f.r[j][2])) return false;
    }
    if (f.q) {
      var hay = (C.id[i] + ' ' + value('task', i) + ' ' + value('agent', i)).toLowerCase();
      if (hay.indexOf(f.q) < 0 && !(f.t && f.t[i].indexOf(f.q) >= 0)) return false;
    }
    return true;
  }
  function compare(key, desc) {
    return function (a, b) {
      var x = value(key, a), y = value(key, b);
      if (x === null || x === undefined) return (y === null || y === undefined) ? a - b : 1;
      if (y === null || y === undefined) return -1;
      var c = x < y ? -1 : x > y ? 1 : 0;
      return (desc ? -c : c) || a - b;
    };
  }
  function refilter() {
    var q = $('tv-search').value.toLowerCase();
    var a = $('tv-agent').value, k = $('tv-task').value;
    var f = {a: a ? D.agents.indexOf(a) : null, k: k ? D.tasks.indexOf(k) : null, o: $('tv-outcome').value,
             f: $('tv-flag').value, r: ranges(), q: q, t: q && !DIR ? loadTexts() : null};
    shown = [];
    for (var i = 0; i < N; i++) if (matches(i, f)) shown.push(i);
    if (state.key) shown.sort(compare(state.key, state.desc));
    state.page = 0;
    list();
  }
  function list() {
    var body = $('tv-list').tBodies[0], pages = Math.max(1, Math.ceil(shown.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    body.textContent = '';
    shown.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (i) {
      var tr = el('tr'); tr.dataset.id = C.id[i]; tr.className = 'tv-row';
      [C.id[i], value('task', i), value('agent', i)].forEach(function (v) { tr.appendChild(el('td', v, 'l')); });
      tr.appendChild(el('td', C.resolved[i] === null ? 'unknown' : C.resolved[i] ? 'yes' : 'no'));
      ['turns', 'tokens', 'unprod', 'h'].forEach(function (k) { tr.appendChild(el('td', num(C[k][i]))); });
      tr.appendChild(el('td', shownTags(i), 'l'));
      tr.addEventListener('click', function () { location.hash = 'traj=' + encodeURIComponent(C.id[i]); });
      body.appendChild(tr);
    });
    $('tv-count').textContent = shown.length + ' of ' + N + ' trajectories';
    $('tv-page').textContent = shown.length ? 'rows ' + (state.page * PAGE + 1) + '–' +
      Math.min(shown.length, (state.page + 1) * PAGE) + ' of ' + shown.length : 'no rows';
    $('tv-prev').disabled = state.page === 0;
    $('tv-next').disabled = state.page >= pages - 1;
    document.querySelectorAll('.tv-sort').forEach(function (th) {
      th.dataset.order = th.dataset.key === state.key ? (state.desc ? 'desc' : 'asc') : '';
    });
  }
  function flagWords(f) {
    return f.split('').map(function (c) { return WORDS[c] || c; }).join(', ');
  }
  function turnBlock(t, u) {
    var box = el('div', null, 'tv-turn'); box.id = 'tv-turn-' + u.i;
    if (/[ROE]/.test(u.f)) box.className += ' tv-unprod';
    var head = el('div', null, 'tv-head');
    head.appendChild(el('b', 'turn ' + u.i + (u.step !== null && u.step !== u.i ? ' (step ' + u.step + ')' : '')));
    head.appendChild(el('span', 'tokens in ' + num(u['in']) + ', cached ' + num(u.cached) + ', out ' + num(u.out)));
    head.appendChild(el('span', 'h ' + num(u.h)));
    head.appendChild(el('span', 'adv. ' + num(u.adv)));
    head.appendChild(el('span', u.f ? flagWords(u.f) : 'no flag', 'tv-flags'));
    box.appendChild(head);
    var s = t.scvd;
    if (s && s.step !== null && s.step === (u.step !== null ? u.step : u.i)) {
      box.appendChild(el('div', 'SCVD candidate boundary (t_c): y_c = ' + num(s.y_c) +
        ', verified afterwards: ' + (s.I_v === null ? 'unknown' : s.I_v ? 'yes' : 'no') +
        (s.z ? ', z = ' + s.z : '') + (s.tags.length ? ' [' + s.tags.join(', ') + ']' : ''), 'tv-marker'));
    }
    if (u.reasoning) box.appendChild(el('pre', u.reasoning, 'tv-reason'));
    if (u.text) box.appendChild(el('pre', u.text, 'tv-text'));
    u.calls.forEach(function (c, j) {
      box.appendChild(el('pre', '$ ' + c.name + ': ' + c.cmd, 'tv-call'));
      var o = u.obs[j];
      if (o) {
        var meta = [o.exit !== null ? 'exit ' + o.exit : '', o.err ? 'error' : '', o.timeout ? 'timed out' : '']
          .filter(Boolean).join(', ');
        box.appendChild(el('pre', (meta ? '[' + meta + '] ' : '') + (o.text || ''), 'tv-obs'));
      }
    });
    return box;
  }
  var opening = 0;
  function open(id, turn) {
    var d = $('tv-detail'), i = byId.get(id), mine = ++opening;
    d.textContent = '';
    if (i === undefined) { d.appendChild(el('p', 'No trajectory ' + id + ' in this report.', 'note')); return; }
    d.dataset.state = 'loading';
    shard(C.shard[i]).then(function (entries) {
      if (mine !== opening) return;
      var t = entries[C.pos[i]];
      d.appendChild(el('h3', C.id[i]));
      d.appendChild(el('p', 'task ' + value('task', i) + ' · agent ' + value('agent', i) + ' · run ' +
        (C.run[i] >= 0 ? D.runs[C.run[i]] : 'NA') + ' · resolved ' +
        (C.resolved[i] === null ? 'unknown' : C.resolved[i] ? 'yes' : 'no') +
        ' · ' + num(C.tokens[i]) + ' tokens · ' + C.turns[i] + ' turns', 'src'));
      if (t.instruction) d.appendChild(el('pre', t.instruction, 'tv-text'));
      t.turns.forEach(function (u) { d.appendChild(turnBlock(t, u)); });
      var target = turn !== undefined ? $('tv-turn-' + turn) : d;
      if (target) { target.classList.add('tv-target'); target.scrollIntoView(); }
      d.dataset.state = 'open';
    }, function (e) {
      if (mine !== opening) return;
      d.appendChild(el('p', 'Cannot open ' + id + ': ' + e.message + '.', 'note caveat'));
      d.dataset.state = 'error';
    });
  }
  function route() {
    var h = location.hash.slice(1), p = {};
    h.split('&').forEach(function (kv) {
      var i = kv.indexOf('='); if (i > 0) p[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
    if (p.traj) { open(p.traj, p.turn); return; }
    if (p.agent !== undefined || p.flag !== undefined) {  // a chart bar: its trajectories
      $('tv-agent').value = D.agents.indexOf(p.agent) >= 0 ? p.agent : '';
      $('tv-flag').value = p.flag || '';
      refilter();
      root.scrollIntoView();
    }
  }
  document.querySelectorAll('.tv-sort').forEach(function (th) {
    th.addEventListener('click', function () {
      var k = th.dataset.key;
      state.desc = state.key === k ? !state.desc : _NUMERIC_.indexOf(k) >= 0;
      state.key = k;
      shown.sort(compare(state.key, state.desc));
      state.page = 0;
      list();
    });
  });
  ['tv-agent', 'tv-task', 'tv-outcome', 'tv-flag'].forEach(function (id) { $(id).addEventListener('change', refilter); });
  $('tv-search').addEventListener('input', refilter);
  document.querySelectorAll('.tv-range').forEach(function (box) { box.addEventListener('input', refilter); });
  $('tv-prev').addEventListener('click', function () { state.page -= 1; list(); });
  $('tv-next').addEventListener('click', function () { state.page += 1; list(); });
  window.addEventListener('hashchange', route);
  refilter();
  route();
})();
""".replace("%(page)d", str(PAGE)).replace("_NUMERIC_", str(sorted(_NUMERIC)))

CSS = """
.tv-controls{display:flex;flex-wrap:wrap;gap:10px;font-size:13px;margin:6px 0}
.tv-list{max-height:420px;overflow-y:auto}
tr.tv-row{cursor:pointer}
tr.tv-row:hover{background:#eef2f6}
th.tv-sort{cursor:pointer;user-select:none}
th.tv-sort[data-order=asc]::after{content:" ▲"}
th.tv-sort[data-order=desc]::after{content:" ▼"}
tr.tv-ranges th{background:#fafbfc;padding:2px 3px}
input.tv-range{width:4.2em;font-size:11px;display:block}
.tv-pager{display:flex;gap:10px;align-items:center;font-size:12.5px;margin:4px 0}
.tv-turn{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 8px}
.tv-unprod{border-left:4px solid #D55E00}
.tv-target{outline:2px solid #0072B2}
.tv-head{display:flex;gap:14px;font-size:12.5px}
.tv-flags{color:#a33}
.tv-marker{background:#e8f4fd;border-left:3px solid #0072B2;padding:3px 8px;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;font-size:12px;margin:3px 0;max-height:300px;overflow:auto}
.tv-call{background:#f4f4f4}
.tv-obs{background:#fbfbf3;color:#444}
.tv-reason{color:#666;font-style:italic}
.agent{border-top:1px solid #eee;padding-top:4px}
"""


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source that admits exactly ``script`` ('sha256-…')."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"
