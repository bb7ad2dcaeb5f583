// Browser side of the replay report: hovering or clicking a dispatch marker shows its decision and
// marks the messages it carried. Text goes into the page only through textContent, never as HTML.
(() => {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const chart = document.getElementById("chart");
  const overlay = document.getElementById("highlight");
  const detail = document.getElementById("detail");
  const SVG = "http://www.w3.org/2000/svg";
  const L = data.layout;
  const x = (ts) => L.left + ((ts - data.t0) / Math.max(1, data.t1 - data.t0)) * L.width;
  const clock = (ts) => new Date(ts).toISOString().slice(0, 19).replace("T", " ");
  let pinned = -1;

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  function mark(d) {
    overlay.replaceChildren();
    if (!d) return;
    overlay.append(svg("rect", { x: x(d.first), y: 0, width: Math.max(1, x(d.at) - x(d.first)), height: L.height, class: "hl-span" }));
    for (const i of d.ids) {
      const row = data.msgs.row[i];
      overlay.append(svg("circle", { cx: x(data.msgs.ts[i]), cy: L.rowY[row], r: 4, class: "hl-msg" }));
    }
  }

  function show(index) {
    const d = data.ds[index];
    mark(d);
    detail.replaceChildren();
    if (!d) {
      detail.append(el("p", "Hover or click a dispatch marker to see its decision.", "hint"));
      return;
    }
    const verdict = d.sent ? `sent ${d.replyType}` : `skipped: ${d.skipReason ?? "?"}`;
    detail.append(el("h3", `dispatch ${index + 1} · ${clock(d.at)} UTC`));
    const dl = el("dl");
    const rows = [
      ["trigger", d.trigger],
      ["decision", verdict],
      ["reply type", d.replyType ?? "-"],
      ["model called", d.modelCalled ? "yes" : "no"],
      ["detail", d.detail ?? "-"],
      ["messages", `${d.ids.length} in ${d.batches} batch(es), ${d.mentions} mention(s)`],
      ["waited", `${((d.at - d.first) / 1000).toFixed(1)} s (oldest message)`],
      ["vitality", `${d.state} · ${d.in5m} msgs / ${d.speakers5m} speakers in 5 min`],
      ["budget", `${Math.round(d.budget * 100)} %`],
    ];
    for (const [k, v] of rows) {
      dl.append(el("dt", k), el("dd", v));
    }
    detail.append(dl);
    if (d.text !== null) {
      detail.append(el("h4", "reply"), el("blockquote", d.text, "reply"));
    }
    detail.append(el("h4", "carried messages"));
    const ol = el("ol", undefined, "carried");
    for (const i of d.ids.slice(0, 200)) {
      const f = data.msgs.f[i];
      const li = el("li", undefined, f & 1 ? "mention" : f & 2 ? "engaged" : "");
      li.append(el("span", data.msgs.s[i], "who"), el("span", data.msgs.text[i], "text"));
      ol.append(li);
    }
    if (d.ids.length > 200) ol.append(el("li", `… and ${d.ids.length - 200} more`));
    detail.append(ol);
  }

  const markerOf = (target) => (target instanceof Element ? target.closest("[data-d]") : null);
  chart.addEventListener("mouseover", (e) => {
    const m = markerOf(e.target);
    if (m && pinned < 0) show(Number(m.getAttribute("data-d")));
  });
  chart.addEventListener("click", (e) => {
    const m = markerOf(e.target);
    pinned = m ? Number(m.getAttribute("data-d")) : -1;
    for (const p of chart.querySelectorAll(".pinned")) p.classList.remove("pinned");
    if (m) m.classList.add("pinned");
    show(pinned);
  });
  // The timeline fits the window it opens in: the chart is drawn at its natural width and, when
  // that is wider than the view but at most MAX_SQUEEZE times, stretched to the view along the time
  // axis only (rows stay level with their labels). Longer logs keep their width and scroll.
  const MAX_SQUEEZE = 3;
  const scroller = document.getElementById("scroller");
  const natural = Number(chart.getAttribute("width"));
  chart.setAttribute("viewBox", `0 0 ${natural} ${chart.getAttribute("height")}`);
  chart.setAttribute("preserveAspectRatio", "none");
  function fit() {
    const view = scroller.clientWidth;
    const width = natural > view && natural <= view * MAX_SQUEEZE ? view : natural;
    chart.setAttribute("width", String(width));
    chart.classList.toggle("squeezed", width !== natural);
  }
  fit();
  window.addEventListener("resize", fit);
  show(-1);
  document.body.setAttribute("data-ready", "1");
})();
