import type { AlertConditionType } from '@corral/contracts';
import type { WindowStats } from '../dashboard/index.js';

/**
 * What each condition measures (docs/alerts.md, "Conditions"). Every value is computed from the
 * rollups of whole minutes; a window without calls has nothing failing, denied or slow, so its
 * rates and latency are 0, and a previous window without calls gives no drop to measure.
 */
export const unitOf = (type: AlertConditionType): 'percent' | 'ms' => (type === 'latency_p99' ? 'ms' : 'percent');

/** Whether a condition needs the window before the evaluated one too. */
export const needsPreviousWindow = (type: AlertConditionType): boolean => type === 'volume_drop';

const percent = (part: number, whole: number): number => (whole === 0 ? 0 : (part / whole) * 100);

export function conditionValue(type: AlertConditionType, current: WindowStats, previous: WindowStats | undefined): number {
  switch (type) {
    case 'error_rate':
      return percent(current.error, current.total);
    case 'denied_rate':
      return percent(current.denied, current.total);
    case 'latency_p99':
      return current.p99LatencyMs;
    case 'volume_drop': {
      const before = previous?.total ?? 0;
      return before === 0 ? 0 : Math.max(0, percent(before - current.total, before));
    }
  }
}

/**
 * A rule fires when its value reaches the threshold and resolves when the value falls below
 * it. "Reaches" (≥), so that 100 means "every call failed" or "no calls at all" and can fire.
 */
export const isBreaching = (value: number, threshold: number): boolean => value >= threshold;

const labels: Record<AlertConditionType, string> = {
  error_rate: 'error rate',
  denied_rate: 'denied rate',
  latency_p99: 'p99 latency',
  volume_drop: 'call volume drop',
};

/** `12.5%`, `840 ms`: at most two decimals, none when whole. */
export function formatValue(type: AlertConditionType, value: number): string {
  const rounded = String(Math.round(value * 100) / 100);
  return unitOf(type) === 'ms' ? `${rounded} ms` : `${rounded}%`;
}

/** One line for people: "error rate 12.5% ≥ 5% over the last 15 minutes". */
export function describeCondition(type: AlertConditionType, value: number | null, threshold: number, windowMinutes: number, firing: boolean): string {
  const span = windowMinutes === 1 ? 'the last minute' : `the last ${windowMinutes} minutes`;
  const than = type === 'volume_drop' ? ` against the ${windowMinutes === 1 ? 'minute' : `${windowMinutes} minutes`} before` : '';
  if (value === null) return `${labels[type]} at or above ${formatValue(type, threshold)} over ${span}${than}`;
  return `${labels[type]} ${formatValue(type, value)} ${firing ? '≥' : '<'} ${formatValue(type, threshold)} over ${span}${than}`;
}
