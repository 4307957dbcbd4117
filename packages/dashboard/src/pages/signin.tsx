import { useState } from 'preact/hooks';
import { errorText, signIn } from '../api';
import { ErrorBanner } from '../components';

const mintCommand = 'corral token --org <organization-uuid> --role admin --ttl 12h';

export function SignIn() {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(token.trim());
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const copy = async () => {
    await navigator.clipboard?.writeText(mintCommand).catch(() => undefined);
    setCopied(true);
  };
  return (
    <main id="main" class="signin">
      <h1>Sign in to Corral</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Token (JWT)</label>
        <input id="token" name="token" type="password" autoComplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        <button type="submit" disabled={busy || token.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorBanner error={error} />
      <div class="hint">
        <p>Running Corral yourself? Mint a token where the server runs (same environment as the server):</p>
        <pre>
          <code>{mintCommand}</code>
        </pre>
        <button type="button" class="secondary" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy the command'}
        </button>
        <p class="muted">The token is exchanged for an HttpOnly session cookie and not stored by this page.</p>
      </div>
    </main>
  );
}
