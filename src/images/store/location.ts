/** IMAGE_STORE's two forms; kept apart from the stores so that config.ts loads no SDK. */
export type ImageStoreLocation = { kind: 'file'; path: string } | { kind: 's3'; bucket: string; prefix: string };

/** S3's bucket naming rules (3–63 lowercase letters, digits, dots and hyphens, letter or digit at both ends). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** IMAGE_STORE parsed, or an Error whose message is the one-line start-up error. */
export function parseImageStore(raw: string): ImageStoreLocation {
  const wrong = () => new Error(`IMAGE_STORE must be file:PATH or s3://bucket/prefix (got "${raw}")`);
  if (raw.startsWith('file:')) {
    const path = raw.slice('file:'.length);
    if (path === '') throw wrong();
    return { kind: 'file', path };
  }
  const s3 = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(raw);
  if (!s3 || !BUCKET.test(s3[1]!)) throw wrong();
  const prefix = (s3[2] ?? '').replace(/\/+$/, '');
  if (prefix !== '' && prefix.split('/').some((part) => part === '' || part === '.' || part === '..')) throw wrong();
  return { kind: 's3', bucket: s3[1]!, prefix: prefix === '' ? '' : `${prefix}/` };
}
