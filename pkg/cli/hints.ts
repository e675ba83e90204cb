// A hint for each refusal: what to do next, in the CLI's own commands.

/** What a request was about, for the hint. */
export interface RequestWhat {
  kind?: string;
  namespace?: string;
  server: string;
  hasToken: boolean;
  /** Through kube-apiserver (kubectl agentplane): the kubeconfig context used. */
  kubeContext?: string;
}

export function hintFor(status: number, reason: string, message: string, what: RequestWhat): string | undefined {
  const ns = what.namespace ? ` -n ${what.namespace}` : '';
  switch (true) {
    case status === 401 && what.kubeContext !== undefined:
      return `kube-apiserver did not accept the credentials of kube context "${what.kubeContext}"; check them with \`kubectl auth whoami\``;
    case status === 403 && what.kubeContext !== undefined:
      return `Kubernetes RBAC does not allow this to the user of kube context "${what.kubeContext}"; check with \`kubectl auth can-i\`, and ask for a Role that grants it (the agentplane-view, -edit and -admin ClusterRoles do)`;
    case status === 401:
      return what.hasToken
        ? "the server did not accept the token: check --token, AGENTPLANE_TOKEN or the context's token (agentplane config get-contexts)"
        : 'the server needs a token: pass --token, set AGENTPLANE_TOKEN, or store one with `agentplane config set-context <name> --token <token>`';
    case status === 403:
      return 'the token is valid but may not do this here; ask for a token that grants it, or use a namespace it covers (-n)';
    case status === 404 && reason === 'NotFound': {
      const list =
        what.kind === 'squad'
          ? 'agentplane squad ls'
          : what.kind === 'connector'
            ? 'agentplane connector ls'
            : what.kind === 'secret'
              ? 'agentplane secret ls'
              : 'agentplane ls';
      return `see what exists with \`${list}${ns}\`, or -A for every namespace`;
    }
    case status === 404:
      return `no such API path on ${what.server}: is that an agentplane server of this version?`;
    case status === 409 && /busy/.test(message):
      return 'wait for the task (agentplane logs -f <agent>), steer it (agentplane steer <agent> "<text>") or cancel it (agentplane cancel <agent>)';
    case status === 409 && /asleep/.test(message):
      return 'put the agent to sleep first: agentplane sleep <agent>';
    case status === 409 && /no task/i.test(message):
      return 'the agent is idle: no task is running';
    case status === 409:
      return 'the object changed or is in a state that does not allow this; look at it (agentplane describe / squad get) and try again';
    case status === 400 || status === 422:
      return 'fix the value named above; each command lists its flags with --help';
    case status === 429:
      return 'the server is limiting requests; wait a moment and try again';
    case status >= 500:
      return `the server failed (${reason || status}); its log says why`;
    default:
      return undefined;
  }
}
