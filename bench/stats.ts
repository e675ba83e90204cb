// Small numeric helpers for the benchmark report.

export interface Summary {
  n: number;
  min: number;
  median: number;
  p90: number;
  max: number;
}

/** Nearest-rank percentile (p in 0..100) of an ascending-sorted, non-empty array. */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples');
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, min: s[0], median: percentile(s, 50), p90: percentile(s, 90), max: s[s.length - 1] };
}

/** Renders rows as a left-aligned first column and right-aligned others. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const fmt = (n: number, digits = 1): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
