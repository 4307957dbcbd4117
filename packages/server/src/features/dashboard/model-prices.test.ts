import { describe, expect, it } from 'vitest';
import { BUILT_IN_PRICES, BUILT_IN_PRICES_DATE, createPriceBook } from './model-prices.js';

const day = (iso: string) => Date.parse(`${iso}T12:00:00Z`);
const tokens = (input: number, output: number, cached = 0) => ({ input_tokens: input, output_tokens: output, cached_input_tokens: cached });

describe('price book', () => {
  it('prices the built-in models from the table date on, the most specific pattern first', () => {
    const book = createPriceBook();
    expect(book.priceFor('openai', 'gpt-4o-mini-2024-07-18', day('2026-01-01'))?.model).toBe('gpt-4o-mini*');
    expect(book.priceFor('openai', 'gpt-4o-2024-08-06', day('2026-01-01'))?.model).toBe('gpt-4o*');
    expect(book.priceFor('anthropic', 'claude-sonnet-4-20250514', day('2026-01-01'))?.input_per_million).toBe(3);
    expect(book.priceFor('openai', 'gpt-4o', day('2020-01-01'))).toBeUndefined();
    expect(BUILT_IN_PRICES.every((p) => p.effective_date === BUILT_IN_PRICES_DATE)).toBe(true);
  });

  it('answers null for an unknown model or provider, never 0', () => {
    const book = createPriceBook();
    expect(book.cost('acme', 'acme-1', day('2026-01-01'), tokens(10, 10))).toBeNull();
    expect(book.cost('anthropic', 'gpt-4o', day('2026-01-01'), tokens(10, 10))).toBeNull();
  });

  it('charges cached input at its own price and the rest at the input price', () => {
    const book = createPriceBook([{ model: 'm', input_per_million: 2, output_per_million: 8, cached_input_per_million: 0.5, effective_date: '2026-01-01' }]);
    expect(book.cost('any', 'M', day('2026-02-01'), tokens(1_000_000, 500_000, 400_000))).toBeCloseTo(0.6 * 2 + 0.4 * 0.5 + 0.5 * 8, 9);
  });

  it('uses the entry in effect on the day of the call', () => {
    const book = createPriceBook([
      { model: 'm*', input_per_million: 10, output_per_million: 10, effective_date: '2026-01-01' },
      { model: 'm*', input_per_million: 5, output_per_million: 5, effective_date: '2026-03-01' },
    ]);
    expect(book.cost('p', 'm1', day('2025-12-31'), tokens(1_000_000, 0))).toBeNull();
    expect(book.cost('p', 'm1', day('2026-02-15'), tokens(1_000_000, 0))).toBe(10);
    expect(book.cost('p', 'm1', day('2026-03-01'), tokens(1_000_000, 0))).toBe(5);
  });
});
