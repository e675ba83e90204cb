// The shell: navigation, the token prompt (shown whenever the API answers 401), and the pages.

import { type FormEvent, useEffect, useState } from 'react';
import { clearToken, getScope, getToken, setScope, setToken, setUnauthorizedHandler } from './api';
import { href, useRoute } from './hooks';
import { AgentPage } from './pages/AgentPage';
import { AgentsPage } from './pages/Agents';
import { BudgetsPage } from './pages/Budgets';
import { ConnectorsPage } from './pages/Connectors';
import { SchedulesPage } from './pages/Schedules';
import { HooksPage } from './pages/Hooks';
import { SquadsPage } from './pages/Squads';

export function App() {
  const route = useRoute();
  const [needToken, setNeedToken] = useState(false);
  // A new token remounts the page, so everything is loaded again with it.
  const [epoch, setEpoch] = useState(0);
  const [scope, setScopeState] = useState(getScope);
  const [draft, setDraft] = useState(scope);
  useEffect(() => setUnauthorizedHandler(() => setNeedToken(true)), []);

  let page: React.ReactNode;
  // Keyed: another agent's page starts afresh (its files' path, its last answer), not from this one's.
  if (route[0] === 'agents' && route[1] && route[2]) page = <AgentPage key={`${route[1]}/${route[2]}`} namespace={route[1]} name={route[2]} />;
  else if (route[0] === 'squads') page = <SquadsPage scope={scope} />;
  else if (route[0] === 'connectors') page = <ConnectorsPage scope={scope} />;
  else if (route[0] === 'budgets') page = <BudgetsPage scope={scope} />;
  else if (route[0] === 'schedules') page = <SchedulesPage scope={scope} />;
  else if (route[0] === 'hooks') page = <HooksPage scope={scope} />;
  else page = <AgentsPage scope={scope} />;

  return (
    <>
      <header>
        <a className="brand" href={href('agents')}>
          agentplane
        </a>
        <nav>
          <a href={href('agents')} className={!route[0] || route[0] === 'agents' ? 'active' : ''}>
            Agents
          </a>
          <a href={href('squads')} className={route[0] === 'squads' ? 'active' : ''}>
            Squads
          </a>
          <a href={href('connectors')} className={route[0] === 'connectors' ? 'active' : ''}>
            Connectors
          </a>
          <a href={href('budgets')} className={route[0] === 'budgets' ? 'active' : ''}>
            Budgets
          </a>
          <a href={href('schedules')} className={route[0] === 'schedules' ? 'active' : ''}>
            Schedules
          </a>
          <a href={href('hooks')} className={route[0] === 'hooks' ? 'active' : ''}>
            Hooks
          </a>
        </nav>
        <form
          className="scope"
          aria-label="Namespace"
          onSubmit={(e) => {
            e.preventDefault();
            setScope(draft.trim());
            setScopeState(draft.trim());
          }}
        >
          <input
            name="scope"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="all namespaces"
            title="Show one namespace (Enter); empty for all"
          />
        </form>
        {getToken() ? (
          <button
            type="button"
            className="link"
            onClick={() => {
              clearToken();
              setEpoch(epoch + 1);
            }}
          >
            Forget token
          </button>
        ) : null}
      </header>
      {needToken ? (
        <TokenPrompt
          onToken={(t) => {
            setToken(t);
            setNeedToken(false);
            setEpoch(epoch + 1);
          }}
        />
      ) : (
        <main key={`${epoch}/${scope}`}>{page}</main>
      )}
    </>
  );
}

function TokenPrompt({ onToken }: { onToken: (token: string) => void }) {
  const [value, setValue] = useState('');
  const hadToken = !!getToken();
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    if (value.trim()) onToken(value.trim());
  };
  return (
    <main>
      <form className="token card" onSubmit={submit} aria-label="Sign in">
        <h1>Sign in</h1>
        <p>
          This server needs a token (<code>Authorization: Bearer</code>, as for the API). It is kept in this tab only (sessionStorage).
        </p>
        {hadToken ? <p className="error">The server refused the token.</p> : null}
        <label>
          Token <input name="token" type="password" autoComplete="off" autoFocus value={value} onChange={(e) => setValue(e.target.value)} />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
