// Delegated authorization: every request is a SubjectAccessReview (authorization.k8s.io/v1)
// against the cluster, so RBAC (or whatever authorizers the cluster runs) decides. Decisions
// are cached briefly, keyed by the user (name, uid, groups, extra) and the attributes.

import { createHash } from 'node:crypto';
import { AuthorizationV1Api, type KubeConfig, type V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import { componentLogger, type Logger } from '../../observability/logger.js';
import type { RequestAttributes } from './attributes.js';
import { errMessage } from './authenticator.js';
import { TtlCache } from './ttl-cache.js';
import type { UserInfo } from './user.js';

export interface Decision {
  allowed: boolean;
  /** The authorizer's explanation (RBAC usually gives none for a denial). */
  reason: string;
}

export type SubjectAccessReviewFn = (
  spec: V1SubjectAccessReviewSpec,
) => Promise<{ allowed: boolean; denied?: boolean; reason?: string; evaluationError?: string }>;

export interface AuthorizerOptions {
  review: SubjectAccessReviewFn;
  logger: Logger;
  /** How long an allow / a deny is reused; default 5 s each. */
  allowTtlMs?: number;
  denyTtlMs?: number;
}

export class DelegatedAuthorizer {
  private readonly cache = new TtlCache<Decision>(8192);
  private readonly inflight = new Map<string, Promise<Decision>>();
  private readonly log: Logger;

  constructor(private readonly opts: AuthorizerOptions) {
    this.log = componentLogger(opts.logger, 'authz');
  }

  static fromKubeConfig(kc: KubeConfig, opts: Omit<AuthorizerOptions, 'review'>): DelegatedAuthorizer {
    const api = kc.makeApiClient(AuthorizationV1Api);
    return new DelegatedAuthorizer({
      ...opts,
      review: async (spec) => {
        const res = await api.createSubjectAccessReview({
          body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
        });
        return res.status ?? { allowed: false };
      },
    });
  }

  /** Throws when the review itself fails (the filter answers 500, as kube-apiserver does). */
  async authorize(user: UserInfo, attrs: RequestAttributes): Promise<Decision> {
    const spec = reviewSpec(user, attrs);
    const key = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
    const cached = this.cache.get(key);
    if (cached) return cached;
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.opts
        .review(spec)
        .then((s) => {
          if (s.evaluationError) this.log.warn({ user: user.username, evaluationError: s.evaluationError }, 'SubjectAccessReview reported an evaluation error');
          const d: Decision = { allowed: s.allowed === true && s.denied !== true, reason: s.reason ?? '' };
          this.cache.set(key, d, d.allowed ? (this.opts.allowTtlMs ?? 5_000) : (this.opts.denyTtlMs ?? 5_000));
          return d;
        })
        .catch((err: unknown) => {
          this.log.error({ user: user.username, err: errMessage(err) }, 'SubjectAccessReview failed');
          throw err;
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }
}

/** The SubjectAccessReview spec for a user and request; groups and extra keys sorted for caching. */
export function reviewSpec(user: UserInfo, attrs: RequestAttributes): V1SubjectAccessReviewSpec {
  const extra: Record<string, string[]> = {};
  for (const k of Object.keys(user.extra).sort()) extra[k] = user.extra[k]!;
  const spec: V1SubjectAccessReviewSpec = {
    user: user.username,
    groups: [...user.groups].sort(),
    ...(Object.keys(extra).length ? { extra } : {}),
    ...(user.uid ? { uid: user.uid } : {}),
  };
  if ('resource' in attrs) {
    const r = attrs.resource;
    spec.resourceAttributes = {
      verb: r.verb,
      group: r.group,
      version: r.version,
      resource: r.resource,
      ...(r.subresource ? { subresource: r.subresource } : {}),
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.name ? { name: r.name } : {}),
    };
  } else {
    spec.nonResourceAttributes = { verb: attrs.nonResource.verb, path: attrs.nonResource.path };
  }
  return spec;
}
