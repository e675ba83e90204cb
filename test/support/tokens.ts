// Token files for tests of the embedded home's authentication (docs/auth.md "Embedded home"):
// the YAML an operator writes, with each token stored as its hash.

import { hashToken } from '../../pkg/server/auth/token-file.js';

export interface TestToken {
  user: string;
  token: string;
  /** Namespaces it may use; default every one. */
  namespaces?: readonly string[] | '*';
  /** Verbs it may use; default every one. */
  verbs?: readonly string[] | '*';
}

const list = (v: readonly string[] | '*' | undefined): string => (v === undefined || v === '*' ? '"*"' : `[${v.join(', ')}]`);

/** The `tokens:` section of a token file; `more` (e.g. a `grants:` section) follows it. */
export function tokenFileYaml(tokens: readonly TestToken[], more = ''): string {
  return (
    'tokens:\n' +
    tokens
      .map((t) => `  - user: ${t.user}\n    namespaces: ${list(t.namespaces)}\n    verbs: ${list(t.verbs)}\n    tokenHash: ${hashToken(t.token)}\n`)
      .join('') +
    more
  );
}
