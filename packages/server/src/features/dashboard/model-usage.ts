import type { ModelUsageItem } from '@corral/contracts';
import type { ModelRollupRow } from './dashboard-store.js';
import type { PriceBook } from './model-prices.js';

/** Token and cost totals of a set of model rollup rows, as the stats endpoints report them. */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
  cost_usd: number | null;
  unpriced_calls: number;
}

export const emptyUsage = (): UsageTotals => ({
  input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, reasoning_tokens: 0, cost_usd: null, unpriced_calls: 0,
});

const money = (n: number) => Math.round(n * 1e6) / 1e6;

/** Adds one row; its cost (priced on its bucket's day) joins cost_usd, or its calls count as unpriced. */
export function addUsage(into: UsageTotals, row: ModelRollupRow, prices: PriceBook): void {
  const tokens = {
    input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens), cached_input_tokens: Number(row.cached_input_tokens),
  };
  into.input_tokens += tokens.input_tokens;
  into.output_tokens += tokens.output_tokens;
  into.cached_input_tokens += tokens.cached_input_tokens;
  into.reasoning_tokens += Number(row.reasoning_tokens);
  const cost = prices.cost(row.provider, row.model, Number(row.bucket_start), tokens);
  if (cost === null) into.unpriced_calls += Number(row.calls);
  else into.cost_usd = money((into.cost_usd ?? 0) + cost);
}

/** Per provider and model, most calls first; a model with any unpriced call has cost_usd null. */
export function usageByModel(rows: readonly ModelRollupRow[], prices: PriceBook): ModelUsageItem[] {
  const byModel = new Map<string, ModelUsageItem & { unpriced: number }>();
  for (const r of rows) {
    const key = `${r.provider}\u0001${r.model}`;
    let item = byModel.get(key);
    if (!item) {
      item = { provider: r.provider, model: r.model, calls: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, reasoning_tokens: 0, cost_usd: null, unpriced: 0 };
      byModel.set(key, item);
    }
    const usage = { ...emptyUsage(), cost_usd: item.cost_usd };
    addUsage(usage, r, prices);
    item.calls += Number(r.calls);
    item.input_tokens += usage.input_tokens;
    item.output_tokens += usage.output_tokens;
    item.cached_input_tokens += usage.cached_input_tokens;
    item.reasoning_tokens += usage.reasoning_tokens;
    item.cost_usd = usage.cost_usd;
    item.unpriced += usage.unpriced_calls;
  }
  return [...byModel.values()]
    .map(({ unpriced, ...item }) => ({ ...item, cost_usd: unpriced > 0 ? null : item.cost_usd }))
    .sort((a, b) => b.calls - a.calls || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
}
