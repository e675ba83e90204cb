// Helpers the strategies share for their table columns and selectable fields.

import type { ObjectMeta } from '../api/meta.js';
import type { TableColumnDefinition } from './strategy.js';

export const nameColumn: TableColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
};

export const ageColumn: TableColumnDefinition = {
  name: 'Age',
  type: 'string',
  format: '',
  description: 'Time since the object was created.',
  priority: 0,
};

export const column = (name: string, description: string, priority = 0, type = 'string'): TableColumnDefinition => ({
  name,
  type,
  format: '',
  description,
  priority,
});

/** The Age cell: time since creation as kubectl prints it (5s, 3m20s, 2d4h). */
export const age = (meta: ObjectMeta, now: number): string => humanDuration(now - Date.parse(meta.creationTimestamp));

/** An empty string prints as `<none>`, as kubectl does for absent values. */
export const orNone = (v: string | undefined): string | null => (v ? v : null);

/** `metadata.name` and `metadata.namespace`: selectable on every resource. */
export const objectMetaFields = (meta: ObjectMeta): Record<string, string> => ({
  'metadata.name': meta.name,
  'metadata.namespace': meta.namespace,
});

/** apimachinery's duration.HumanDuration, so ages read the same as for built-in resources. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}
