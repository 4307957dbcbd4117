import { ApiError, type CorralClient, createCorralClient, unwrap } from '@corral/client';
import { signal } from '@preact/signals';

export interface Session {
  subject: string;
  org_id: string;
  role: 'viewer' | 'member' | 'admin' | 'owner';
  expires_at: string;
  csrf_token: string;
}

/** The signed-in session (null: signed out; undefined: not known yet). */
export const session = signal<Session | null | undefined>(undefined);

/** Same origin, cookie session; the CSRF token goes with every change. */
export const api: CorralClient = createCorralClient({
  baseUrl: window.location.origin,
  credentials: 'same-origin',
  csrfToken: () => session.value?.csrf_token,
});

export async function loadSession(): Promise<void> {
  const res = await api.GET('/v1/auth/session');
  session.value = res.response.ok && res.data ? res.data : null;
}

/** Trades a pasted JWT for the HttpOnly cookie; the token itself is not kept by the page. */
export async function signIn(token: string): Promise<void> {
  const withToken = createCorralClient({ baseUrl: window.location.origin, token, credentials: 'same-origin' });
  session.value = unwrap(await withToken.POST('/v1/auth/session'));
}

export async function signOut(): Promise<void> {
  await api.DELETE('/v1/auth/session');
  session.value = null;
}

export const errorText = (err: unknown): string =>
  err instanceof ApiError ? `${err.message} (${err.status} ${err.code})` : err instanceof Error ? err.message : String(err);

export { unwrap };
