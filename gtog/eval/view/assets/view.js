/* gtog eval view: a filter change reloads the list at its own address (every view is a
   link); a running run's page asks every few seconds whether its checkpoint grew, and then
   redraws its counts and rows in place, without a reload. */
(function () {
  var form = document.getElementById('rowfilters');
  if (form) {  // the list's address holds only the filters set, in the form's order
    var go = function () {
      var query = new URLSearchParams();
      new FormData(form).forEach(function (value, key) { if (value) { query.append(key, value); } });
      var qs = query.toString();
      location.href = form.getAttribute('action') + (qs ? '?' + qs : '');
    };
    form.addEventListener('change', function (e) { if (e.target && e.target.name !== 'q') { go(); } });
    form.addEventListener('submit', function (e) { e.preventDefault(); go(); });
  }
  var every = parseInt(document.body.getAttribute('data-poll'), 10) || 2000;
  var list = document.getElementById('runlist');
  if (list) {  // the run list: redrawn when a run appears, goes on or ends
    var listTick = function () {
      fetch('/', { credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html === null) { return; }
          var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('runlist');
          if (fresh && fresh.innerHTML !== list.innerHTML) { list.innerHTML = fresh.innerHTML; }
        })
        .catch(function () {})
        .then(function () { setTimeout(listTick, every); });
    };
    setTimeout(listTick, every);
  }
  var progress = document.getElementById('progress');
  if (!progress) { document.documentElement.setAttribute('data-ready', '1'); return; }
  var name = progress.getAttribute('data-name');
  var version = progress.getAttribute('data-version');
  var path = name.split('/').map(encodeURIComponent).join('/');

  function text(id, value) {
    var el = document.getElementById(id);
    if (el) { el.textContent = value; }
  }

  function tick() {
    fetch('/progress/' + path, { credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (p) {
        if (!p) { return; }
        var state = document.getElementById('state');
        state.textContent = p.status;
        state.className = 'state s-' + p.status;
        progress.setAttribute('data-status', p.status);
        text('counts', p.answers + ' answers' + (p.total ? ' (' + p.done + ' of ' + p.total + ' done)' : '') +
          '; ' + p.search_failed + ' failed searches, ' + p.judge_failed + ' with a failed judge');
        text('spend', p.spend || '');
        text('eta', p.eta_s == null ? '' : 'ETA ' + Math.round(p.eta_s) + ' s');
        if (p.version === version) { return null; }
        version = p.version;
        progress.setAttribute('data-version', version);
        return fetch('/rows/' + path + location.search, { credentials: 'same-origin' })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (html === null) { return; }
            var doc = new DOMParser().parseFromString(html, 'text/html');
            var rows = document.getElementById('rows');
            rows.replaceChildren.apply(rows, Array.prototype.slice.call(doc.body.childNodes));
          });
      })
      .catch(function () { /* the viewer went away for a moment: try again */ })
      .then(function () {
        if (progress.getAttribute('data-status') === 'running') { setTimeout(tick, every); }
      });
  }
  if (progress.getAttribute('data-status') === 'running') { setTimeout(tick, every); }
  document.documentElement.setAttribute('data-ready', '1');
})();
