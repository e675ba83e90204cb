// The authenticated caller, in Kubernetes' user.Info shape: what the authorizer sends to
// SubjectAccessReview and what handlers find on `request.user`.

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** Every authenticated user is in this group (Kubernetes adds it the same way). */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** Adds system:authenticated unless present, as kube-apiserver's authenticated-group adder does. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
