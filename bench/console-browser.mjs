// What the console benches share: a browser's part of the console's forms, and an import file.

/** A browser's part: a cookie jar and the CSRF token of the last page. */
export class Browser {
  cookies = new Map();
  csrf = '';
  constructor(base) { this.base = base; }
  async request(method, path, body) {
    const response = await fetch(this.base + path, {
      method, body, redirect: 'manual', headers: this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {},
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      if (at + 1 === pair.length) this.cookies.delete(pair.slice(0, at));
      else this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text) ?? /_csrf=([^"&]+)/.exec(text);
    if (token) this.csrf = decodeURIComponent(token[1]);
    return { status: response.status, text, location: response.headers.get('location') };
  }
  post(path, fields) { return this.request('POST', path, new URLSearchParams({ _csrf: this.csrf, ...fields })); }
}

export function csv(rows) {
  const lines = ['title;artist_name;creation_year;price;currency;availability;external_id'];
  for (let i = 1; i <= rows; i++) lines.push(`Imported Study ${i};Bench Artist ${i % 300};${1900 + (i % 120)};${1000 + i};EUR;available;IMP-${i}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}
