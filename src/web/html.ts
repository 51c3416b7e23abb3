/** Escapes text for HTML content and quoted attribute values. Every user-supplied string goes through it. */
export function escapeHtml(value: string | number | null | undefined): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Marks a string as already-escaped HTML, so templates can nest. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Tagged template that escapes every interpolated value unless it is Html (or an array of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(typeof value === 'string' || typeof value === 'number' ? value : JSON.stringify(value));
}

/** A user-supplied link, only when it is http(s) (the API already refuses others; this is the second lock). */
export function safeHref(url: string | null | undefined): string | undefined {
  return url && /^https?:\/\//i.test(url) ? url : undefined;
}

/** What the head of a public page says about it (search engines, link previews). */
export interface PageMeta {
  title: string;
  description?: string | null | undefined;
  /** Absolute URL of the page's canonical address (from PUBLIC_BASE_URL). */
  canonical?: string | undefined;
  /** Open Graph type: website, profile, article. */
  type?: string | undefined;
  image?: string | undefined;
  /** schema.org JSON-LD of the page's subject. */
  jsonLd?: object | undefined;
  /** robots: `noindex` for pages that should not be listed (the 404 page). */
  noindex?: boolean;
}

const SITE_NAME = 'Art Catalog';

/**
 * Meta descriptions: one paragraph, at most `max` characters, cut at a word. Only as much of the text as
 * the cut needs is flattened (a window that doubles until it holds more than `max` characters once
 * flattened), so a 10 KB description costs what a short one does: flattening whole descriptions was
 * the largest part of a profile page's first build (docs/performance.md, the stall scenario). A window's
 * flattened text is the start of the whole text's, so the cut is the same.
 */
export function summary(text: string | null | undefined, max = 200): string | undefined {
  if (!text) return undefined;
  for (let window = 2 * max; ; window *= 2) {
    const whole = window >= text.length;
    const flat = (whole ? text : text.slice(0, window)).replace(/\s+/g, ' ').trim();
    if (flat.length <= max) {
      if (whole) return flat || undefined;
      continue;
    }
    let cut = flat.slice(0, max - 1);
    const space = cut.lastIndexOf(' ');
    if (space > max / 2) cut = cut.slice(0, space);
    // Never half of a surrogate pair (an emoji at the cut).
    else if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
    return `${cut}…`;
  }
}

/**
 * JSON-LD as a data block: not executed, so the CSP does not govern it. `<`, `>`, `&` and the line
 * separators are written as escapes, so no user text can close the script element.
 */
function jsonLdScript(data: object): Html {
  const json = JSON.stringify(data).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return new Html(`<script type="application/ld+json">${json}</script>`);
}

export function page({ title, description, canonical, type = 'website', image, jsonLd, noindex, body }: PageMeta & { body: Html }): string {
  const text = summary(description);
  const img = safeHref(image);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${text ? html`<meta name="description" content="${text}">` : ''}
${noindex ? html`<meta name="robots" content="noindex">` : ''}
${canonical ? html`<link rel="canonical" href="${canonical}">` : ''}
<meta property="og:site_name" content="${SITE_NAME}">
<meta property="og:title" content="${title}">
<meta property="og:type" content="${type}">
${canonical ? html`<meta property="og:url" content="${canonical}">` : ''}
${text ? html`<meta property="og:description" content="${text}">` : ''}
${img ? html`<meta property="og:image" content="${img}">` : ''}
<meta name="twitter:card" content="${img ? 'summary_large_image' : 'summary'}">
<meta name="twitter:title" content="${title}">
${text ? html`<meta name="twitter:description" content="${text}">` : ''}
${img ? html`<meta name="twitter:image" content="${img}">` : ''}
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/site.css">
${jsonLd ? jsonLdScript(jsonLd) : ''}
</head>
<body>
<header class="site"><a href="/" class="brand">${SITE_NAME}</a></header>
<main>
${body}
</main>
<footer class="site">Catalog data supplied by the gallery or artist through the Art Catalog API.</footer>
</body>
</html>
`.value;
}
