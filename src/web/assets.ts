/** The public pages' stylesheet: kept in code so the build has no asset-copy step. */
export const SITE_CSS = `
:root { --ink: #1d1d1f; --muted: #6e6e73; --line: #e5e5ea; --accent: #7a2e1b; --bg: #fbfaf8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
header.site, footer.site { padding: 0.8rem 1.5rem; border-bottom: 1px solid var(--line); }
footer.site { border-top: 1px solid var(--line); border-bottom: 0; color: var(--muted); font-size: 0.85rem; margin-top: 3rem; }
.brand { font-weight: 700; text-decoration: none; color: var(--ink); letter-spacing: 0.02em; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 2.2rem; margin: 0.2rem 0; line-height: 1.15; overflow-wrap: anywhere; }
h2 { font-size: 1.3rem; margin: 2.5rem 0 1rem; border-bottom: 1px solid var(--line); padding-bottom: 0.4rem; }
.kind { text-transform: uppercase; letter-spacing: 0.12em; font-size: 0.75rem; color: var(--muted); }
.meta { color: var(--muted); }
.description { max-width: 48rem; white-space: pre-line; overflow-wrap: anywhere; }
.links, .calendar { display: flex; flex-wrap: wrap; gap: 0.5rem 1.2rem; padding: 0; list-style: none; }
.calendar a { display: inline-block; padding: 0.35rem 0.8rem; border: 1px solid var(--accent); border-radius: 999px; text-decoration: none; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: 1.5rem; padding: 0; list-style: none; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; display: flex; flex-direction: column; }
.card .image { aspect-ratio: 4 / 3; background: #f0eeea; display: flex; align-items: center; justify-content: center; color: var(--muted); font-size: 0.85rem; }
.card img { width: 100%; height: 100%; object-fit: cover; display: block; }
.card .body { padding: 0.8rem 1rem 1rem; }
.card h3 { font-size: 1rem; margin: 0 0 0.2rem; overflow-wrap: anywhere; }
.card p { margin: 0.1rem 0; font-size: 0.9rem; }
.badge { display: inline-block; font-size: 0.75rem; padding: 0.05rem 0.5rem; border-radius: 999px; background: #eef5ee; color: #24613a; }
.badge.sold { background: #f6e9e9; color: #8a1f1f; }
.badge.reserved { background: #f7f1e3; color: #7a5a12; }
.events { list-style: none; padding: 0; }
.events li { padding: 0.8rem 0; border-bottom: 1px solid var(--line); }
.events .when { color: var(--muted); font-size: 0.9rem; }
.pager { display: flex; gap: 1rem; margin-top: 1.5rem; }
@media (max-width: 40rem) { h1 { font-size: 1.6rem; } main { padding: 1rem; } }
`;
