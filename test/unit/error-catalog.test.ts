import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ApiError, ERROR_CATALOG, type ErrorCode } from '../../src/domain/errors.js';
import { HEADERS } from '../../src/http/protocol/responses.js';

/**
 * The error catalog (src/domain/errors.ts) is the one source of the API's error codes: this holds it to
 * the contract, keeps docs/api.md's table generated from it, and finds copies of its messages.
 */

/**
 * The error codes the service promises (docs/api.md, Errors), copied here so that the catalog cannot drift:
 * - the published interface's table: 400, 401, 403, 404, 429, 500;
 * - requests and errors: 413, 415, 503; idempotency and conflicts: 422 and the four 409 codes;
 * - agreed for issue #16 and the robustness work: 405 (with Allow), 408, 431.
 */
const CONTRACT: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  rate_limited: 429,
  internal_error: 500,
  payload_too_large: 413,
  unsupported_media_type: 415,
  service_unavailable: 503,
  idempotency_key_reused: 422,
  duplicate: 409,
  ambiguous: 409,
  conflict: 409,
  idempotency_conflict: 409,
  method_not_allowed: 405,
  request_timeout: 408,
  headers_too_large: 431,
};

const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];

describe('the error catalog', () => {
  test('has exactly the contract\'s codes, each with the contract\'s status', () => {
    const missing = Object.keys(CONTRACT).filter((code) => !(code in ERROR_CATALOG));
    const extra = codes.filter((code) => !(code in CONTRACT));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    for (const code of codes) expect(ERROR_CATALOG[code].status, code).toBe(CONTRACT[code]);
  });

  test('every entry has a message, a description and only documented headers', () => {
    for (const code of codes) {
      const entry: { message: string; description: string; headers?: readonly string[] } = ERROR_CATALOG[code];
      expect(entry.message, code).toMatch(/\w.*\.$/);
      expect(entry.description.length, code).toBeGreaterThan(20);
      for (const header of entry.headers ?? []) expect(Object.keys(HEADERS), `${code}: ${header}`).toContain(header);
    }
  });

  test('an ApiError of a code answers its status and, by default, its catalog message', () => {
    for (const code of codes) {
      const error = new ApiError(code);
      expect(error.status).toBe(ERROR_CATALOG[code].status);
      expect(error.toBody()).toEqual({ error: code, message: ERROR_CATALOG[code].message });
    }
  });

  test('no source file outside the catalog repeats one of its messages', () => {
    const files = sourceFiles(join(import.meta.dirname, '..', '..', 'src')).filter((file) => !file.endsWith(join('domain', 'errors.ts')));
    expect(files.length).toBeGreaterThan(50);
    const copies = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return codes.filter((code) => text.includes(ERROR_CATALOG[code].message)).map((code) => `${file}: ${code}`);
    });
    expect(copies).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith('.ts') ? [path] : [];
  });
}

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'api.md');
const START = '<!-- error-catalog:start (generated from src/domain/errors.ts by test/unit/error-catalog.test.ts) -->';
const END = '<!-- error-catalog:end -->';

/** The table of docs/api.md, rendered from the catalog. */
function catalogTable(): string {
  const escape = (text: string) => text.replace(/\|/g, '\\|');
  const rows = codes.map((code) => {
    const entry: { status: number; description: string; headers?: readonly string[] } = ERROR_CATALOG[code];
    const headers = (entry.headers ?? []).map((h) => `\`${h}\``).join(', ') || '—';
    return `| ${entry.status} | \`${code}\` | ${escape(entry.description)} | ${headers} |`;
  });
  return ['| Status | `error` | When | Headers |', '|---|---|---|---|', ...rows].join('\n');
}

describe('docs/api.md', () => {
  test('its error table is the catalog (UPDATE_DOCS=1 rewrites it)', () => {
    const text = readFileSync(DOC, 'utf8');
    const start = text.indexOf(START);
    const end = text.indexOf(END);
    expect(start, 'docs/api.md lacks the error-catalog markers').toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const expected = `${START}\n${catalogTable()}\n${END}`;
    const actual = text.slice(start, end + END.length);
    if (process.env.UPDATE_DOCS === '1' && actual !== expected) writeFileSync(DOC, text.replace(actual, expected));
    else expect(actual).toBe(expected);
  });
});
