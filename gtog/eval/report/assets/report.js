/* gtog eval report: filters for the question list (inlined into report.html).
   The charts are SVG drawn by gtog; this script only shows and hides questions, and keeps
   the filter in the address (#index=KEY&disagree&failed&wrong) so a view can be shared. */
(function () {
  var form = document.getElementById('filters');
  var items = Array.prototype.slice.call(document.querySelectorAll('details.q'));
  var shown = document.getElementById('shown');
  var flags = ['disagree', 'failed', 'wrong'];

  function apply() {
    var idx = form.elements.index.value;
    var n = 0;
    items.forEach(function (q) {
      var ok = !idx || q.getAttribute('data-index') === idx;
      flags.forEach(function (f) {
        if (form.elements[f].checked && q.getAttribute('data-' + f) !== '1') { ok = false; }
      });
      q.hidden = !ok;
      if (ok) { n++; }
    });
    shown.textContent = n + ' of ' + items.length + ' questions shown';
    var parts = [];
    if (idx) { parts.push('index=' + encodeURIComponent(idx)); }
    flags.forEach(function (f) { if (form.elements[f].checked) { parts.push(f); } });
    if (history.replaceState) {
      history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    }
  }

  location.hash.replace(/^#/, '').split('&').forEach(function (p) {
    if (p.indexOf('index=') === 0) {
      form.elements.index.value = decodeURIComponent(p.slice(6));
    } else if (flags.indexOf(p) >= 0) {
      form.elements[p].checked = true;
    }
  });
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (e) { e.preventDefault(); });
  apply();
  document.documentElement.setAttribute('data-ready', '1');
})();
