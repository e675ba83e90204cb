// `ls`/`get` of the resources the aggregated API serves: its Table for text and wide output
// (the server's own columns), the REST mirror's objects for -o json|yaml, names for -o name.

import { GROUP_VERSION, TABLE_ACCEPT } from '../client.js';
import { outputFormat, renderObject, renderServerTable, type ServerTable } from '../output.js';
import { listNamespace, type Session } from '../session.js';

export interface Listed {
  /** REST collection path, e.g. /api/v1/agents, and the key of its array. */
  rest: string;
  key: string;
  /** Aggregated API plural, e.g. agents. */
  plural: string;
  kind: string;
}

/** Lists (no name) or gets (a name) in the chosen output. */
export async function show(s: Session, what: Listed, name?: string): Promise<void> {
  const format = outputFormat(s.opts.output);
  const namespace = name ? s.target.namespace : listNamespace(s);
  if (format === 'json' || format === 'yaml') {
    if (name) {
      const { body } = await s.client.call('GET', `${what.rest}/${encodeURIComponent(name)}`, { query: { namespace }, kind: what.kind });
      s.out(renderObject(body, format));
      return;
    }
    const { body } = await s.client.call<Record<string, unknown>>('GET', what.rest, { query: { namespace }, kind: what.kind });
    s.out(renderObject({ [what.key]: body[what.key] }, format));
    return;
  }
  // The REST read first: its refusal names the kind and namespace ("agent "x" not found in namespace …").
  if (name) await s.client.call('GET', `${what.rest}/${encodeURIComponent(name)}`, { query: { namespace }, kind: what.kind });
  const base = `/apis/${GROUP_VERSION}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${what.plural}`;
  const path = name ? `${base}/${encodeURIComponent(name)}` : base;
  const { body } = await s.client.call<ServerTable>('GET', path, { accept: TABLE_ACCEPT, kind: what.kind, ...(namespace ? { ns: namespace } : {}) });
  if (format === 'name') {
    for (const r of body.rows) s.out(`${what.kind}/${String(r.cells[0])}\n`);
    return;
  }
  if (!body.rows.length) {
    s.err(namespace ? `No ${what.plural} found in namespace ${namespace}.\n` : `No ${what.plural} found.\n`);
    return;
  }
  s.out(renderServerTable(body, { wide: format === 'wide', allNamespaces: !namespace }));
}
