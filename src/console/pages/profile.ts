import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { profileFromPut } from '../../domain/profile.js';
import { ProfilePut, type ProfilePutBody, type ProfileType } from '../../schemas/profile.js';
import { compileBodyValidator } from '../../schemas/validator.js';
import { getProfile, updateProfile } from '../../store/entities.js';
import { html, type Html } from '../../web/html.js';
import { actorOf } from '../guard.js';
import { csrfField, heading, notice, render } from '../layout.js';

/** The profile's writable fields as the form shows them, in the gallery's words. */
const FIELDS = [
  { name: 'description', label: 'About the gallery', hint: 'Shown on your public page.', type: 'textarea' },
  { name: 'external_url', label: 'Website', hint: 'https://…', type: 'url' },
  { name: 'ical_url', label: 'Calendar link', hint: 'A calendar your events are published in (https://…); the public page offers to subscribe.', type: 'url' },
  { name: 'social_instagram', label: 'Instagram', hint: 'https://instagram.com/…', type: 'url' },
  { name: 'social_twitter', label: 'X / Twitter', hint: 'https://x.com/…', type: 'url' },
  {
    name: 'default_currency', label: 'Default currency',
    hint: 'Three letters, such as EUR, USD, GBP or CHF: the currency of imported prices that name none (a "$" is this dollar when it is CAD, AUD, NZD, HKD or SGD).',
    type: 'text',
  },
] as const;

const validate = compileBodyValidator(ProfilePut, 'profile');

function profilePage(request: FastifyRequest, reply: FastifyReply, profile: ProfileType, top: Html | string = '', status = 200): FastifyReply {
  const value = (name: (typeof FIELDS)[number]['name']) => profile[name] ?? '';
  const fields = FIELDS.map((f) => html`<div class="field"><label for="${f.name}">${f.label}</label>
${f.type === 'textarea'
    ? html`<textarea id="${f.name}" name="${f.name}" rows="5" aria-describedby="${f.name}-hint">${value(f.name)}</textarea>`
    : html`<input id="${f.name}" name="${f.name}" type="${f.type}" value="${value(f.name)}" aria-describedby="${f.name}-hint"${f.name === 'default_currency' ? html` maxlength="3" autocomplete="off"` : ''}>`}
<span class="hint" id="${f.name}-hint">${f.hint}</span></div>`);
  return render(request, reply, {
    title: 'Profile', section: 'profile', status,
    body: html`${heading('Profile', html`What your public page says about <b>${profile.name}</b>, and how imports read your prices. The name, address and city are changed by the platform's operator.`)}
${top}
<form method="post" action="/console/profile" class="stack panel">${csrfField(reply)}
${fields}
<div><button type="submit">Save</button></div>
</form>`,
  });
}

/** Profile (editors and owners): the profile's writable fields, the default currency among them (docs/console.md, Profile). */
export async function profilePages(app: FastifyInstance): Promise<void> {
  app.get('/profile', { config: { role: 'editor' } }, async (request, reply) => profilePage(request, reply, await getProfile(app.db, request.user.entity.id)));

  app.post<{ Body: Record<string, string | undefined> }>('/profile', { config: { role: 'editor' } }, async (request, reply) => {
    const form = request.body ?? {};
    // An empty box clears the field, as `null` does in the API.
    const body = Object.fromEntries(FIELDS.map(({ name }) => {
      const text = String(form[name] ?? '').trim();
      return [name, text === '' ? null : text];
    })) as ProfilePutBody;
    const problems = validate(body);
    if (problems.length === 0) {
      try {
        const saved = await updateProfile(app.db, actorOf(request), profileFromPut(body));
        return profilePage(request, reply, saved, notice('ok', 'Saved.'));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
        problems.push(...(error.extras.details ?? [{ field: '', message: error.message }]));
      }
    }
    const labelOf = (field: string) => FIELDS.find((f) => field.endsWith(f.name))?.label ?? field;
    const current = { ...(await getProfile(app.db, request.user.entity.id)), ...body } as ProfileType;
    return profilePage(request, reply, current, notice('error', problems.map((p) => `${labelOf(p.field)}: ${p.message}`).join('; ')), 400);
  });
}
