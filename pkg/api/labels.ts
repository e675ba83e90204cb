// Labels agentplane puts on the Kubernetes objects it makes (cluster home). An object without
// `app.kubernetes.io/managed-by=agentplane` is not agentplane's: it never overwrites or deletes it.

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'agentplane';
/** What the object is for (a worker pod, a workspace claim, a connector secret, a mirror...). */
export const COMPONENT_LABEL = 'agentplane.io/component';
