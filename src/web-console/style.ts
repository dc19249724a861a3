// The web console's style sheet, served as /console/assets/console.css. Colours meet WCAG AA contrast
// (the browser tests run axe-core on every page).
export const kConsoleCss = `
:root { --fg: #1b1f24; --muted: #4b5563; --line: #d0d7de; --bg: #ffffff; --soft: #f5f7fa; --accent: #0b5cad; --danger: #a4161a; --ok: #116329; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
.top { display: flex; justify-content: space-between; align-items: center; padding: 10px 24px; border-bottom: 1px solid var(--line); background: var(--soft); }
.brand { font-weight: 700; text-decoration: none; color: var(--fg); }
#account { display: flex; gap: 12px; align-items: center; }
main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 48px; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; margin: 8px 0 12px; }
h2 { font-size: 1.15rem; margin: 24px 0 8px; }
h3 { font-size: 1rem; margin: 16px 0 6px; }
.crumbs { color: var(--muted); font-size: 0.9rem; }
.crumbs a { color: var(--accent); }
.tabs { display: flex; gap: 16px; margin: 8px 0 16px; border-bottom: 1px solid var(--line); padding-bottom: 6px; flex-wrap: wrap; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
form { margin: 8px 0; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
legend { font-weight: 600; padding: 0 4px; }
label { display: inline-block; margin: 4px 12px 4px 0; }
label.block { display: block; }
input[type=text], input[type=url], input[type=email], input[type=password], input[type=number], input[type=search], select, textarea {
  font: inherit; padding: 5px 8px; border: 1px solid #6b7280; border-radius: 4px; color: var(--fg); background: #fff; }
textarea { width: 100%; min-height: 60px; }
button { font: inherit; padding: 5px 12px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button:disabled { background: #e5e7eb; color: #374151; border-color: #9ca3af; cursor: not-allowed; }
.status { min-height: 1.5em; margin: 0 0 8px; }
.error { color: var(--danger); font-weight: 600; }
.ok { color: var(--ok); font-weight: 600; }
.muted { color: var(--muted); }
.pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 0.85rem; border: 1px solid var(--line); }
.pill.on, .pill.active, .pill.delivered { background: #dafbe1; color: #0f5323; border-color: #4ac26b; }
.pill.off, .pill.revoked, .pill.expired, .pill.failed { background: #ffebe9; color: #82071e; border-color: #ff8182; }
.secret { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; background: #fff8c5; padding: 8px; border: 1px solid #d4a72c; border-radius: 4px; word-break: break-all; }
.warning { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; border-radius: 4px; color: #4d2d00; }
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
pre { white-space: pre-wrap; background: var(--soft); padding: 8px; border-radius: 4px; }
`;
