#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js';
import { runService } from './run-service.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  await runService(config);
}

main().catch((err: unknown) => {
  process.stderr.write(`corral failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
