import type { Command } from '../command.js';
import { loadServer, loadServiceConfig } from '../server.js';

export const migrate: Command = {
  name: 'migrate',
  describe: "Bring the store's schema up to date (the server also does this on start)",
  args: [],
  options: {},
  notes: [
    'Safe to run any number of times and from several processes at once: applied migrations are',
    'skipped, and a lock keeps two runs from applying the same one.',
  ],
  async run({ output }) {
    const config = await loadServiceConfig();
    const { migrateStore } = await loadServer();
    const { store, applied } = await migrateStore(config);
    const where = store === 'sqlite' ? `SQLite store in ${config.dataDir}` : 'PostgreSQL store';
    const human =
      applied.length === 0
        ? `The ${where} is up to date.`
        : `Applied ${applied.length} migration${applied.length === 1 ? '' : 's'} to the ${where}: ${applied.join(', ')}`;
    output.result(human, { store, applied });
  },
};
