// The top-level keys of a JSON object's text in the order written, repeats included: JSON.parse
// keeps only the last of a repeated key, and a log line that names a key twice is the bug.

/** The keys of the object `text` as written; throws when `text` is not one JSON object. */
export function topLevelKeys(text: string): string[] {
  JSON.parse(text); // well-formed first, so the scan below may assume it
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(JSON.parse(text.slice(i, j + 1)) as string);
      expectKey = false;
      i = j;
    } else if (ch === '{' || ch === '[') {
      depth++;
      expectKey = ch === '{' && depth === 1;
    } else if (ch === '}' || ch === ']') depth--;
    else if (ch === ',' && depth === 1) expectKey = true;
  }
  if (!text.trimStart().startsWith('{')) throw new Error('not a JSON object');
  return keys;
}

/** The keys `text` names more than once at its top level. */
export function repeatedKeys(text: string): string[] {
  const seen = new Set<string>();
  return topLevelKeys(text).filter((k) => seen.has(k) || !seen.add(k));
}
