/** The public pages' stylesheet: kept in code so the build has no asset-copy step. */
export const SITE_CSS = `
:root {
  --ink: #1d1d1f; --muted: #5f5f64; --line: #e5e5ea; --accent: #7a2e1b; --bg: #fbfaf8; --card: #fff; --well: #f0eeea;
  /* Type scale: a 1.25 ratio on a 16 px base, headings shrinking on narrow screens. */
  --step--1: 0.8rem; --step-0: 1rem; --step-1: 1.25rem; --step-2: clamp(1.35rem, 1.1rem + 1vw, 1.56rem); --step-3: clamp(1.6rem, 1.2rem + 2vw, 2.44rem);
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: var(--step-0)/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; }
a { color: var(--accent); }
header.site, footer.site { padding: 0.8rem 1.5rem; border-bottom: 1px solid var(--line); }
footer.site { border-top: 1px solid var(--line); border-bottom: 0; color: var(--muted); font-size: var(--step--1); margin-top: 3rem; }
.brand { font-weight: 700; text-decoration: none; color: var(--ink); letter-spacing: 0.02em; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: var(--step-3); margin: 0.2rem 0 0.6rem; line-height: 1.15; }
h2 { font-size: var(--step-2); line-height: 1.25; margin: 2.5rem 0 1rem; border-bottom: 1px solid var(--line); padding-bottom: 0.4rem; }
h3 { font-size: var(--step-0); line-height: 1.3; }
.kind { text-transform: uppercase; letter-spacing: 0.12em; font-size: var(--step--1); color: var(--muted); margin: 0; }
.meta, .count { color: var(--muted); }
.count { font-weight: 400; font-size: var(--step-0); }
.description { max-width: 44rem; white-space: pre-line; }
.links, .calendar { display: flex; flex-wrap: wrap; gap: 0.5rem 1.2rem; padding: 0; list-style: none; }
.calendar a { display: inline-block; padding: 0.35rem 0.8rem; border: 1px solid var(--accent); border-radius: 999px; text-decoration: none; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(14rem, 100%), 1fr)); gap: 1.5rem; padding: 0; list-style: none; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.card-link { display: flex; flex-direction: column; height: 100%; color: inherit; text-decoration: none; }
.card-link:hover h3, .card-link:focus-visible h3 { text-decoration: underline; color: var(--accent); }
/* Every picture is cropped to one shape, so grids line up whatever the originals are. */
.image, .artwork-image, .hero { aspect-ratio: 4 / 3; background: var(--well); display: flex; align-items: center; justify-content: center; color: var(--muted); font-size: var(--step--1); overflow: hidden; }
.image img, .artwork-image img, .hero img { width: 100%; height: 100%; object-fit: cover; display: block; }
.image picture, .artwork-image picture, .hero picture { display: contents; }
.hero { max-width: 48rem; border-radius: 8px; margin: 1rem 0; }
.artwork-image { border-radius: 8px; }
.views { list-style: none; padding: 0; margin: 1rem 0 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: 0.75rem; }
.views figure { margin: 0; }
.views figcaption { font-size: var(--step--1); color: var(--muted); margin-top: 0.3rem; }
.view { aspect-ratio: 4 / 3; background: var(--well); display: flex; align-items: center; justify-content: center; color: var(--muted); font-size: var(--step--1); overflow: hidden; border-radius: 6px; }
.view img { width: 100%; height: 100%; object-fit: cover; display: block; }
.view picture { display: contents; }
.card .body { padding: 0.8rem 1rem 1rem; }
.card h3 { margin: 0 0 0.2rem; }
.card p { margin: 0.1rem 0; font-size: 0.9rem; }
.artwork-layout { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 2rem; align-items: start; }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.3rem 1rem; margin: 1rem 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.badge { display: inline-block; font-size: 0.75rem; padding: 0.05rem 0.5rem; border-radius: 999px; background: #eef5ee; color: #1f5632; }
.badge.sold { background: #f6e9e9; color: #7d1c1c; }
.badge.reserved { background: #f7f1e3; color: #6a4e10; }
.events { list-style: none; padding: 0; }
.events li { padding: 0.8rem 0; border-bottom: 1px solid var(--line); }
.events .when { color: var(--muted); font-size: 0.9rem; }
.pager { display: flex; flex-wrap: wrap; gap: 1rem; margin-top: 1.5rem; }
@media (max-width: 40rem) { main { padding: 1rem; } header.site, footer.site { padding: 0.8rem 1rem; } .artwork-layout { grid-template-columns: minmax(0, 1fr); gap: 1rem; } }
`;

/** The site's icon: a framed picture in the accent colour (SVG, so one small file serves every size). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#7a2e1b"/><rect x="6" y="7" width="20" height="18" rx="1.5" fill="none" stroke="#fbfaf8" stroke-width="2.5"/><path d="M9 22l5-6 4 4 3-3 3 5z" fill="#fbfaf8"/></svg>
`;
