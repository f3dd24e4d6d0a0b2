// The behaviour of `opprof export html`'s page (built into the page by
// export_html.c): the operator table sorts on a click on its header and
// filters by name; the flame graph zooms into a clicked frame and
// highlights the frames a regular expression matches. Everything works on
// what the page already holds; nothing is fetched. The address's #fragment
// can set the state: #sort=CPU total:asc&filter=aten&search=conv&zoom=NAME
// &tree=NAME (the call tree opened at NAME's first node, as a finding's
// link does).
// The page marks itself data-ready once set up, data-error on an error.
(function () {
  'use strict';
  var body = document.body;
  window.addEventListener('error', function (e) {
    body.setAttribute('data-error', String(e.message));
  });
  // #key=value&...: values percent-decoded only (a '+' stays a '+')
  var state = new Map();
  location.hash.slice(1).split('&').forEach(function (kv) {
    var at = kv.indexOf('=');
    if (at > 0) {
      try {
        state.set(kv.slice(0, at), decodeURIComponent(kv.slice(at + 1)));
      } catch (e) { /* not percent-encoded: ignored */ }
    }
  });

  // ---- the operator table ----
  var table = document.getElementById('ops');
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var filter = document.getElementById('filter');
  var shown = document.getElementById('shown');

  function sortBy(col, dir) {
    heads.forEach(function (h, i) {
      if (i === col) h.setAttribute('data-dir', dir);
      else h.removeAttribute('data-dir');
    });
    var text = heads[col].getAttribute('data-type') === 'text';
    var sign = dir === 'asc' ? 1 : -1;
    rows.sort(function (a, b) {
      if (text) {
        var x = a.cells[col].textContent, y = b.cells[col].textContent;
        return sign * (x < y ? -1 : x > y ? 1 : 0);
      }
      return sign * (parseFloat(a.cells[col].getAttribute('data-v')) -
                     parseFloat(b.cells[col].getAttribute('data-v')));
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  }

  function applyFilter() {
    var q = filter.value.toLowerCase(), n = 0;
    rows.forEach(function (r) {
      var hit = r.cells[0].textContent.toLowerCase().indexOf(q) >= 0;
      r.hidden = !hit;
      n += hit ? 1 : 0;
    });
    shown.textContent = n + ' of ' + rows.length + ' operators';
  }

  heads.forEach(function (h, i) {
    h.addEventListener('click', function () {
      sortBy(i, h.getAttribute('data-dir') === 'desc' ? 'asc' : 'desc');
    });
  });
  filter.addEventListener('input', applyFilter);

  if (state.has('sort')) {
    var want = state.get('sort').split(':');
    var col = heads.findIndex(function (h) { return h.textContent === want[0]; });
    if (col >= 0) sortBy(col, want[1] === 'asc' ? 'asc' : 'desc');
  }
  if (state.has('filter')) {
    filter.value = state.get('filter');
    applyFilter();
  }

  // ---- the flame graph ----
  var svg = document.querySelector('#flame svg');
  var matched = document.getElementById('matched');
  if (svg) {
    var width = parseFloat(svg.getAttribute('width'));
    var left = 10, span = width - 20;
    var frames = [];
    Array.prototype.forEach.call(svg.querySelectorAll('g'), function (g) {
      var title = g.querySelector('title'), rect = g.querySelector('rect');
      if (!title || !rect) return;
      frames.push({
        g: g, r: rect, t: g.querySelector('text'),
        name: title.textContent.replace(/ \([^()]*\)$/, ''),
        x: parseFloat(rect.getAttribute('x')),
        w: parseFloat(rect.getAttribute('width')),
        y: parseFloat(rect.getAttribute('y'))
      });
    });
    var bottom = frames.reduce(function (m, o) { return Math.max(m, o.y); }, -Infinity);

    // A frame's label cut to its width, as the page's writer cuts it.
    var label = function (o, x, w) {
      var n = Math.floor((w - 6) / 7);
      var s = n < 3 ? '' : o.name.length > n ? o.name.slice(0, n - 2) + '..' : o.name;
      if (!o.t) {
        if (!s) return;
        o.t = document.createElementNS(svg.namespaceURI, 'text');
        o.t.setAttribute('y', (o.y + 12).toFixed(1));
        o.g.appendChild(o.t);
      }
      o.t.setAttribute('x', (x + 3).toFixed(1));
      o.t.textContent = s;
    };
    var place = function (o, x, w) {
      o.g.style.display = '';
      o.r.setAttribute('x', x.toFixed(1));
      o.r.setAttribute('width', w.toFixed(1));
      label(o, x, w);
    };
    // Zoom into frame f (null: all): it and what it called fill the
    // width, the frames below it that hold it too, the rest are hidden.
    var zoom = function (f) {
      var eps = 0.15; // the writer rounds to 0.1 px; frames are at least 0.3 px
      frames.forEach(function (o) {
        if (!f) return place(o, o.x, o.w);
        var holds = o.x <= f.x + eps && o.x + o.w >= f.x + f.w - eps;
        var inside = o.x >= f.x - eps && o.x + o.w <= f.x + f.w + eps;
        if (o.y > f.y && holds) place(o, left, span);
        else if (o.y <= f.y && inside) place(o, left + (o.x - f.x) * span / f.w, o.w * span / f.w);
        else o.g.style.display = 'none';
      });
      if (f) svg.setAttribute('data-zoom', f.name);
      else svg.removeAttribute('data-zoom');
    };
    // Frames whose name the expression matches, and the share of the
    // width they cover together.
    var search = function (q) {
      var re = null;
      try {
        re = q ? new RegExp(q) : null;
      } catch (e) {
        frames.forEach(function (o) { o.g.classList.remove('match'); });
        svg.removeAttribute('data-matched');
        matched.textContent = 'not a regular expression';
        return;
      }
      var hits = [];
      frames.forEach(function (o) {
        var hit = re !== null && re.test(o.name);
        o.g.classList.toggle('match', hit);
        if (hit) hits.push([o.x, o.x + o.w]);
      });
      hits.sort(function (a, b) { return a[0] - b[0]; });
      var covered = 0, end = -Infinity;
      hits.forEach(function (h) {
        var from = Math.max(h[0], end);
        if (h[1] > from) covered += h[1] - from;
        end = Math.max(end, h[1]);
      });
      svg.setAttribute('data-matched', String(hits.length));
      matched.textContent = re === null ? '' : 'matched ' + (100 * covered / span).toFixed(1) +
          '% in ' + hits.length + ' frame' + (hits.length === 1 ? '' : 's');
    };

    frames.forEach(function (o) {
      o.g.addEventListener('click', function () { zoom(o.y === bottom ? null : o); });
    });
    document.getElementById('unzoom').addEventListener('click', function () { zoom(null); });
    var box = document.getElementById('search');
    box.addEventListener('input', function () { search(box.value); });
    if (state.has('search')) {
      box.value = state.get('search');
      search(box.value);
    }
    if (state.has('zoom')) {
      var z = frames.find(function (o) { return o.name === state.get('zoom'); });
      if (z) zoom(z);
    }
  }

  // ---- the findings: "call tree" opens the first node of that name (the
  // heaviest path to it) and the nodes above it; #tree=NAME does the same
  var showNode = function (name) {
    var spans = document.querySelectorAll('#tree span.n');
    var hit = Array.prototype.find.call(spans, function (s) { return s.textContent === name; });
    if (!hit) return false;
    Array.prototype.forEach.call(document.querySelectorAll('#tree .hit'), function (h) {
      h.classList.remove('hit');
    });
    for (var d = hit.parentNode; d && d.id !== 'tree'; d = d.parentNode) {
      if (d.tagName === 'DETAILS') d.open = true;
    }
    hit.classList.add('hit');
    hit.scrollIntoView({block: 'center'});
    return true;
  };
  Array.prototype.forEach.call(document.querySelectorAll('a.to-tree'), function (a) {
    a.addEventListener('click', function (e) {
      if (showNode(a.getAttribute('data-name'))) e.preventDefault();
    });
  });
  if (state.has('tree')) showNode(state.get('tree'));
  body.setAttribute('data-ready', '1');
})();
