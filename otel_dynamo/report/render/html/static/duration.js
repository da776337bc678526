// Durations as the report's terminal writes them (otel_dynamo.report.render.format.duration),
// from microseconds, which is what the page's timeline holds; and the axis's short form.
var otelDynamoDuration = (function () {
  "use strict";

  function two(n) { return (n < 10 ? "0" : "") + n; }

  // "120 µs", "45.0 ms", "1.23 s", "2 min 05 s", "3 h 07 min"; the unit chosen after rounding.
  function duration(us) {
    if (us === 0) return "0 s";
    if (us < 0) return "-" + duration(-us);
    if (Math.round(us) < 1000) return Math.round(us) + " µs";
    if (Math.round(us / 100) / 10 < 1000) return (us / 1e3).toFixed(1) + " ms";
    var s = us / 1e6;
    if (Math.round(s * 100) / 100 < 60) return s.toFixed(2) + " s";
    var whole = Math.round(s);
    if (whole < 3600) return Math.floor(whole / 60) + " min " + two(whole % 60) + " s";
    var minutes = Math.round(s / 60);
    return Math.floor(minutes / 60) + " h " + two(minutes % 60) + " min";
  }

  // An axis tick (a round value from step()): "500 ms", "2.5 s", "20 s", "1 min 30 s", "2 h".
  function tick(us) {
    if (us === 0) return "0";
    if (us < 1e3) return Math.round(us) + " µs";
    if (us < 1e6) return String(+(us / 1e3).toFixed(3)) + " ms";
    var s = Math.round(us / 1e3) / 1e3;
    if (s < 60) return String(+s.toFixed(3)) + " s";
    var whole = Math.round(s), parts = [];
    var h = Math.floor(whole / 3600), min = Math.floor(whole / 60) % 60, sec = whole % 60;
    if (h) parts.push(h + " h");
    if (min) parts.push(min + " min");
    if (sec) parts.push(sec + " s");
    return parts.join(" ");
  }

  var CLOCK_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

  // A round tick step for `span` microseconds drawn over `width` pixels (ticks ~110 px apart):
  // 1, 2 or 5 times a power of ten below a minute, clock steps (1 min … 1 day) above.
  function step(span, width) {
    var raw = span / Math.max(width / 110, 1);
    if (raw > 30e6) {
      for (var i = 0; i < CLOCK_STEPS.length; i++) {
        if (CLOCK_STEPS[i] * 1e6 >= raw) return CLOCK_STEPS[i] * 1e6;
      }
      return Math.ceil(raw / 86400e6) * 86400e6;
    }
    var p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f < 2 ? 2 : f < 5 ? 5 : 10) * p;
  }

  return { duration: duration, tick: tick, step: step };
})();
