import { createDense, accumulateSerialized, denseQuantiles } from '../../lib/log-histogram.js';
import type { DashboardStore } from './dashboard-store.js';
import { splitWindow, type Window } from './dashboard-window.js';

/** One agent's calls in one window, summed from the rollups. */
export interface WindowStats {
  readonly total: number;
  readonly allowed: number;
  readonly denied: number;
  readonly error: number;
  /** Nearest-rank 99th percentile of the calls that have a latency, in ms; 0 when none do. */
  readonly p99LatencyMs: number;
}

/**
 * The narrow read other features use to ask "how did this agent do over these windows" (the
 * alert evaluator): the same rollup split and histogram merge the dashboard's aggregates use,
 * one query for all the windows.
 */
export function createAgentWindowStats({ dashboardStore }: { dashboardStore: Pick<DashboardStore, 'agentRollups'> }) {
  return {
    /** Windows must be whole minutes ([from, to) on minute boundaries) and must not overlap. */
    async windows(orgId: string, agentId: string, windows: readonly Window[]): Promise<WindowStats[]> {
      const split = windows.map((w) => splitWindow(w));
      const rows = await dashboardStore.agentRollups(orgId, split.flat(), { agentId });
      const sums = windows.map(() => ({ total: 0, allowed: 0, denied: 0, error: 0, hist: createDense() }));
      for (const r of rows) {
        const start = Number(r.bucket_start);
        // Each range lies inside one window, so a row's bucket start tells its window.
        const i = windows.findIndex((w) => start >= w.from && start < w.to);
        const into = sums[i];
        if (!into) continue;
        into.total += Number(r.total_calls);
        into.allowed += Number(r.allowed_calls);
        into.denied += Number(r.denied_calls);
        into.error += Number(r.error_calls);
        accumulateSerialized(into.hist, r.latency_hist);
      }
      return sums.map(({ hist, ...counts }) => ({ ...counts, p99LatencyMs: denseQuantiles(hist, [0.99])[0] ?? 0 }));
    },
  };
}
export type AgentWindowStats = ReturnType<typeof createAgentWindowStats>;
