// Cumulative cost over time for one namespace: a line per agent and one for the namespace, from
// cost_usd of the events that ended tasks (costs.ts). Chart.js, with only the parts a line chart needs.

import { CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';
import type { CostPoint } from './costs';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Legend, Tooltip);

const COLORS = ['#2563eb', '#16a34a', '#dc2626', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];

export function CostChart({ namespace, series }: { namespace: string; series: { agent: string; points: CostPoint[] }[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'line', { x: number; y: number }[]> | undefined>(undefined);

  const all = series.flatMap((s) => s.points).sort((a, b) => a.time - b.time);
  // From a little before the first completed task to now, every line starting at $0.
  const first = all[0]?.time ?? Date.now();
  const last = Math.max(all.at(-1)?.time ?? first, Date.now());
  const min = first - Math.max((last - first) * 0.05, 30_000);
  const cumulative = (points: CostPoint[]): { x: number; y: number }[] => {
    let sum = 0;
    return [{ x: min, y: 0 }, ...[...points].sort((a, b) => a.time - b.time).map((p) => ({ x: p.time, y: (sum += p.cost) }))];
  };
  // The namespace's total, when it is not the one agent's line again.
  const total = {
    label: `${namespace} (all agents)`,
    data: cumulative(all),
    borderColor: '#111827',
    backgroundColor: '#111827',
    borderWidth: 3,
    stepped: true as const,
  };
  const datasets = [
    ...(series.length > 1 ? [total] : []),
    ...series.map((s, i) => ({
      label: s.agent,
      data: cumulative(s.points),
      borderColor: COLORS[i % COLORS.length],
      backgroundColor: COLORS[i % COLORS.length],
      borderWidth: 1.5,
      stepped: true as const,
    })),
  ];
  const key = JSON.stringify(datasets.map((d) => [d.label, d.data.length, d.data.at(-1)?.y]));

  useEffect(() => {
    if (!canvas.current) return;
    if (!chart.current) {
      chart.current = new Chart(canvas.current, {
        type: 'line',
        data: { datasets },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          parsing: false,
          scales: {
            x: { type: 'linear', min, max: last, ticks: { callback: (v) => new Date(Number(v)).toLocaleTimeString() } },
            y: { type: 'linear', beginAtZero: true, title: { display: true, text: 'USD (cumulative)' } },
          },
          plugins: {
            tooltip: {
              callbacks: {
                title: (items) => new Date(items[0]?.parsed.x ?? 0).toLocaleString(),
                label: (i) => `${i.dataset.label}: $${Number(i.parsed.y).toFixed(4)}`,
              },
            },
          },
        },
      });
    } else {
      chart.current.data.datasets = datasets;
      const x = chart.current.options.scales?.x;
      if (x) Object.assign(x, { min, max: last });
      chart.current.update();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(
    () => () => {
      chart.current?.destroy();
      chart.current = undefined;
    },
    [],
  );

  return (
    <div className="chart" data-testid={`cost-chart-${namespace}`}>
      {all.length ? null : <p className="muted">No completed tasks yet.</p>}
      <div className="chart-box">
        <canvas ref={canvas} />
      </div>
    </div>
  );
}
