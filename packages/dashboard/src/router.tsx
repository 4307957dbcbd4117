import { signal } from '@preact/signals';
import type { ComponentChildren, JSX } from 'preact';

/** The current path and query; every page has its own URL (history routing). */
export const location = signal({ path: window.location.pathname, search: window.location.search });

window.addEventListener('popstate', () => {
  location.value = { path: window.location.pathname, search: window.location.search };
});

export function navigate(to: string, replace = false): void {
  if (replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  const url = new URL(to, window.location.origin);
  location.value = { path: url.pathname, search: url.search };
  window.scrollTo(0, 0);
}

/** `/agents/:id` against `/agents/abc` → { id: 'abc' }; undefined when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const value = got[i] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return undefined;
  }
  return params;
}

/** An ordinary link (it works with a middle click and without script), routed in the page on a plain click. */
export function Link(props: { href: string; children: ComponentChildren } & JSX.HTMLAttributes<HTMLAnchorElement>) {
  const { href, children, ...rest } = props;
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
