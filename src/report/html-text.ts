// Text that goes into the report page: escaping for HTML and for an inline JSON block, and the
// page's stylesheet.

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** For element text and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON inside `<script type="application/json">`: `<`, `>` and `&` as \u escapes so no log line
 * can close the element (`</script>`) or open a comment, and U+2028/U+2029 escaped for old parsers.
 * JSON.parse reads the escapes back as the same characters.
 */
export function jsonForScript(value: unknown): string {
  return escapeForScript(JSON.stringify(value));
}

/** {@link jsonForScript}'s escapes on JSON text (a piece of it: each escape is of one character). */
export function escapeForScript(json: string): string {
  return json
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

export const chartStyle = `
:root { --mention: #d62728; --engaged: #ff8c00; --normal: #4c72b0; --own: #2a9d8f; --plain: #9aa3ad;
  --reached: #2ca02c; --missed: #e7298a; --alarm: #e7298a; --reply: #6a3d9a; --wait: #b8c0c7;
  --budget-unaddressed: #17becf; --budget-addressed: #8c564b; --budget-full: #5b6670; --over-unaddressed: #c9bfa9;
  font: 13px/1.4 system-ui, sans-serif; color: #1d2329; }
body { margin: 0 16px 24px; }
h1 { font-size: 18px; margin: 12px 0 2px; } h2 { font-size: 14px; margin: 8px 0 4px; }
.sub { color: #5b6670; margin: 0 0 8px; }
#summary { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 6px; flex: 1 1 520px; }
.stat { background: #f3f5f7; border-radius: 6px; padding: 6px 8px; }
.stat b { display: block; font-size: 15px; } .stat span { color: #5b6670; font-size: 12px; }
.bars { flex: 0 1 420px; } .bar { display: flex; align-items: center; gap: 6px; margin: 2px 0; }
.bar .k { width: 190px; text-align: right; color: #39424a; } .bar .b { height: 10px; background: var(--normal); border-radius: 2px; }
#legend { color: #39424a; margin: 10px 0 4px; }
.key { margin-right: 10px; white-space: nowrap; } .key i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 50%; vertical-align: -1px; }
.k-mention { background: var(--mention); } .k-engaged { background: var(--engaged); } .k-normal { background: var(--normal); }
.k-hollow { border: 2px solid var(--normal); box-sizing: border-box; } .k-reply { background: var(--reply); border-radius: 1px !important; }
.k-reached { background: var(--reached); } .k-missed { background: var(--missed); }
.k-own { background: var(--own); } .k-plain { background: var(--plain); }
.key i.k-line { height: 2px; width: 14px; border-radius: 0; vertical-align: 3px; }
.k-wait { background: var(--wait); } .k-budget-unaddressed { background: var(--budget-unaddressed); } .k-budget-addressed { background: var(--budget-addressed); }
.k-full { background: repeating-linear-gradient(90deg, var(--budget-full) 0 3px, transparent 3px 6px); }
.key i.k-tick { width: 2px; height: 10px; border-radius: 0; } .k-over-unaddressed { background: var(--over-unaddressed); } .k-over-addressed { background: var(--alarm); }
.legend-group { color: #5b6670; margin-right: 4px; }
#view { display: flex; border: 1px solid #d5dade; border-radius: 6px; }
#labels { flex: none; background: #fafbfc; border-right: 1px solid #d5dade; } #labels text { font-size: 11px; fill: #39424a; }
#scroller { overflow-x: auto; flex: 1 1 auto; }
#chart text { font-size: 10px; fill: #5b6670; }
.axis line { stroke: #e6e9ec; } .axis .base { stroke: #b8c0c7; }
.v-DORMANT { fill: #e8ecef; background: #e8ecef; } .v-COOLING { fill: #b9d7ea; background: #b9d7ea; }
.v-ACTIVE { fill: #f6d28b; background: #f6d28b; } .v-HEATED { fill: #ef8a62; background: #ef8a62; }
.budget .frame { fill: #fafbfc; } .budget .full { stroke: var(--budget-full); stroke-dasharray: 3 3; }
.budget polyline { fill: none; stroke-width: 1.2; }
.budget polyline.unaddressed { stroke: var(--budget-unaddressed); } .budget polyline.addressed { stroke: var(--budget-addressed); }
.budget .over-unaddressed { stroke: var(--over-unaddressed); stroke-width: 1; fill: none; }
.budget .over-addressed { stroke: var(--alarm); stroke-width: 2.5; fill: none; }
.waits path { stroke: var(--wait); stroke-width: 1; fill: none; }
circle.d { fill: #fff; stroke-width: 1.6; cursor: pointer; } circle.d.called { fill-opacity: 1; }
circle.d.normal { stroke: var(--normal); } circle.d.normal.called { fill: var(--normal); }
circle.d.mention { stroke: var(--mention); } circle.d.mention.called { fill: var(--mention); }
circle.d.engaged { stroke: var(--engaged); } circle.d.engaged.called { fill: var(--engaged); }
circle.d:hover, circle.d.pinned { stroke: #111; stroke-width: 2.5; }
rect.reply { fill: var(--reply); cursor: pointer; }
.addressed path { stroke-width: 6; stroke-linecap: round; fill: none; }
.addressed .reached { stroke: var(--reached); } .addressed .missed { stroke: var(--missed); }
.rows line { stroke: #f0f2f4; }
.messages path { stroke-width: 4; stroke-linecap: round; fill: none; }
.m-plain { stroke: var(--plain); } .m-own { stroke: var(--own); } .m-engaged { stroke: var(--engaged); } .m-mention { stroke: var(--mention); }
.hl-span { fill: #ffd54f; fill-opacity: 0.18; pointer-events: none; }
.hl-msg { fill: none; stroke: #111; stroke-width: 1.5; pointer-events: none; }
#detail { margin-top: 10px; border: 1px solid #d5dade; border-radius: 6px; padding: 8px 12px; min-height: 60px; position: sticky; bottom: 0; max-height: 38vh; overflow-y: auto; background: #fff; box-shadow: 0 -2px 6px rgba(0, 0, 0, 0.08); z-index: 1; }
#chart.squeezed circle, #chart.squeezed rect, #chart.squeezed path, #chart.squeezed line, #chart.squeezed polyline { vector-effect: non-scaling-stroke; }
#detail h3 { margin: 0 0 6px; font-size: 14px; } #detail h4 { margin: 8px 0 2px; font-size: 12px; color: #5b6670; }
#detail dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; } #detail dt { color: #5b6670; } #detail dd { margin: 0; }
.reply { margin: 0; padding: 4px 8px; background: #f3eef8; border-left: 3px solid var(--reply); white-space: pre-wrap; }
.carried { margin: 0; padding-left: 20px; max-height: 240px; overflow-y: auto; }
.carried .who { font-weight: 600; margin-right: 6px; } .carried .mention .who { color: var(--mention); } .carried .engaged .who { color: var(--engaged); }
.hint { color: #5b6670; margin: 0; }
#hours table { border-collapse: collapse; } #hours td, #hours th { padding: 2px 10px; text-align: right; border-bottom: 1px solid #eef0f2; }
#hours td:first-child, #hours th:first-child { text-align: left; }
`;
