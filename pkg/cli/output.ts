// Output as kubectl prints it: borderless tables with upper-case headers, relative ages, and
// -o json|yaml|name|wide. Tables come from the server (meta.k8s.io Table of the aggregated
// API) where it has them, so the CLI shows the server's columns; -o wide adds the columns of
// priority above 0, -A a NAMESPACE column in front.

import Table from 'cli-table3';
import { stringify } from 'yaml';
import { CliError, EXIT } from './exit-codes.js';

export const OUTPUT_FORMATS = ['wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number] | undefined;

export function outputFormat(raw: string | undefined): OutputFormat {
  if (raw === undefined) return undefined;
  if (!(OUTPUT_FORMATS as readonly string[]).includes(raw)) {
    throw new CliError(`unknown output format "${raw}"`, `use one of ${OUTPUT_FORMATS.join(', ')}`, EXIT.USAGE);
  }
  return raw as OutputFormat;
}

const NO_BORDER = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '',
};

/** Columns three spaces apart, no borders, headers upper-case (kubectl's printer). */
export function renderTable(headers: string[], rows: unknown[][], empty = '<none>'): string {
  const t = new Table({
    head: headers.map((h) => h.toUpperCase()),
    chars: NO_BORDER,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 3, compact: true },
  });
  for (const r of rows) t.push(r.map((v) => cell(v, empty)));
  return `${t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')}\n`;
}

/** `text` with each line indented (not the empty end after its last newline, which stays last). */
export const indent = (text: string, by = '  '): string => text.replace(/^(?=.)/gm, by);

/** A cell as kubectl shows it: absent values as <none>. */
function cell(v: unknown, empty: string): string {
  if (v === null || v === undefined || v === '') return empty;
  if (Array.isArray(v)) return v.length ? v.join(',') : empty;
  return (typeof v === 'string' ? v : JSON.stringify(v)).replace(/\s*\n\s*/g, ' ');
}

export function renderObject(obj: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(obj, null, 2)}\n` : stringify(obj);
}

/** A meta.k8s.io/v1 Table as the aggregated API returns it. */
export interface ServerTable {
  columnDefinitions: { name: string; priority: number }[];
  rows: { cells: unknown[]; object?: { metadata?: { name?: string; namespace?: string } } }[];
}

/** The server's Table as text: priority-0 columns, all with wide, NAMESPACE first with -A. */
export function renderServerTable(table: ServerTable, opts: { wide: boolean; allNamespaces: boolean }): string {
  const keep = table.columnDefinitions.map((c, i) => (opts.wide || c.priority === 0 ? i : -1)).filter((i) => i >= 0);
  const headers = keep.map((i) => table.columnDefinitions[i].name);
  const rows = table.rows.map((r) => keep.map((i) => r.cells[i]));
  if (opts.allNamespaces) {
    headers.unshift('Namespace');
    table.rows.forEach((r, n) => rows[n].unshift(r.object?.metadata?.namespace ?? ''));
  }
  return renderTable(headers, rows);
}

/** Time since `iso`, in at most two units, as kubectl's ages read: 45s, 3m12s, 5h, 2d4h. */
export function age(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (Number.isNaN(s)) return '<unknown>';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return h < 8 && m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  return d < 365 * 2 ? `${d}d` : `${Math.floor(d / 365)}y`;
}
