/**
 * The operator console (SPEC §13), a client of the management API and nothing more. Sign-in takes an
 * API token (field "API token"), asks `GET /accounts` for its account and whether it may write (its
 * permission groups), and keeps the token in sessionStorage. A 401 at any time returns to sign-in with
 * a message; "Sign out" forgets the token. Views refresh every 4 s.
 */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, Client, SessionEnded } from './api.js';
import { storedToken, storeToken } from './session.js';
import type { AccountItem } from './types.js';
import type { ViewProps } from './view.js';
import { VIEWS } from './views/index.js';

/** The fixed id of the "Switchyard Write" permission group (docs/api.md, account tokens). */
const WRITE_GROUP = 'b688b1f8d4ebf2e4198be92100a4496a';

interface Session {
  client: Client;
  account: AccountItem;
  canWrite: boolean;
}

async function signIn(token: string): Promise<Session> {
  const bare = new Client(token);
  const accounts = await bare.get<AccountItem[]>('/accounts');
  const account = accounts[0];
  if (account === undefined) throw new ApiError(403, 'This token has no account.');
  const client = bare.withAccount(account.id);
  let canWrite = false;
  try {
    const verified = await client.get<{ id: string }>('/accounts/{account}/tokens/verify');
    const info = await client.get<{ policies: Array<{ permission_groups: Array<{ id: string }> }> }>(
      `/accounts/{account}/tokens/${encodeURIComponent(verified.id)}`,
    );
    canWrite = info.policies.some((p) => p.permission_groups.some((g) => g.id === WRITE_GROUP));
  } catch (err) {
    if (err instanceof SessionEnded) throw err;
    // Tokens made before permission groups: treat as read-only; the API still decides every write.
  }
  return { client, account, canWrite };
}

function SignIn({ notice, onSession }: { notice: string | undefined; onSession: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const value = token.trim();
    if (value === '') return setError('Enter an API token.');
    setBusy(true);
    setError(undefined);
    try {
      const session = await signIn(value);
      storeToken(value);
      onSession(session);
    } catch (err) {
      setError(
        err instanceof SessionEnded
          ? `This API token was not accepted: ${err.message}. Check it (switchyard token create makes one) and try again.`
          : (err as Error).message,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Switchyard console</h1>
      {notice !== undefined ? (
        <p class="notice" role="alert">
          {notice}
        </p>
      ) : null}
      <form onSubmit={(e) => void submit(e)} autocomplete="off">
        <label for="token">API token</label>
        <input
          id="token"
          ref={input}
          type="password"
          name="token"
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          aria-describedby="token-help"
        />
        <p id="token-help" class="meta">
          A read-only token is enough to look; enabling or disabling origins, retrying deliveries and test alerts need a
          read-write token. The token stays in this tab only.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error !== undefined ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
      </form>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [restoring, setRestoring] = useState(storedToken() !== null);
  const [view, setView] = useState<string>('origins');

  const signOut = useCallback((message?: string) => {
    storeToken(null);
    setSession(undefined);
    setNotice(message);
  }, []);
  const onSessionEnded = useCallback(
    (message: string) => signOut(`Your session ended: the API refused the token (${message}). Sign in again.`),
    [signOut],
  );

  useEffect(() => {
    const token = storedToken();
    if (token === null) return;
    signIn(token)
      .then(setSession)
      .catch((err: unknown) =>
        err instanceof SessionEnded ? onSessionEnded(err.message) : setNotice((err as Error).message),
      )
      .finally(() => setRestoring(false));
  }, [onSessionEnded]);

  if (restoring) return <p class="loading">Signing in…</p>;
  if (session === undefined) {
    return (
      <SignIn
        notice={notice}
        onSession={(s) => {
          setNotice(undefined);
          setSession(s);
        }}
      />
    );
  }
  const props: ViewProps = { client: session.client, canWrite: session.canWrite, onSessionEnded };
  const Current = (VIEWS.find((entry) => entry.id === view) ?? VIEWS[0])?.component;
  return (
    <>
      <header>
        <h1>Switchyard console</h1>
        <span class="who">
          {session.account.name} <span class="badge">{session.canWrite ? 'read-write token' : 'read-only token'}</span>
        </span>
        <button type="button" onClick={() => signOut('Signed out.')}>
          Sign out
        </button>
      </header>
      <nav aria-label="Views">
        {VIEWS.map(({ id, label }) => (
          <button type="button" key={id} aria-current={view === id ? 'page' : undefined} onClick={() => setView(id)}>
            {label}
          </button>
        ))}
      </nav>
      <main>{Current === undefined ? null : <Current key={view} {...props} />}</main>
    </>
  );
}

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(<App />, root);
}
