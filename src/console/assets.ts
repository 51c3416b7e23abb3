/**
 * The console's stylesheet and its one script, kept in code (no build step, nothing fetched at run
 * time) and served from /console/assets/ under the same CSP as the public pages (no inline code).
 */
export const CONSOLE_CSS = `
:root {
  --ink: #17171a; --muted: #5c5c66; --line: #e4e3e8; --accent: #7a2e1b; --accent-ink: #fff; --bg: #f7f6f3; --card: #fff;
  --well: #efede8; --ok: #1d6b3a; --ok-bg: #e8f4ec; --bad: #a3231a; --bad-bg: #fbeae8; --focus: #1b5fd1;
  --radius: 10px; --shadow: 0 1px 2px rgba(20, 20, 30, .06), 0 1px 8px rgba(20, 20, 30, .04);
  --font: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK JP", sans-serif;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.55 var(--font); color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; top: 0; background: var(--card); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; top: .5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.console-top { display: flex; align-items: center; gap: 1rem; padding: .75rem 1.25rem; background: #1c1b1f; color: #f3f1ec; }
.console-top .brand { color: inherit; text-decoration: none; font-weight: 700; letter-spacing: .01em; }
.console-top .brand span { font-weight: 400; opacity: .75; }
.console-top .entity { margin-left: auto; opacity: .9; font-size: .9rem; }
.console-frame { display: grid; grid-template-columns: 15rem minmax(0, 1fr); min-height: calc(100vh - 3rem); }
.signed-out .console-frame { grid-template-columns: minmax(0, 1fr); }
.console-nav { border-right: 1px solid var(--line); background: var(--card); padding: 1rem .75rem; display: flex; flex-direction: column; gap: 1rem; }
.console-nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: .15rem; }
.console-nav a { display: block; padding: .5rem .75rem; border-radius: 8px; color: var(--ink); text-decoration: none; }
.console-nav a:hover { background: var(--well); }
.console-nav a[aria-current="page"] { background: var(--well); font-weight: 650; box-shadow: inset 3px 0 0 var(--accent); }
.who { margin-top: auto; font-size: .85rem; color: var(--muted); padding: .5rem .75rem; border-top: 1px solid var(--line); }
.who-name { display: block; color: var(--ink); }
main { padding: 1.5rem 2rem 3rem; max-width: 78rem; width: 100%; }
.signed-out main { max-width: 28rem; margin: 3rem auto; }
h1 { font-size: 1.6rem; line-height: 1.2; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 2rem 0 .75rem; }
.lead { color: var(--muted); margin: 0; }
.page-head { display: flex; flex-wrap: wrap; align-items: flex-end; justify-content: space-between; gap: 1rem; margin-bottom: 1.25rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1.25rem; }
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 1rem; margin: 0; }
.stat { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1rem 1.1rem; }
.stat dt { color: var(--muted); font-size: .85rem; }
.stat dd { margin: .2rem 0 0; font-size: 1.6rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.stat .sub { display: block; font-size: .8rem; font-weight: 400; color: var(--muted); }
/* The body breaks a long word anywhere (ids, URLs); a state or a button's word is never cut in two (a narrow table column). */
button, .button, .dotted { overflow-wrap: normal; }
.badge { white-space: nowrap; display: inline-block; padding: .05rem .5rem; border-radius: 999px; background: var(--well); color: var(--ink); font-size: .78rem; font-weight: 600; }
.badge-sold { background: #f3e4df; } .badge-reserved { background: #f6efd9; } .badge-available { background: var(--ok-bg); }
.badge-failed { background: var(--bad-bg); color: var(--bad); } .badge-ready { background: var(--ok-bg); color: var(--ok); }
.none { color: var(--muted); }
.notice { border-radius: var(--radius); padding: .75rem 1rem; margin: 0 0 1rem; border: 1px solid; }
.notice-ok { background: var(--ok-bg); border-color: #b9dcc5; color: var(--ok); }
.notice-error { background: var(--bad-bg); border-color: #efc2bd; color: var(--bad); }
.secret { font: 600 1rem/1.4 ui-monospace, "SFMono-Regular", Menlo, monospace; background: var(--well); padding: .75rem 1rem; border-radius: 8px; user-select: all; word-break: break-all; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); }
table.cards { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.cards th, table.cards td { text-align: left; padding: .6rem .8rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.cards th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; background: #fbfaf8; }
table.cards tr:last-child td { border-bottom: 0; }
.empty { color: var(--muted); background: var(--card); border: 1px dashed var(--line); border-radius: var(--radius); padding: 1.5rem; text-align: center; }
form.stack { display: grid; gap: 1rem; }
.field { display: grid; gap: .3rem; }
.field label, .field legend { font-weight: 600; font-size: .9rem; }
.field .hint { color: var(--muted); font-size: .82rem; }
.field .problem { color: var(--bad); font-size: .85rem; }
input[type="text"], input[type="email"], input[type="password"], input[type="search"], input[type="number"], input[type="url"], input[type="date"], select, textarea {
  font: inherit; width: 100%; padding: .55rem .7rem; border: 1px solid #c9c7cf; border-radius: 8px; background: #fff; color: var(--ink); min-height: 2.6rem; }
textarea { min-height: 7rem; resize: vertical; }
input[aria-invalid="true"], textarea[aria-invalid="true"] { border-color: var(--bad); }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin: 0; }
.checks { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; }
.checks label { font-weight: 400; display: inline-flex; gap: .4rem; align-items: center; }
button, .button { font: inherit; font-weight: 600; display: inline-flex; align-items: center; justify-content: center; gap: .4rem; min-height: 2.6rem;
  padding: .5rem 1rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-ink); cursor: pointer; text-decoration: none; }
button.secondary, .button.secondary { background: var(--card); color: var(--accent); }
button.danger, .button.danger { background: var(--card); color: var(--bad); border-color: var(--bad); }
.link-button { background: none; border: 0; color: var(--accent); padding: 0; min-height: 0; font-weight: 600; text-decoration: underline; cursor: pointer; }
.filters { display: grid; grid-template-columns: minmax(12rem, 2fr) repeat(2, minmax(9rem, 1fr)) auto; gap: .75rem; align-items: end; margin-bottom: 1rem; }
.pager { display: flex; justify-content: space-between; align-items: center; gap: 1rem; margin-top: 1rem; color: var(--muted); }
.record { display: grid; grid-template-columns: minmax(0, 2fr) minmax(16rem, 1fr); gap: 1.5rem; align-items: start; }
.record .image img { width: 100%; height: auto; border-radius: 8px; background: var(--well); }
dl.fields { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .4rem 1.25rem; margin: 0; }
dl.fields dt { color: var(--muted); }
dl.fields dd { margin: 0; white-space: pre-line; }
.changes { list-style: none; padding: 0; margin: 0; display: grid; gap: .75rem; }
.change { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem 1rem; }
.change-head { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; color: var(--muted); font-size: .85rem; }
.change-head strong { color: var(--ink); font-size: .95rem; }
.diff { margin: .5rem 0 0; display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem 1rem; font-size: .9rem; }
.diff dt { color: var(--muted); }
.diff dd { margin: 0; }
.diff del { color: var(--bad); text-decoration: line-through; }
.diff ins { color: var(--ok); text-decoration: none; }
.inline-form { display: inline; }
.row-actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.row-actions select { width: auto; min-height: 2.2rem; padding: .25rem .5rem; }
.row-actions button, .row-actions .button { min-height: 2.2rem; padding: .25rem .75rem; }
.steps { list-style: none; counter-reset: step; display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; padding: 0; margin: 0 0 1.25rem; color: var(--muted); font-size: .9rem; }
.steps li { counter-increment: step; }
.steps li::before { content: counter(step) ". "; }
.steps li.current { color: var(--ink); font-weight: 650; }
.summary { font-weight: 600; }
details.more { margin-top: .75rem; } details.more summary { cursor: pointer; color: var(--muted); }
.sample code { display: block; white-space: pre-wrap; background: var(--well); padding: .5rem .75rem; border-radius: 8px; }
progress { width: 100%; height: 1.25rem; accent-color: var(--accent); }
.feed, .feeds-connect, .feeds-how { margin-bottom: 1rem; }
.feed h2, .feeds-connect h2, .feeds-how h2 { margin-top: 0; }
.feed .actions { margin-top: 1rem; }
.column-note { display: block; font-weight: 400; }
.feed-preview { margin-bottom: 1rem; }
.feed-preview h2 { margin-top: 0; }
.undo-plan { margin-top: 1rem; }
.undo-plan h2 { margin-top: 0; }
.feed-preview th, .feed-preview td[data-label="Line"], .feed-preview td[data-label="Action"], .feed-preview td[data-label="Record"], .feed-preview td[data-label="Level"] { overflow-wrap: normal; }
.feed .url { font-weight: 400; font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .9rem; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: .5rem 1.5rem; margin: 0 0 1rem; }
.facts dt { color: var(--muted); font-size: .85rem; }
.facts dd { margin: 0; }
form.inline { display: inline; }
.filters.filters-one { grid-template-columns: minmax(0, 20rem) auto; }
.trash th { overflow-wrap: normal; }
.trash td time { white-space: nowrap; }
.trash .by { display: block; color: var(--muted); font-size: .9rem; }
.trash .row-actions button, .trash .row-actions .button { white-space: nowrap; }
@media (max-width: 860px) {
  /* The nav is as tall as its links; a short page's spare height goes below the content, not into the nav. */
  .console-frame { grid-template-columns: minmax(0, 1fr); grid-template-rows: auto 1fr; }
  .console-nav { border-right: 0; border-bottom: 1px solid var(--line); padding: .5rem; gap: .5rem; }
  /* Every item in view at phone widths: the links wrap onto a second line, never scroll hidden sideways. */
  .console-nav ul { flex-direction: row; flex-wrap: wrap; }
  .console-nav a { white-space: nowrap; padding: .45rem .65rem; }
  .console-nav a[aria-current="page"] { box-shadow: inset 0 -3px 0 var(--accent); }
  .who { margin: 0; border-top: 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; padding: 0 .5rem; }
  .who-name { display: inline; }
  main { padding: 1rem 1rem 2rem; }
  .filters { grid-template-columns: 1fr 1fr; }
  .filters .search { grid-column: 1 / -1; }
  .record { grid-template-columns: minmax(0, 1fr); }
  .record .image { order: -1; }
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  .table-wrap { background: none; border: 0; box-shadow: none; }
  table.cards tr { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); margin-bottom: .75rem; padding: .4rem 0; box-shadow: var(--shadow); }
  table.cards td { border: 0; display: grid; grid-template-columns: 7rem minmax(0, 1fr); gap: .75rem; padding: .3rem .9rem; }
  table.cards td .badge { justify-self: start; }
  table.cards td::before { content: attr(data-label); color: var(--muted); font-size: .8rem; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
}
`;

/**
 * Progressive enhancement only: every form works without it. Buttons with `data-confirm` ask before
 * their form is sent (delete, revoke).
 */
export const CONSOLE_JS = `
document.addEventListener('submit', function (event) {
  var button = event.submitter;
  var question = button && button.getAttribute('data-confirm');
  if (question && !window.confirm(question)) event.preventDefault();
});
`;
