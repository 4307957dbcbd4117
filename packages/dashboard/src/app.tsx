import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { loadSession, session, signOut } from './api';
import { AgentPage } from './pages/agent';
import { Agents } from './pages/agents';
import { AlertPage, Alerts } from './pages/alerts';
import { Audit } from './pages/audit';
import { Keys } from './pages/keys';
import { Overview } from './pages/overview';
import { Policies } from './pages/policies';
import { SignIn } from './pages/signin';
import { Link, location, match } from './router';

const nav: Array<[string, string]> = [
  ['/', 'Overview'],
  ['/agents', 'Agents'],
  ['/alerts', 'Alerts'],
  ['/keys', 'API keys'],
  ['/audit', 'Audit log'],
];

function page(path: string): { title: string; view: ComponentChildren } {
  let p: Record<string, string> | undefined;
  if (path === '/') return { title: 'Overview', view: <Overview /> };
  if (match('/agents', path)) return { title: 'Agents', view: <Agents /> };
  if ((p = match('/agents/:id/policies', path))) return { title: 'Policies', view: <Policies agentId={p.id ?? ''} key={p.id} /> };
  if ((p = match('/agents/:id', path))) return { title: 'Agent', view: <AgentPage agentId={p.id ?? ''} key={p.id} /> };
  if (match('/alerts', path)) return { title: 'Alerts', view: <Alerts /> };
  if ((p = match('/alerts/:id', path))) return { title: 'Alert', view: <AlertPage alertId={p.id ?? ''} key={p.id} /> };
  if (match('/keys', path)) return { title: 'API keys', view: <Keys /> };
  if (match('/audit', path)) return { title: 'Audit log', view: <Audit /> };
  return { title: 'Not found', view: <p>There is no page at {path}.</p> };
}

export function App() {
  useEffect(() => void loadSession(), []);
  const current = session.value;
  const { path } = location.value;
  const { title, view } = page(path);
  useEffect(() => {
    document.title = current ? `${title} · Corral` : 'Sign in · Corral';
  }, [title, current]);
  if (current === undefined) return <p class="loading">Loading…</p>;
  if (current === null) return <SignIn />;
  const section = nav.find(([href]) => (href === '/' ? path === '/' : path.startsWith(href)))?.[0];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Corral</span>
        <nav aria-label="Main">
          <ul>
            {nav.map(([href, label]) => (
              <li key={href}>
                <Link href={href} aria-current={section === href ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            {current.subject} · {current.role}
          </span>
          <button type="button" class="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {view}
      </main>
    </>
  );
}
