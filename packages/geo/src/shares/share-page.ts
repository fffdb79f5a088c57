/** The shared-dashboard page: static HTML, its script and stylesheet, served by the service itself (no CDN). */
export const SHARE_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Shared dashboard</title>
<link rel="stylesheet" href="/shared/dashboard.css">
<script src="/shared/dashboard.js" defer></script>
</head>
<body>
<main>
  <header><h1 id="title">Loading…</h1><p id="description"></p></header>
  <section id="widgets" aria-live="polite"></section>
  <p id="message" hidden></p>
  <footer>Read-only view <span id="expires"></span></footer>
</main>
</body>
</html>
`;

export const SHARE_PAGE_CSS = `
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2433; background: #f6f7f9; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
#description { color: #5b6474; margin: 0 0 20px; }
#widgets { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 16px; }
.widget { background: #fff; border: 1px solid #e1e4ea; border-radius: 8px; padding: 12px 14px; }
.widget h2 { font-size: 1rem; margin: 0 0 8px; }
.widget svg { width: 100%; height: 180px; display: block; }
.axis { stroke: #c9ced8; stroke-width: 1; }
.line { fill: none; stroke: #2f6fde; stroke-width: 2; }
.bar { fill: #2f6fde; }
.point { fill: #2f6fde; }
.label { font-size: 10px; fill: #5b6474; }
.empty { color: #8a93a3; font-size: .9rem; }
#message { background: #fff4f4; border: 1px solid #f0c2c2; padding: 16px; border-radius: 8px; }
footer { margin-top: 24px; color: #8a93a3; font-size: .8rem; }
`;

export const SHARE_PAGE_JS = `(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, String(attrs[k]));
    if (parent) parent.appendChild(node);
    return node;
  }
  function fail(text) {
    document.getElementById('title').textContent = 'Dashboard unavailable';
    var message = document.getElementById('message');
    message.textContent = text;
    message.hidden = false;
  }
  function chart(widget) {
    var card = document.createElement('article');
    card.className = 'widget';
    card.setAttribute('data-widget', widget.id);
    card.setAttribute('data-type', widget.type);
    var h = document.createElement('h2');
    h.textContent = widget.title;
    card.appendChild(h);
    var points = widget.points;
    if (!points.length) {
      var p = document.createElement('p');
      p.className = 'empty';
      p.textContent = 'No data yet';
      card.appendChild(p);
      return card;
    }
    var W = 320, H = 180, L = 34, B = 22, T = 8, R = 8;
    var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': widget.title }, card);
    var values = points.map(function (p) { return p.value; });
    var max = Math.max.apply(null, values.concat([0]));
    var min = Math.min.apply(null, values.concat([0]));
    var span = max - min || 1;
    function x(i) { return L + (points.length === 1 ? (W - L - R) / 2 : i * (W - L - R) / (points.length - 1)); }
    function y(v) { return T + (H - T - B) * (1 - (v - min) / span); }
    el('line', { x1: L, y1: y(min), x2: W - R, y2: y(min), class: 'axis' }, svg);
    el('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' }, svg);
    var top = el('text', { x: 2, y: T + 8, class: 'label' }, svg); top.textContent = String(Math.round(max * 100) / 100);
    var bottom = el('text', { x: 2, y: H - B, class: 'label' }, svg); bottom.textContent = String(Math.round(min * 100) / 100);
    function label(p) { return String(p.label != null ? p.label : (p.at || '').slice(0, 10)).slice(0, 16); }
    var labelled = widget.type === 'bar' && points.length <= 8;
    if (!labelled) {
      var first = el('text', { x: L, y: H - 6, class: 'label' }, svg); first.textContent = label(points[0]);
      var last = el('text', { x: W - R - 60, y: H - 6, class: 'label' }, svg); last.textContent = label(points[points.length - 1]);
    }
    if (widget.type === 'bar') {
      var width = Math.max(2, (W - L - R) / points.length - 4);
      points.forEach(function (p, i) {
        var cx = L + (i + 0.5) * (W - L - R) / points.length;
        var bar = el('rect', { x: cx - width / 2, y: Math.min(y(p.value), y(0)), width: width, height: Math.abs(y(0) - y(p.value)) || 1, class: 'bar' }, svg);
        el('title', {}, bar).textContent = label(p) + ': ' + p.value;
        if (labelled) {
          var t = el('text', { x: cx, y: H - 6, class: 'label', 'text-anchor': 'middle' }, svg);
          t.textContent = label(p).slice(0, 10);
        }
      });
    } else {
      el('polyline', { points: points.map(function (p, i) { return x(i) + ',' + y(p.value); }).join(' '), class: 'line' }, svg);
      points.forEach(function (p, i) { el('circle', { cx: x(i), cy: y(p.value), r: 2.5, class: 'point' }, svg); });
    }
    return card;
  }
  var token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!token) { fail('This link has no share token.'); return; }
  fetch('/api/v1/geo/shared-dashboard', { headers: { 'x-share-token': token }, credentials: 'omit', cache: 'no-store' })
    .then(function (response) {
      if (!response.ok) throw new Error('unavailable');
      return response.json();
    })
    .then(function (body) {
      var d = body.dashboard;
      document.title = d.title;
      document.getElementById('title').textContent = d.title;
      document.getElementById('description').textContent = d.description || '';
      document.getElementById('expires').textContent = '· link expires ' + body.expiresAt.slice(0, 16).replace('T', ' ') + ' UTC';
      var box = document.getElementById('widgets');
      d.widgets.forEach(function (w) { box.appendChild(chart(w)); });
      document.body.setAttribute('data-ready', 'true');
    })
    .catch(function () {
      fail('This dashboard link is not valid or has expired.');
      document.body.setAttribute('data-ready', 'error');
    });
})();
`;
