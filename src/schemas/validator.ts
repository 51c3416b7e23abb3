import { Ajv, type ErrorObject } from 'ajv';
import { isCountryCode, isCurrencyCode } from './codes.js';
import { isCalendarDate, isHttpUrl, toCanonicalTimestamp } from './formats.js';
import type { FieldProblem } from './common.js';

/**
 * Two Ajv instances: bodies are strict (no coercion: "1990" is not a number, unknown fields are named),
 * query strings and path parameters arrive as text and are coerced to the schema's types.
 */
export const FORMAT_MESSAGES: Record<string, string> = {
  uri: 'must be an absolute http or https URL',
  'uri-or-empty': 'must be an absolute http or https URL, or empty',
  date: 'must be a real calendar date in the form YYYY-MM-DD',
  'date-time': 'must be an ISO 8601 timestamp, e.g. 2026-11-21T10:15:30.123Z',
  iso4217: 'must be an ISO 4217 currency code, e.g. EUR',
  'iso3166-alpha2': 'must be an ISO 3166-1 alpha-2 country code, e.g. DE',
};

function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true, coerceTypes: coerce, useDefaults: coerce, removeAdditional: false, strict: false,
  });
  ajv.addFormat('uri', { type: 'string', validate: isHttpUrl });
  ajv.addFormat('uri-or-empty', { type: 'string', validate: (v: string) => v === '' || isHttpUrl(v) });
  ajv.addFormat('date', { type: 'string', validate: isCalendarDate });
  ajv.addFormat('date-time', { type: 'string', validate: (v: string) => toCanonicalTimestamp(v) !== undefined });
  ajv.addFormat('iso4217', { type: 'string', validate: isCurrencyCode });
  ajv.addFormat('iso3166-alpha2', { type: 'string', validate: isCountryCode });
  return ajv;
}

export const strictAjv = createAjv(false);
export const coercingAjv = createAjv(true);

/** One readable problem per field, from Ajv's errors. */
export function toFieldProblems(errors: readonly Partial<ErrorObject>[], part: string): FieldProblem[] {
  const byField = new Map<string, string>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const [field, message] = describe(error, part);
    if (!byField.has(field)) byField.set(field, message);
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

function describe(error: Partial<ErrorObject>, part: string): [string, string] {
  const path = (error.instancePath ?? '').split('/').slice(1).join('.');
  const params = (error.params ?? {}) as Record<string, unknown>;
  const at = (name: unknown) => (path ? `${path}.${String(name)}` : String(name));
  switch (error.keyword) {
    case 'required': return [at(params.missingProperty), 'is required'];
    case 'additionalProperties': return [at(params.additionalProperty), 'is not a known field'];
    case 'type': {
      const types = ([] as unknown[]).concat(params.type).join(' or ').replace('object', 'a JSON object');
      return path ? [path, `must be ${types}`] : ['', `the ${part === 'body' ? 'body' : part} must be ${types}`];
    }
    case 'format': return [path, FORMAT_MESSAGES[String(params.format)] ?? `must be a valid ${String(params.format)}`];
    case 'enum': return [path, `must be one of: ${(params.allowedValues as unknown[]).filter((v) => v !== null).map((v) => JSON.stringify(v).replace(/^"|"$/g, '')).join(', ')}`];
    case 'const': return [path, `must be ${JSON.stringify(params.allowedValue)}`];
    case 'maxLength': return [path, `must be at most ${String(params.limit)} characters`];
    case 'minLength': return [path, Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`];
    case 'minimum': return [path, `must be ${String(params.limit)} or more`];
    case 'maximum': return [path, `must be ${String(params.limit)} or less`];
    case 'pattern': return [path, 'has an invalid form'];
    default: return [path, error.message ?? 'is invalid'];
  }
}

/** A strict validator for one value against a body schema, as for a whole body (used per batch item). */
export function compileBodyValidator(schema: object, part = 'item'): (value: unknown) => FieldProblem[] {
  const validate = strictAjv.compile(schema);
  return (value) => (validate(value) ? [] : toFieldProblems(validate.errors ?? [], part));
}
