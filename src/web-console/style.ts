// The web console's style sheet, served as /console/assets/console.css. Every colour is a custom
// property of :root, set twice: for a light scheme and, when the browser asks for it
// (prefers-color-scheme: dark), a dark one. Both meet WCAG AA contrast (the browser tests run axe-core on
// every page in each). Below 600 px (a phone) forms stack and tables scroll in their own box, so no page
// is wider than the screen.
export const kConsoleCss = `
:root {
  color-scheme: light dark;
  --fg: #1b1f24; --muted: #4b5563; --line: #d0d7de; --bg: #ffffff; --soft: #f5f7fa; --accent: #0b5cad; --danger: #a4161a; --ok: #116329;
  --on-accent: #ffffff; --field-bg: #ffffff; --field-line: #6b7280;
  --disabled-bg: #e5e7eb; --disabled-fg: #374151; --disabled-line: #9ca3af;
  --on-bg: #dafbe1; --on-fg: #0f5323; --on-line: #4ac26b; --off-bg: #ffebe9; --off-fg: #82071e; --off-line: #ff8182;
  --warn-bg: #fff8c5; --warn-fg: #4d2d00; --warn-line: #d4a72c;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6edf3; --muted: #9198a1; --line: #30363d; --bg: #0d1117; --soft: #161b22; --accent: #58a6ff; --danger: #ff7b72; --ok: #3fb950;
    --on-accent: #0d1117; --field-bg: #0d1117; --field-line: #8b949e;
    --disabled-bg: #21262d; --disabled-fg: #8b949e; --disabled-line: #484f58;
    --on-bg: #0f2d1c; --on-fg: #7ee2a8; --on-line: #2ea043; --off-bg: #3a1416; --off-fg: #ffa198; --off-line: #da3633;
    --warn-bg: #2e2506; --warn-fg: #f2cc60; --warn-line: #9e6a03;
  }
}
* { box-sizing: border-box; }
/* hidden hides whatever the element's own display (a label's inline-block) would be. */
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); overflow-wrap: break-word; }
a { color: var(--accent); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.top { display: flex; flex-wrap: wrap; gap: 6px 16px; justify-content: space-between; align-items: center; padding: 10px 24px; border-bottom: 1px solid var(--line); background: var(--soft); }
.brand { font-weight: 700; text-decoration: none; color: var(--fg); }
#account { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; }
main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 48px; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; margin: 8px 0 12px; }
h2 { font-size: 1.15rem; margin: 24px 0 8px; }
h3 { font-size: 1rem; margin: 16px 0 6px; }
.crumbs { color: var(--muted); font-size: 0.9rem; }
.crumbs a { color: var(--accent); }
.tabs { display: flex; gap: 4px 16px; margin: 8px 0 16px; border-bottom: 1px solid var(--line); padding-bottom: 6px; flex-wrap: wrap; }
/* Links that stand alone rather than in a sentence: at least 24 px tall to tap (WCAG 2.5.8). */
.tabs a, td a { display: inline-block; padding: 2px 0; }
.table-box { overflow-x: auto; margin: 8px 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
form { margin: 8px 0; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 10px 0; min-width: 0; }
legend { font-weight: 600; padding: 0 4px; }
label { display: inline-block; margin: 4px 12px 4px 0; }
label.block { display: block; }
input:not([type=checkbox]):not([type=radio]), select, textarea {
  font: inherit; padding: 5px 8px; border: 1px solid var(--field-line); border-radius: 4px; color: var(--fg); background: var(--field-bg); max-width: 100%; }
input[type=checkbox], input[type=radio] { width: 18px; height: 18px; margin: 3px; vertical-align: -4px; accent-color: var(--accent); }
textarea { width: 100%; min-height: 60px; }
button { font: inherit; padding: 5px 12px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: var(--on-accent); cursor: pointer; }
button.secondary { background: var(--field-bg); color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button:disabled { background: var(--disabled-bg); color: var(--disabled-fg); border-color: var(--disabled-line); cursor: not-allowed; }
.status { min-height: 1.5em; margin: 0 0 8px; }
.error { color: var(--danger); font-weight: 600; }
.ok { color: var(--ok); font-weight: 600; }
.muted { color: var(--muted); }
.empty { margin: 12px 0; }
.pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 0.85rem; border: 1px solid var(--line); }
.pill.on, .pill.active, .pill.delivered, .pill.applied { background: var(--on-bg); color: var(--on-fg); border-color: var(--on-line); }
.pill.off, .pill.revoked, .pill.expired, .pill.failed, .pill.rejected, .pill.withdrawn { background: var(--off-bg); color: var(--off-fg); border-color: var(--off-line); }
.pill.pending { background: var(--warn-bg); color: var(--warn-fg); border-color: var(--warn-line); }
.pill.stale { background: var(--off-bg); color: var(--off-fg); border-color: var(--off-line); font-style: italic; }
button.toggle { min-width: 3.5em; }
svg.hourly { display: block; margin-top: 4px; }
svg.hourly rect { fill: var(--accent); }
/* An experiment's intervals (experiment-charts.ts): 0 muted, the interval in the text's colour, the estimate accented. */
svg.interval { display: block; width: 240px; max-width: 100%; height: auto; }
svg.interval-plot { display: block; width: 100%; max-width: 480px; height: auto; border: 1px solid var(--line); border-radius: 4px; }
svg.interval .zero, svg.interval-plot .zero { stroke: var(--muted); stroke-width: 1; stroke-dasharray: 3 2; }
svg.interval .span, svg.interval-plot .span { stroke: var(--fg); stroke-width: 2; }
svg.interval .estimate, svg.interval-plot .estimate { fill: var(--accent); }
.verdict { font-size: 1.1rem; font-weight: 600; margin: 6px 0; }
button.toggle.on { background: var(--on-bg); color: var(--on-fg); border-color: var(--on-line); }
button.toggle.off { background: var(--off-bg); color: var(--off-fg); border-color: var(--off-line); }
.secret { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--warn-bg); color: var(--warn-fg); padding: 8px; border: 1px solid var(--warn-line); border-radius: 4px; word-break: break-all; }
.warning { background: var(--warn-bg); border: 1px solid var(--warn-line); padding: 8px 12px; border-radius: 4px; color: var(--warn-fg); }
.signin { max-width: 380px; }
.signin label { display: block; margin: 10px 0 2px; }
.signin input { width: 100%; }
.list { display: inline-block; margin: 4px 12px 4px 0; }
.list-items { list-style: none; padding: 0; margin: 4px 0; }
.list-items li { margin: 2px 0; }
.rule { border-left: 3px solid var(--line); padding-left: 10px; margin: 8px 0; }
.timeline p { margin: 4px 0; }
.timeline ol { list-style: none; margin: 6px 0 10px; padding-left: 12px; border-left: 3px solid var(--line); }
.timeline li { margin: 3px 0; }
.timeline li.current { font-weight: 600; }
.timeline li.taken { color: var(--muted); }
.row { display: flex; gap: 12px; flex-wrap: wrap; align-items: flex-end; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; }
.id { font-size: 0.8rem; }
/* An audit entry's values (ids, addresses, expressions) break anywhere rather than widen the table. */
.change { overflow-wrap: anywhere; }
.change + .change { margin-top: 4px; }
details.folded { display: inline; }
/* What a field takes, said beside it (its accessible description). */
.field { display: inline-flex; flex-direction: column; }
.hint { font-size: 0.85rem; }
td.row-actions { white-space: nowrap; }
td.row-actions button { margin: 0 4px 2px 0; }
dialog.confirm { max-width: min(480px, calc(100vw - 32px)); color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
dialog.confirm::backdrop { background: rgb(0 0 0 / 0.45); }
dialog.confirm h2 { margin-top: 0; }
pre { white-space: pre-wrap; background: var(--soft); padding: 8px; border-radius: 4px; }
/* The rule builder beside its JSON view (one column on a phone); each condition a wrapping row. */
.rule-views { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px; align-items: start; }
.rule-views > label textarea { min-height: 240px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85em; }
.rule-condition textarea { width: auto; min-height: 0; }
.rule-condition, .rule-serve { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 4px 0; }
.rule-group, .rule-not { border-left: 3px solid var(--line); padding-left: 8px; margin: 4px 0; }
.rule-branches, .rule-group ol, .rule-shares { padding-left: 20px; }
.rule-percent { min-width: 4em; }
@media (max-width: 600px) {
  .top { padding: 8px 12px; }
  main { padding: 12px 12px 32px; }
  fieldset { padding: 8px 10px; }
  .row { flex-direction: column; align-items: stretch; gap: 4px; }
  .rule-views { grid-template-columns: minmax(0, 1fr); }
  label, .list { display: block; margin-right: 0; }
  input:not([type=checkbox]):not([type=radio]), select { width: 100%; }
}
`;
