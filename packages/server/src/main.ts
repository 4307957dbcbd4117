#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js';
import { runService } from './service.js';

/** Exit codes: 0 stopped cleanly, 1 failed, 2 bad configuration (every bad variable is named). */
async function main(): Promise<void> {
  await runService(loadConfig());
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`corral failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
