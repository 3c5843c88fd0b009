// dbswarm report.html: draws every chart the page lists (script#dbswarm-charts) with uPlot,
// then reads back what each uPlot instance holds and painted, and writes it into
// pre#dbswarm-render-status (read back by the browser test):
// {charts, rendered, read_back, series, points, empty: [series shown without a drawable point],
//  blank: [charts whose plot area has no painted pixel], per_chart: [{id, series, points, pixels}], errors}.
// Counts come from the instances (u.data, u.series[i].show) and the canvas (getImageData), not
// from the chart specs: a chart that was given data but drew nothing is reported blank.
(function () {
  "use strict";
  var status = {charts: 0, rendered: 0, read_back: false, series: 0, points: 0, empty: [], blank: [],
                per_chart: [], errors: []};
  var plots = [];  // [spec, uPlot instance]
  window.addEventListener("error", function (e) { status.errors.push(String(e.message)); write(); });
  var consoleError = console.error;
  console.error = function () {
    status.errors.push(Array.prototype.join.call(arguments, " "));
    consoleError.apply(console, arguments);
  };
  var palette = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777",
                 "#4b5563", "#65a30d"];

  function write() {
    var el = document.getElementById("dbswarm-render-status");
    if (el) el.textContent = JSON.stringify(status);
  }
  function isPow10(v) { var l = Math.log10(v); return Math.abs(l - Math.round(l)) < 1e-9; }
  function num(v) {
    if (v == null) return "";
    var a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toLocaleString("en", {maximumFractionDigits: 1}) + "M";
    if (a >= 1e4) return (v / 1e3).toLocaleString("en", {maximumFractionDigits: 1}) + "k";
    return v.toLocaleString("en", {maximumFractionDigits: 3});
  }
  // x = 1 / (1 - p): 1 -> "0%", 10 -> "90%", 100 -> "99%", 1000 -> "99.9%"
  function percentile(x) {
    if (x <= 1) return "0%";
    var digits = Math.max(0, Math.round(Math.log10(x)) - 2);
    return (100 * (1 - 1 / x)).toFixed(digits) + "%";
  }
  function logLabels(fmt) {
    return function (u, splits) { return splits.map(function (v) { return isPow10(v) ? fmt(v) : ""; }); };
  }

  function draw(spec) {
    var el = document.getElementById(spec.id);
    var width = Math.max(480, Math.min(1060, (el.parentNode.clientWidth || 1060) - 10));
    var xaxis = {label: spec.xlabel, stroke: "#333", grid: {stroke: "#eee"}};
    if (spec.xlog) xaxis.values = logLabels(spec.xpercent ? percentile : num);
    else if (spec.xpercent) xaxis.values = function (u, s) { return s.map(percentile); };
    var yaxis = {label: spec.ylabel, size: 64, stroke: "#333", grid: {stroke: "#eee"},
                 values: spec.ylog ? logLabels(num) : function (u, s) { return s.map(num); }};
    var opts = {
      title: spec.title, width: width, height: spec.height || 260,
      scales: {x: {time: false, distr: spec.xlog ? 3 : 1}, y: {distr: spec.ylog ? 3 : 1}},
      axes: [xaxis, yaxis],
      legend: {live: true},
      series: [{label: spec.xlabel, value: function (u, v) { return spec.xpercent ? percentile(v) : num(v); }}]
        .concat(spec.series.map(function (s, i) {
          return {label: s.label, stroke: s.color || palette[i % palette.length], width: s.width || 1.5,
                  dash: s.dash || undefined, points: {show: spec.x.length <= 40},
                  value: function (u, v) { return v == null ? "–" : num(v) + (spec.yunit || ""); }};
        }))
    };
    if (!spec.ylog && spec.yzero !== false) opts.scales.y.range = function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; };
    plots.push([spec, new uPlot(opts, [spec.x].concat(spec.series.map(function (s) { return s.values; })), el)]);
    status.rendered++;
  }

  // points of a series uPlot can place: a finite x and y (on a log scale, y > 0)
  function drawable(u, i, ylog) {
    var xs = u.data[0], ys = u.data[i] || [], n = 0;
    for (var k = 0; k < ys.length; k++) {
      var x = xs[k], y = ys[k];
      if (x != null && isFinite(x) && y != null && isFinite(y) && (!ylog || y > 0)) n++;
    }
    return n;
  }

  // pixels inside the plot area darker than the grid (#eee) and not the points' white fill:
  // what the series painted; axes and their labels lie outside the plot area
  function inkPixels(u) {
    var b = u.bbox, ctx = u.ctx;
    if (!b || b.width < 1 || b.height < 1) return 0;
    var px = ctx.getImageData(Math.round(b.left), Math.round(b.top), Math.round(b.width), Math.round(b.height)).data;
    var n = 0;
    for (var k = 0; k < px.length; k += 4) {
      if (px[k + 3] > 64 && Math.min(px[k], px[k + 1], px[k + 2]) < 200) n++;
    }
    return n;
  }

  function readBack() {
    plots.forEach(function (pair) {
      var spec = pair[0], u = pair[1], chart = {id: spec.id, series: 0, points: 0, pixels: 0};
      try {
        for (var i = 1; i < u.series.length; i++) {
          if (!u.series[i].show) continue;
          var n = drawable(u, i, spec.ylog);
          if (n > 0) chart.series++; else status.empty.push(spec.id + ": " + u.series[i].label);
          chart.points += n;
        }
        if (u.series.length < 2 || !u.data[0] || !u.data[0].length) status.empty.push(spec.id);
        chart.pixels = inkPixels(u);
      } catch (e) { status.errors.push(spec.id + ": read back: " + e); }
      if (!chart.pixels) status.blank.push(spec.id);
      status.series += chart.series;
      status.points += chart.points;
      status.per_chart.push(chart);
    });
    status.read_back = true;
    write();
  }

  function main() {
    var specs = JSON.parse(document.getElementById("dbswarm-charts").textContent);
    specs.forEach(function (spec) {
      status.charts++;
      try { draw(spec); } catch (e) { status.errors.push(spec.id + ": " + e); }
    });
    write();
    setTimeout(readBack, 100);  // uPlot paints in a microtask after construction (and again on resize)
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
