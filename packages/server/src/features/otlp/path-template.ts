/*
 * Path templates, so /users/123 and /users/456 count as one endpoint: a segment that looks like
 * an identifier (all digits, a UUID, long hex, or a long token mixing letters and digits)
 * becomes {id}.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DIGITS = /^\d+$/;
const HEX = /^[0-9a-f]{16,}$/i;
const TOKEN = /^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_-]{20,}$/;

// Segments shorter than 16 characters can only be numbers; most are, or are words, so the
// longer patterns run only where they could match.
const isIdentifier = (segment: string): boolean =>
  DIGITS.test(segment) || (segment.length >= 16 && (UUID.test(segment) || HEX.test(segment) || TOKEN.test(segment)));

export function templatePath(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment.length > 0 && isIdentifier(segment) ? '{id}' : segment))
    .join('/');
}
