(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var body = document.body;
  var KINDS = ["frame compile", "phase", "graph", "AOT compile", "run", "other"];
  var COLORS = ["#3d6fb5", "#5fb3b0", "#9474c4", "#e59a45", "#7aa95c", "#9aa1ab"];
  var ERROR = 8, ERROR_COLOR = "#d23b3b";
  var ROW = 15, LANE_GAP = 12, LABEL = 130, AXIS = 22;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // --- tables --------------------------------------------------------------------
  var allRows = [];

  function renderTable(parent, spec, linkFor) {
    var count = spec.count === undefined ? spec.rows.length : spec.count;
    parent.appendChild(el("h3", null, spec.title + " (" + count + ")"));
    var table = el("table"), head = el("tr"), tbody = el("tbody");
    var right = {};
    spec.right.forEach(function (i) { right[i] = true; });
    spec.columns.forEach(function (name, i) {
      head.appendChild(el("th", right[i] ? "num" : null, name));
    });
    table.appendChild(el("thead")).appendChild(head);
    spec.rows.forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (cell, i) {
        var text = Array.isArray(cell) ? cell[0] : cell;
        var cls = (Array.isArray(cell) ? cell[1] : "") + (right[i] ? " num" : "");
        var td = tr.appendChild(el("td", cls.trim() || null));
        var href = linkFor && i === 0 ? linkFor(text) : null;
        if (href) { var a = td.appendChild(el("a", null, text)); a.href = href; }
        else td.textContent = text;
        if (Array.isArray(cell) && cell[2]) td.title = cell[2];  // raw text, on hover
      });
      allRows.push({ tr: tr, text: row.map(function (c) {
                                          return Array.isArray(c) ? c[0] + " " + (c[2] || "") : c;
                                        })
                                        .join(" ").toLowerCase() });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    // words stay whole: a table wider than the window scrolls on its own
    parent.appendChild(el("div", "table-scroll")).appendChild(table);
    if (spec.note) parent.appendChild(el("p", "note", spec.note));
  }

  function renderTables() {
    if (data.ranks) renderTable(document.getElementById("ranks"), data.ranks);
    var main = document.getElementById("processes");
    data.processes.forEach(function (proc, p) {
      var details = el("details");
      details.open = true;
      details.appendChild(el("summary", null, proc.heading));
      var anchors = {};
      proc.graphs.forEach(function (c) {
        anchors[c.compile_id] = "#graphs-" + p + "-" + c.compile_id;
      });
      // A table with no rows is not drawn: its title joins the one line that ends the
      // process's section ("None recorded: …"), so empty sections fold away.
      var empty = [];
      proc.tables.forEach(function (spec) {
        if (!spec.rows.length) { empty.push(spec.title.toLowerCase()); return; }
        var link = spec.title === "Frame compiles" ? function (id) { return anchors[id]; } : null;
        renderTable(details, spec, link);
      });
      renderGraphs(details, proc.graphs, p);
      if (empty.length) details.appendChild(el("p", "empty", "None recorded: " + empty.join(", ")));
      main.appendChild(details);
    });
    body.dataset.tableRows = String(allRows.length);
    body.dataset.graphTexts = String(graphTexts);
  }

  // --- graph texts (OTEL_DYNAMO_CAPTURE with graphs): collapsed, found by the filter --
  var graphRows = [], graphTexts = 0;
  function renderGraphs(parent, compiles, p) {
    if (!compiles.length) return;
    parent.appendChild(el("h3", null, "Graphs (" + compiles.length + " compiles)"));
    compiles.forEach(function (c) {
      var box = el("details", "graphs");
      box.id = "graphs-" + p + "-" + c.compile_id;
      box.appendChild(el("summary", null, "compile " + c.compile_id + " · " +
        c.texts.map(function (t) { return t.kind; }).join(", ")));
      var searchable = [c.compile_id];
      c.texts.forEach(function (t) {
        var item = el("details", "graph-text");
        item.appendChild(el("summary", null, t.title));
        if (t.path) item.appendChild(el("p", "note", t.path));
        item.appendChild(el("pre", null, t.text));
        box.appendChild(item);
        searchable.push(t.kind, t.text);
        graphTexts++;
      });
      graphRows.push({ tr: box, text: searchable.join(" ").toLowerCase() });
      parent.appendChild(box);
    });
  }

  // --- timeline -------------------------------------------------------------------
  var tl = data.timeline, canvas = document.getElementById("timeline");
  var ctx = canvas.getContext("2d"), tip = document.getElementById("tooltip");
  var view = { from: 0, to: Math.max(tl.length_us, 1) }, query = "";
  var lanes = tl.lanes.map(function (lane, index) {
    var start = 0, s = new Float64Array(lane.count);
    for (var i = 0; i < lane.count; i++) { start += lane.ds[i]; s[i] = start; }
    return { lane: lane, s: s, match: null, top: 0 };
  });
  var height = AXIS;
  lanes.forEach(function (l) { l.top = height; height += l.lane.rows * ROW + LANE_GAP; });

  function label(l, i) {
    return l.lane.compiles[l.lane.c[i]] + " · " + tl.details[l.lane.n[i]];
  }

  function applyTimelineFilter() {
    lanes.forEach(function (l) {
      if (!query) { l.match = null; return; }
      l.match = new Uint8Array(l.lane.count);
      for (var i = 0; i < l.lane.count; i++) {
        l.match[i] = label(l, i).toLowerCase().indexOf(query) >= 0;
      }
    });
  }

  function fit(text, width) {
    if (ctx.measureText(text).width <= width) return text;
    while (text.length > 1 && ctx.measureText(text + "…").width > width) text = text.slice(0, -1);
    return text + "…";
  }

  function draw() {
    var width = canvas.parentNode.clientWidth, dpr = window.devicePixelRatio || 1;
    canvas.width = width * dpr; canvas.height = height * dpr;
    canvas.style.height = height + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    var plot = width - LABEL, scale = plot / (view.to - view.from), drawn = 0;
    ctx.font = "11px system-ui, sans-serif"; ctx.textBaseline = "middle";
    var step = otelDynamoDuration.step(view.to - view.from, plot), ticks = [];
    ctx.fillStyle = "#667085"; ctx.strokeStyle = "#eceef2";
    for (var t = Math.ceil(view.from / step) * step; t <= view.to; t += step) {
      var x = LABEL + (t - view.from) * scale;
      var tickText = otelDynamoDuration.tick(t);
      ticks.push(tickText);
      ctx.fillRect(x, 0, 1, 6); ctx.fillText(tickText, x + 3, 9);
      ctx.beginPath(); ctx.moveTo(x + 0.5, AXIS); ctx.lineTo(x + 0.5, height); ctx.stroke();
    }
    lanes.forEach(function (l) {
      var lane = l.lane;
      ctx.fillStyle = "#f4f6f9"; ctx.fillRect(0, l.top - 2, width, lane.rows * ROW + 4);
      ctx.fillStyle = "#1d2330"; ctx.fillText(fit(lane.name, LABEL - 10), 6, l.top + ROW / 2);
      ctx.fillStyle = "#667085"; ctx.fillText("runs", 6, l.top + lane.run_row * ROW + ROW / 2);
      for (var i = 0; i < lane.count; i++) {
        var x0 = LABEL + (l.s[i] - view.from) * scale, w = Math.max(lane.d[i] * scale, 1);
        if (x0 + w < LABEL || x0 > width) continue;
        if (x0 < LABEL) { w -= LABEL - x0; x0 = LABEL; }
        var k = lane.k[i];
        ctx.globalAlpha = l.match && !l.match[i] ? 0.12 : 1;
        ctx.fillStyle = k & ERROR ? ERROR_COLOR : COLORS[k & 7] || COLORS[5];
        ctx.fillRect(x0, l.top + lane.y[i] * ROW + 1, w, ROW - 2);
        if (w > 60) {
          ctx.fillStyle = "#fff";
          var text = label(l, i).slice(0, Math.floor(w / 6));
          ctx.fillText(text, x0 + 3, l.top + lane.y[i] * ROW + ROW / 2);
        }
        drawn++;
      }
      ctx.globalAlpha = 1;
    });
    body.dataset.timelineBars = String(drawn);
    body.dataset.timelineAxis = ticks.join(" | ");
  }

  function hit(event) {
    var rect = canvas.getBoundingClientRect();
    var x = event.clientX - rect.left, y = event.clientY - rect.top;
    var t = view.from + (x - LABEL) * (view.to - view.from) / (rect.width - LABEL);
    var tolerance = 2 * (view.to - view.from) / (rect.width - LABEL);
    for (var j = 0; j < lanes.length; j++) {
      var l = lanes[j], row = Math.floor((y - l.top) / ROW);
      if (row < 0 || row >= l.lane.rows || x < LABEL) continue;
      for (var i = l.lane.count - 1; i >= 0; i--) {
        var end = l.s[i] + l.lane.d[i];
        if (l.lane.y[i] === row && l.s[i] - tolerance <= t && t <= end + tolerance) {
          return { l: l, i: i, x: x, y: y };
        }
      }
    }
    return null;
  }

  var drag = null;
  canvas.addEventListener("mousemove", function (event) {
    if (drag) {
      var shift = (drag.x - event.clientX) * (view.to - view.from) / (canvas.clientWidth - LABEL);
      view.from = drag.from + shift; view.to = drag.to + shift; draw(); return;
    }
    var found = hit(event);
    if (!found) { tip.style.display = "none"; return; }
    var l = found.l, i = found.i;
    tip.textContent = l.lane.name + " · " + label(l, i) + " · " + otelDynamoDuration.duration(l.lane.d[i]) +
      " at +" + otelDynamoDuration.duration(l.s[i]) + ((l.lane.k[i] & ERROR) ? " · ERROR" : "");
    tip.style.display = "block";
    tip.style.left = Math.min(found.x + 12, canvas.clientWidth - tip.offsetWidth - 4) + "px";
    tip.style.top = (found.y + 14) + "px";
  });
  canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; drag = null; });
  canvas.addEventListener("mousedown", function (event) {
    drag = { x: event.clientX, from: view.from, to: view.to };
  });
  window.addEventListener("mouseup", function () { drag = null; });
  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    var rect = canvas.getBoundingClientRect(), x = Math.max(event.clientX - rect.left - LABEL, 0);
    var at = view.from + x * (view.to - view.from) / (rect.width - LABEL);
    var factor = Math.exp(event.deltaY * 0.002), span = Math.max((view.to - view.from) * factor, 1);
    view.from = at - (at - view.from) * span / (view.to - view.from); view.to = view.from + span;
    draw();
  }, { passive: false });
  canvas.addEventListener("dblclick", function () {
    view = { from: 0, to: Math.max(tl.length_us, 1) }; draw();
  });
  window.addEventListener("resize", draw);

  function renderLegend() {
    var legend = document.getElementById("legend");
    KINDS.concat(["error"]).forEach(function (name, i) {
      var item = el("span"), swatch = el("i");
      swatch.style.background = i < KINDS.length ? COLORS[i] : ERROR_COLOR;
      item.appendChild(swatch); item.appendChild(document.createTextNode(name));
      legend.appendChild(item);
    });
    if (tl.shown < tl.total) {
      legend.appendChild(el("span", "warn", "showing " + tl.shown + " of " + tl.total +
        " spans (the deepest were left out)"));
    }
  }

  // --- filter ---------------------------------------------------------------------
  var filter = document.getElementById("filter"), count = document.getElementById("filter-count");
  function applyFilter() {
    query = filter.value.trim().toLowerCase();
    var visible = 0;
    allRows.forEach(function (row) {
      var show = !query || row.text.indexOf(query) >= 0;
      row.tr.hidden = !show;
      if (show) visible++;
    });
    var graphsShown = 0;
    graphRows.forEach(function (row) {
      row.tr.hidden = !!query && row.text.indexOf(query) < 0;
      if (!row.tr.hidden) graphsShown++;
    });
    var graphsNote = graphRows.length ?
      ", graphs of " + graphsShown + " of " + graphRows.length + " compiles" : "";
    count.textContent = query ? visible + " of " + allRows.length + " rows match" + graphsNote : "";
    body.dataset.visibleRows = String(visible);
    applyTimelineFilter();
    draw();
  }
  filter.addEventListener("input", function () {
    var hash = filter.value ? "#filter=" + encodeURIComponent(filter.value) : "#";
    history.replaceState(null, "", hash);
    applyFilter();
  });

  renderTables();
  renderLegend();
  var hash = /^#filter=(.*)$/.exec(location.hash);
  if (hash) {
    try { filter.value = decodeURIComponent(hash[1]); }
    catch (malformed) { filter.value = hash[1]; }  // "%E0%A4%A": keep the page working
  }
  applyFilter();
  body.dataset.ready = "1";
})();
