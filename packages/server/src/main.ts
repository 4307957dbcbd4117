#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js';
import { startService } from './service.js';

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
  const service = await startService(config, { level: config.logLevel });
  const log = (service.api ?? service.ingest)?.log;
  log?.info({ port: config.port, ingestPort: config.ingestPort, role: config.role, store: config.databaseUrl ? 'postgres' : 'sqlite' }, 'corral started');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log?.info({ signal }, 'stopping');
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log?.error({ err }, 'unclean stop');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`corral failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
