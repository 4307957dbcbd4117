import type { Config } from '@corral/server';
import { UsageError } from './command.js';

/**
 * The server package is loaded only by the commands that need it, so `--help` and bad
 * arguments answer at once instead of after loading the whole service.
 */
export const loadServer = () => import('@corral/server');

/** The service's own configuration (same variables, same DATA_DIR); a bad variable is bad input. */
export async function loadServiceConfig(): Promise<Config> {
  const { loadConfig, ConfigError } = await loadServer();
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, undefined, 'See docs/configuration.md for every variable.');
    throw err;
  }
}
