/**
 * URL globs over `host/path` (contract section 6): `*` matches within one segment, `**` any
 * number of whole segments (none included). Compiled once to an anchored regular expression, so
 * matching allocates nothing.
 */

/** Why a glob is not accepted, or undefined when it is. The server refuses the same globs. */
export function globProblem(glob: string): string | undefined {
  if (/\s/.test(glob)) return 'must not contain whitespace';
  if (glob.includes('://')) return 'is host/path without a scheme, e.g. api.stripe.com/v1/charges/**';
  const segments = glob.split('/');
  if (segments.some((s) => s === '')) return 'must not have empty segments (// or a leading or trailing /)';
  if (segments.some((s) => s.includes('**') && s !== '**')) return '** must be a whole segment';
  return undefined;
}

const escape = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
const segmentSource = (segment: string) => segment.split('*').map(escape).join('[^/]*');

/** The regular expression source of a glob; the host (first segment) is matched lower-cased. */
export function globSource(glob: string): string {
  const segments = glob.split('/');
  let source = '^';
  let needSeparator = false;
  segments.forEach((raw, i) => {
    const segment = i === 0 ? raw.toLowerCase() : raw;
    const last = i === segments.length - 1;
    if (segment === '**') {
      if (needSeparator) source += '(?:/[^/]*)*';
      else source += last ? '.*' : '(?:[^/]*/)*';
      return;
    }
    source += (needSeparator ? '/' : '') + segmentSource(segment);
    needSeparator = true;
  });
  return `${source}$`;
}

export interface GlobMatcher {
  readonly glob: string;
  /** `target` is `host/path` with no leading slash on the path, e.g. `api.stripe.com/v1/charges`. */
  matches(target: string): boolean;
}

export function compileGlob(glob: string): GlobMatcher {
  const problem = globProblem(glob);
  if (problem) throw new Error(`glob ${JSON.stringify(glob)} ${problem}`);
  const re = new RegExp(globSource(glob));
  return { glob, matches: (target) => re.test(target) };
}

/** The string globs are matched against: lower-cased host, then the path without its leading slash. */
export function globTarget(host: string, path: string): string {
  const trimmed = path.startsWith('/') ? path.slice(1) : path;
  return trimmed === '' ? host.toLowerCase() : `${host.toLowerCase()}/${trimmed}`;
}
