import type { Command } from '../command.js';
import { loadServer, loadServiceConfig } from '../server.js';

export const start: Command = {
  name: 'start',
  describe: 'Run the service: the API and ingest hosts and the workers (same as npm start)',
  args: [],
  options: {},
  notes: [
    'Migrates the store, then serves until SIGTERM or SIGINT, when it stops accepting requests,',
    'finishes the ones in flight and exits 0. Logs are JSON lines on stdout. CORRAL_ROLE picks',
    'the part this process runs (all, api, ingest, worker).',
  ],
  async run() {
    const config = await loadServiceConfig();
    const { runService } = await loadServer();
    await runService(config);
  },
};
