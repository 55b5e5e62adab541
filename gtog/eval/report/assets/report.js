/* gtog eval report: filters for the question list (inlined into report.html).
   The charts are SVG drawn by gtog; this script only shows and hides questions, and keeps
   the filter in the address (#index=KEY&g0=VALUE&disagree&failed&wrong) so a view can be
   shared (gN: the Nth question-type field's value). */
(function () {
  var form = document.getElementById('filters');
  var items = Array.prototype.slice.call(document.querySelectorAll('details.q'));
  var shown = document.getElementById('shown');
  var flags = ['disagree', 'failed', 'wrong'];
  var groups = Array.prototype.slice.call(form.querySelectorAll('select.group'));

  function apply() {
    var idx = form.elements.index.value;
    var n = 0;
    items.forEach(function (q) {
      var ok = !idx || q.getAttribute('data-index') === idx;
      groups.forEach(function (s) {
        if (s.value && q.getAttribute('data-' + s.name) !== s.value) { ok = false; }
      });
      flags.forEach(function (f) {
        if (form.elements[f].checked && q.getAttribute('data-' + f) !== '1') { ok = false; }
      });
      q.hidden = !ok;
      if (ok) { n++; }
    });
    shown.textContent = n + ' of ' + items.length + ' questions shown';
    var parts = [];
    if (idx) { parts.push('index=' + encodeURIComponent(idx)); }
    groups.forEach(function (s) {
      if (s.value) { parts.push(s.name + '=' + encodeURIComponent(s.value)); }
    });
    flags.forEach(function (f) { if (form.elements[f].checked) { parts.push(f); } });
    if (history.replaceState) {
      history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    }
  }

  location.hash.replace(/^#/, '').split('&').forEach(function (p) {
    var eq = p.indexOf('=');
    var name = eq < 0 ? p : p.slice(0, eq);
    var value = '';
    try { value = eq < 0 ? '' : decodeURIComponent(p.slice(eq + 1)); } catch (e) { return; }
    if (name === 'index') {
      form.elements.index.value = value;
    } else if (/^g\d+$/.test(name) && form.elements[name]) {
      form.elements[name].value = value;
    } else if (flags.indexOf(p) >= 0) {
      form.elements[p].checked = true;
    }
  });
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (e) { e.preventDefault(); });
  apply();
  document.documentElement.setAttribute('data-ready', '1');
})();

/* A box that scrolls sideways (a wide table or chart on a narrow screen) says so: it gets
   the class `scrolls` (a "scroll sideways" line that stays in view, and a shadow on the
   side with more), set again when the window is resized or a section is opened. */
(function () {
  function mark() {
    var boxes = document.querySelectorAll('table, .chart-box, .scroll');
    Array.prototype.forEach.call(boxes, function (box) {
      box.classList.toggle('scrolls', box.scrollWidth > box.clientWidth + 1);
    });
  }
  window.addEventListener('resize', mark);
  document.addEventListener('toggle', mark, true);
  mark();
  document.documentElement.setAttribute('data-scroll-marked', '1');
})();
