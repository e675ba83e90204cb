// Kubernetes API failures the runtime expects: an object already there (409), or already gone (404).

export function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Awaits the call; an object already gone (404) is no failure. */
export async function ignoreMissing(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (httpStatus(err) !== 404) throw err;
  }
}

/** Awaits the call; an object already there (409) is no failure. */
export async function ignoreExisting(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
  }
}

/** Creates the object, or replaces it when it exists. */
export async function upsert(create: () => Promise<unknown>, replace: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
    await replace();
  }
}
