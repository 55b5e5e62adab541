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
  var labelled = document.getElementById('labelitem') || document.getElementById('labeldone');
  if (labelled) {  // label mode: r right, w wrong, s skip, u undo; each is one posted line
    var form = document.getElementById('labelset');
    var item = document.getElementById('labelitem');
    var busy = false;
    var send = function (key) {
      if (busy) { return; }
      var body = {
        metric: form.elements.metric.value,
        labeller: form.elements.labeller.value
      };
      if (key === 'u') {
        body.undo = true;
      } else if (item) {
        body.question_id = item.getAttribute('data-qid');
        body.method = item.getAttribute('data-method');
        body.epoch = parseInt(item.getAttribute('data-epoch'), 10);
        body.answer_hash = item.getAttribute('data-hash');
        body.label = key === 'r' ? 1 : key === 'w' ? 0 : 'skip';
      } else {
        return;
      }
      busy = true;
      fetch('/labels/' + location.pathname.slice('/label/'.length), {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Gtog-Label': '1' },
        body: JSON.stringify(body)
      })
        .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
        .then(function (res) {
          busy = false;
          if (res[0]) { location.reload(); return; }
          var err = document.getElementById('labelerror');
          if (err) { err.textContent = res[1].error || 'not saved'; }
        })
        .catch(function () { busy = false; });
    };
    document.addEventListener('keydown', function (e) {
      if (e.target && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) { return; }
      if (e.ctrlKey || e.metaKey || e.altKey) { return; }
      if (['r', 'w', 's', 'u'].indexOf(e.key) >= 0) { e.preventDefault(); send(e.key); }
    });
    Array.prototype.forEach.call(document.querySelectorAll('button[data-key]'), function (b) {
      b.addEventListener('click', function () { send(b.getAttribute('data-key')); });
    });
  }
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
