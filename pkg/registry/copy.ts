// Copies of stored objects. Every object storage holds is JSON (it is stored as JSON, and read
// back from it), so a JSON round trip copies it exactly, at a third of structuredClone's
// cost for an agent (7 against 22 µs, docs/performance.md "API under load"): a store write hands
// out several copies (one per watcher), and a burst of writes is the API's hot path.

/**
 * A deep copy of an object read from storage. Not for a client's object before validation: JSON
 * would turn its Infinity into null and drop its undefined members.
 */
export const copyObject = <T>(obj: T): T => JSON.parse(JSON.stringify(obj)) as T;

/** An object from its stored JSON: each call a copy of its own. */
export const fromJson = <T>(json: string): T => JSON.parse(json) as T;
