// Paths served under a prefix: the prefix itself and what is below it, never a sibling that only
// starts with the same letters (`/control` covers `/control/x`, not `/controller`).

/** Whether `path` is one of `prefixes` or below one of them. */
export const underAny = (path: string, prefixes: readonly string[]): boolean => prefixes.some((p) => path === p || path.startsWith(`${p}/`));
