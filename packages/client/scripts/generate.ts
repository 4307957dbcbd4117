// Regenerates src/schema.ts from docs/openapi.json (the document the server serves), or with
// --check exits 1 when the checked-in file differs from what the document generates.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
const documentFile = path.resolve(here, '../../../docs/openapi.json');
export const schemaFile = path.resolve(here, '../src/schema.ts');

export async function generate(): Promise<string> {
  const document = JSON.parse(readFileSync(documentFile, 'utf8')) as Record<string, unknown>;
  const ast = await openapiTS(document as unknown as Parameters<typeof openapiTS>[0], { alphabetize: false, exportType: false, defaultNonNullable: false });
  const header = '// Generated from docs/openapi.json by `npm run -s generate -w @corral/client`. Do not edit.\n\n';
  return header + astToString(ast);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = await generate();
  if (process.argv.includes('--check')) {
    const current = readFileSync(schemaFile, 'utf8');
    if (current !== text) {
      process.stderr.write('packages/client/src/schema.ts is stale: run `npm run -s generate -w @corral/client`\n');
      process.exit(1);
    }
  } else {
    writeFileSync(schemaFile, text);
  }
}
