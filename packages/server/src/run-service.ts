import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { startService, type RunningService } from './service.js';

function urlOf(app: FastifyInstance | undefined): string | undefined {
  const address = app?.addresses()[0];
  if (address === undefined || typeof address === 'string') return address;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * Runs the service until SIGTERM or SIGINT, then stops it cleanly and exits 0 (1 when the stop
 * fails). The one start-up path behind both `npm start` and `corral start`.
 */
export async function runService(config: Config): Promise<RunningService> {
  const service = await startService(config, { level: config.logLevel });
  const log = (service.api ?? service.ingest)?.log;
  // The bound addresses, not the configured ports: with PORT=0 the system picks them.
  log?.info(
    { role: config.role, store: config.databaseUrl ? 'postgres' : 'sqlite', api: urlOf(service.api), ingest: urlOf(service.ingest) },
    'corral started',
  );

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
  return service;
}
