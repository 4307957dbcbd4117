import type { Config } from '@corral/server';
import { UsageError } from './command.js';

/**
 * The server package is loaded only by the commands that need it, so `--help` and bad
 * arguments answer at once instead of after loading the whole service.
 */
export const loadServer = () => import('@corral/server');

/**
 * The service's own configuration (same variables, same DATA_DIR); a bad variable is bad input.
 * `overrides` are command-line flags that stand in for a variable (`--role` for CORRAL_ROLE).
 */
export async function loadServiceConfig(overrides: Readonly<Record<string, string>> = {}): Promise<Config> {
  const { loadConfig, ConfigError } = await loadServer();
  try {
    return loadConfig(undefined, overrides);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, undefined, 'See docs/configuration.md for every variable.');
    throw err;
  }
}
