import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../command.js';
import { loadServer, loadServiceConfig } from '../server.js';

export const openapi: Command = {
  name: 'openapi',
  describe: "Print the main host's OpenAPI 3.1 document, or write it to a file",
  args: [],
  options: {
    out: { type: 'string', placeholder: 'file', describe: 'Write the document here instead of printing it' },
  },
  notes: ['The document is generated from the route schemas of an app that is built in memory and never listens.'],
  async run({ options, output }) {
    const config = await loadServiceConfig();
    const { generateOpenApiDocument } = await loadServer();
    const document = await generateOpenApiDocument(config);
    const text = `${JSON.stringify(document, null, 2)}\n`;
    const out = options.out as string | undefined;
    if (out === undefined) {
      process.stdout.write(text);
      return;
    }
    writeFileSync(out, text);
    const paths = Object.keys((document.paths as Record<string, unknown> | undefined) ?? {}).length;
    output.result(`Wrote ${path.relative(process.cwd(), path.resolve(out)) || out} (${paths} paths).`, { file: path.resolve(out), paths });
  },
};
