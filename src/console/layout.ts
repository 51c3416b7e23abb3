import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../db/types.js';
import { html, Html } from '../web/html.js';
import { mayAct } from './guard.js';
import type { SignedIn } from '../store/users.js';

/** The console's sections, in the navigation's order, with the least role that sees each. */
export const SECTIONS = [
  { id: 'overview', label: 'Overview', href: '/console', role: 'viewer' },
  { id: 'artworks', label: 'Artworks', href: '/console/artworks', role: 'viewer' },
  { id: 'events', label: 'Events', href: '/console/events', role: 'viewer' },
  { id: 'import', label: 'Import', href: '/console/import', role: 'editor' },
  { id: 'feeds', label: 'Feeds', href: '/console/feeds', role: 'editor' },
  { id: 'changelog', label: 'Changelog', href: '/console/changelog', role: 'viewer' },
  { id: 'runs', label: 'Runs', href: '/console/runs', role: 'editor' },
  { id: 'trash', label: 'Trash', href: '/console/trash', role: 'editor' },
  { id: 'profile', label: 'Profile', href: '/console/profile', role: 'editor' },
  { id: 'keys', label: 'Keys', href: '/console/keys', role: 'owner' },
  { id: 'webhooks', label: 'Webhooks', href: '/console/webhooks', role: 'owner' },
  { id: 'people', label: 'People', href: '/console/people', role: 'owner' },
] as const satisfies readonly { id: string; label: string; href: string; role: Role }[];
export type Section = (typeof SECTIONS)[number]['id'];

/** The hidden CSRF field every console form carries (@fastify/csrf-protection reads `_csrf`). */
export const csrfField = (reply: FastifyReply): Html => html`<input type="hidden" name="_csrf" value="${reply.generateCsrf()}">`;

export interface View {
  title: string;
  /** The highlighted navigation entry; none on the sign-in pages. */
  section?: Section;
  body: Html;
  status?: number;
}

function navigation(reply: FastifyReply, user: SignedIn, section: Section | undefined): Html {
  const links = SECTIONS.filter((s) => mayAct(user, s.role)).map((s) =>
    html`<li><a href="${s.href}"${s.id === section ? new Html(' aria-current="page"') : ''}>${s.label}</a></li>`);
  return html`<nav class="console-nav" aria-label="Console">
<ul>${links}</ul>
<div class="who"><span class="who-name">${user.email}</span> <span class="badge">${user.role}</span>
<form method="post" action="/console/sign-out">${csrfField(reply)}<button type="submit" class="link-button">Sign out</button></form></div>
</nav>`;
}

/** Sends a console page: the layout around `body`, never cached (it holds a user's data and a CSRF token). */
export function render(request: FastifyRequest, reply: FastifyReply, { title, section, body, status = 200 }: View): FastifyReply {
  const user = request.user as SignedIn | null;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · ${user ? user.entity.name : 'Art Catalog'} · Console</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body class="${user ? 'signed-in' : 'signed-out'}">
<a class="skip" href="#main">Skip to content</a>
<header class="console-top"><a class="brand" href="/console">Art Catalog <span>Console</span></a>${user ? html`<span class="entity">${user.entity.name}</span>` : ''}</header>
<div class="console-frame">
${user ? navigation(reply, user, section) : ''}
<main id="main" tabindex="-1">
${body}
</main>
</div>
</body>
</html>
`;
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.value);
}

/** A page's heading with an optional line under it and actions beside it. */
export const heading = (title: string, lead?: Html | string, actions?: Html): Html => html`<div class="page-head"><div><h1>${title}</h1>${lead ? html`<p class="lead">${lead}</p>` : ''}</div>${actions ? html`<div class="actions">${actions}</div>` : ''}</div>`;

/** A notice above a page's content: `ok` after a change, `error` when something was refused. */
export const notice = (kind: 'ok' | 'error', text: Html | string): Html =>
  html`<div class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</div>`;

/**
 * A table that becomes a list of cards on a phone: each cell carries its column's name (`data-label`),
 * which the stylesheet shows beside the value when the header row is hidden.
 */
export function table(caption: string, columns: readonly string[], rows: readonly (readonly (Html | string | number | null)[])[], empty = 'Nothing here yet.'): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table class="cards">
<caption class="visually-hidden">${caption}</caption>
<thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${row.map((cell, i) => html`<td data-label="${columns[i] ?? ''}">${cell ?? html`<span class="none">—</span>`}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A timestamp as people read it (UTC, to the minute), with the exact value in a <time> element. */
export const when = (iso: string | null | undefined): Html =>
  iso ? html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>` : html`<span class="none">never</span>`;
