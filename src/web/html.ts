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

export function page({ title, description, body }: { title: string; description?: string | null; body: Html }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${description ? html`<meta name="description" content="${description.slice(0, 300)}">` : ''}
<link rel="stylesheet" href="/assets/site.css">
</head>
<body>
<header class="site"><a href="/" class="brand">Art Catalog</a></header>
<main>
${body}
</main>
<footer class="site">Catalog data supplied by the gallery or artist through the Art Catalog API.</footer>
</body>
</html>
`.value;
}
