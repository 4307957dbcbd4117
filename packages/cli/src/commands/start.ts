import { type Command, oneOf } from '../command.js';
import { loadServer, loadServiceConfig } from '../server.js';

const roles = ['all', 'api', 'ingest', 'worker'] as const;

export const start: Command = {
  name: 'start',
  describe: 'Run the service: the API and ingest hosts and the workers (same as npm start)',
  args: [],
  options: {
    role: { type: 'string', placeholder: 'role', describe: 'The part this process runs: all (default), api, ingest or worker; overrides CORRAL_ROLE' },
  },
  notes: [
    'Migrates the store, then serves until SIGTERM or SIGINT, when it stops accepting requests,',
    'finishes the ones in flight and exits 0. Logs are JSON lines on stdout. --role (or',
    'CORRAL_ROLE) picks the part this process runs; see docs/deployment.md for the split shapes.',
  ],
  async run({ options }) {
    const role = typeof options.role === 'string' ? oneOf(options.role, roles, '--role', start) : undefined;
    const config = await loadServiceConfig(role === undefined ? {} : { CORRAL_ROLE: role });
    const { runService } = await loadServer();
    await runService(config);
  },
};
