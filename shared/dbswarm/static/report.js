// dbswarm report.html: draws every chart the page lists (script#dbswarm-charts) with uPlot,
// then writes what it drew into pre#dbswarm-render-status (read back by the browser test):
// {charts, rendered, series, points, empty: [chart ids with a series without a point], errors}.
(function () {
  "use strict";
  var status = {charts: 0, rendered: 0, series: 0, points: 0, empty: [], errors: []};
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
    var drawn = 0, points = 0;
    spec.series.forEach(function (s) {
      var n = s.values.filter(function (v) { return v != null && isFinite(v) && (!spec.ylog || v > 0); }).length;
      if (n > 0) drawn++; else status.empty.push(spec.id + ": " + s.label);
      points += n;
    });
    if (!spec.series.length || !spec.x.length) status.empty.push(spec.id);
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
    new uPlot(opts, [spec.x].concat(spec.series.map(function (s) { return s.values; })), el);
    status.rendered++;
    status.series += drawn;
    status.points += points;
  }

  function main() {
    var specs = JSON.parse(document.getElementById("dbswarm-charts").textContent);
    specs.forEach(function (spec) {
      status.charts++;
      try { draw(spec); } catch (e) { status.errors.push(spec.id + ": " + e); }
    });
    write();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
