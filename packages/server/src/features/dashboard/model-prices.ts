import type { ModelPrice, PriceTable } from '@corral/contracts';

/*
 * Token prices, USD per million tokens. The built-in table lists the major models' public list
 * prices as of its date; CORRAL_PRICES_FILE replaces it whole (docs/otlp.md, "Prices"). A model
 * matches the entry whose pattern is most specific (most characters besides `*`), and of that
 * pattern's entries the latest whose effective date is not after the call's day. No match: the
 * call has no price, and its cost is unknown (null), never 0.
 */

export const BUILT_IN_PRICES_DATE = '2025-08-15';
const since = BUILT_IN_PRICES_DATE;
const p = (model: string, provider: string, input: number, output: number, cached?: number): ModelPrice => ({
  model, provider, input_per_million: input, output_per_million: output,
  ...(cached === undefined ? {} : { cached_input_per_million: cached }), effective_date: since,
});

export const BUILT_IN_PRICES: PriceTable = [
  p('gpt-5*', 'openai', 1.25, 10, 0.125),
  p('gpt-5-mini*', 'openai', 0.25, 2, 0.025),
  p('gpt-5-nano*', 'openai', 0.05, 0.4, 0.005),
  p('gpt-4.1*', 'openai', 2, 8, 0.5),
  p('gpt-4.1-mini*', 'openai', 0.4, 1.6, 0.1),
  p('gpt-4.1-nano*', 'openai', 0.1, 0.4, 0.025),
  p('gpt-4o*', 'openai', 2.5, 10, 1.25),
  p('gpt-4o-mini*', 'openai', 0.15, 0.6, 0.075),
  p('o1*', 'openai', 15, 60, 7.5),
  p('o3*', 'openai', 2, 8, 0.5),
  p('o3-mini*', 'openai', 1.1, 4.4, 0.55),
  p('o4-mini*', 'openai', 1.1, 4.4, 0.275),
  p('claude-opus-4*', 'anthropic', 15, 75, 1.5),
  p('claude-sonnet-4*', 'anthropic', 3, 15, 0.3),
  p('claude-3-7-sonnet*', 'anthropic', 3, 15, 0.3),
  p('claude-3-5-sonnet*', 'anthropic', 3, 15, 0.3),
  p('claude-3-5-haiku*', 'anthropic', 0.8, 4, 0.08),
  p('claude-3-haiku*', 'anthropic', 0.25, 1.25, 0.03),
  p('gemini-2.5-pro*', 'gcp.gemini', 1.25, 10, 0.31),
  p('gemini-2.5-flash*', 'gcp.gemini', 0.3, 2.5, 0.075),
  p('gemini-2.0-flash*', 'gcp.gemini', 0.1, 0.4, 0.025),
  p('mistral-large*', 'mistral_ai', 2, 6),
  p('mistral-small*', 'mistral_ai', 0.1, 0.3),
];

interface CompiledPrice {
  entry: ModelPrice;
  pattern: RegExp;
  specificity: number;
  from: number;
}

export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
}

export interface PriceBook {
  /** The entry for a provider's model on the day of `at` (epoch ms), if any. */
  priceFor(provider: string, model: string, at: number): ModelPrice | undefined;
  /** USD for the tokens at that price, or null when the model has no price then. */
  cost(provider: string, model: string, at: number, tokens: TokenCounts): number | null;
}

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

export function createPriceBook(table: PriceTable = BUILT_IN_PRICES): PriceBook {
  const compiled: CompiledPrice[] = table.map((entry) => ({
    entry,
    pattern: new RegExp(`^${entry.model.split('*').map(escape).join('.*')}$`, 'i'),
    specificity: entry.model.replaceAll('*', '').length,
    from: Date.parse(`${entry.effective_date}T00:00:00Z`),
  }));
  const cache = new Map<string, CompiledPrice[]>();

  function candidates(provider: string, model: string): CompiledPrice[] {
    const key = `${provider}\u0001${model}`;
    let found = cache.get(key);
    if (!found) {
      const lower = provider.toLowerCase();
      found = compiled
        .filter((c) => (c.entry.provider === undefined || c.entry.provider.toLowerCase() === lower) && c.pattern.test(model))
        .sort((a, b) => b.specificity - a.specificity || b.from - a.from);
      cache.set(key, found);
    }
    return found;
  }

  function priceFor(provider: string, model: string, at: number): ModelPrice | undefined {
    const list = candidates(provider, model);
    const top = list[0]?.specificity;
    return list.find((c) => c.specificity === top && c.from <= at)?.entry;
  }

  return {
    priceFor,
    cost(provider, model, at, t) {
      const price = priceFor(provider, model, at);
      if (!price) return null;
      const cached = Math.min(t.cached_input_tokens, t.input_tokens);
      return ((t.input_tokens - cached) * price.input_per_million
        + cached * (price.cached_input_per_million ?? price.input_per_million)
        + t.output_tokens * price.output_per_million) / 1_000_000;
    },
  };
}
