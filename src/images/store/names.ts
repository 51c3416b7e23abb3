/** Object names a store accepts: one path segment of letters, digits, `.`, `_` and `-`, not starting with a dot. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export function checkName(name: string): string {
  if (!SAFE_NAME.test(name)) throw new Error(`not a valid image name: ${JSON.stringify(name.slice(0, 80))}`);
  return name;
}
