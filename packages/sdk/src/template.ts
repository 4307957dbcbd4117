/**
 * Path templates: identifiers become `{id}`, so calls to one endpoint group together and no
 * customer id is reported. Numbers, UUIDs, long hex, ULIDs, and prefixed ids in the style of
 * common APIs (`cus_…`, `ch_…`, `msg_…`, `sk-…` excepted: secrets never belong in paths).
 */
const numeric = /^\d+$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const longHex = /^[0-9a-f]{16,}$/i;
const ulid = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
// cus_NffrFeUfNV2Hib, ch_3MmlLrLkdIwHu7ix0snN0B15, msg_01XFDUDYJgAACzvnptvVoYEL, file-abc123…:
// a short lower-case prefix, `_` or `-`, then an opaque run with at least one digit.
const prefixed = /^[a-z]{1,16}(?:_[a-z]{1,16})?[_-](?=[A-Za-z0-9]*\d)[A-Za-z0-9]{6,}$/;
// Any other long opaque token mixing letters and digits (base62 ids, hashes in base64url).
const opaque = /^(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}$/;

export function isIdentifier(segment: string): boolean {
  return numeric.test(segment) || uuid.test(segment) || longHex.test(segment) || ulid.test(segment) || prefixed.test(segment) || opaque.test(segment);
}

const cache = new Map<string, string>();
const CACHE_MAX = 2000;

/** `/v1/customers/cus_123abc/charges/42` → `/v1/customers/{id}/charges/{id}`; at most 2048 characters. */
export function templatePath(pathname: string): string {
  const hit = cache.get(pathname);
  if (hit !== undefined) return hit;
  let out = '';
  let start = 0;
  for (let i = 0; i <= pathname.length; i++) {
    if (i === pathname.length || pathname.charCodeAt(i) === 47 /* / */) {
      const segment = pathname.slice(start, i);
      out += segment !== '' && isIdentifier(segment) ? '{id}' : segment;
      if (i < pathname.length) out += '/';
      start = i + 1;
    }
  }
  if (out === '') out = '/';
  if (out.length > 2048) out = out.slice(0, 2048);
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(pathname, out);
  return out;
}
