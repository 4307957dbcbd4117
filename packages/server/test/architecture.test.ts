import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/*
 * The lint run (part of `npm test`) guards the server's shape. An import rule that cannot resolve
 * TypeScript files reports nothing at all, so these cases show each guard still bites: they lint
 * changed contents of real files and expect the rule to fire.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const src = 'packages/server/src';

describe('the lint rules that keep the shape', { timeout: 120_000 }, () => {
  let eslint: ESLint;
  beforeAll(() => {
    // With CI set, typescript-eslint infers a single run and parses each file once from disk,
    // which would ignore the changed contents linted here: keep it re-reading what it is given.
    eslint = new ESLint({
      cwd: repoRoot,
      overrideConfig: { languageOptions: { parserOptions: { disallowAutomaticSingleRunInference: true } } },
    });
  });

  async function rulesFired(file: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
    return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
  }

  it('finds an import cycle', async () => {
    // cursor.ts imports ids.ts; ids.ts importing cursor.ts back closes a cycle.
    const fired = await rulesFired(`${src}/lib/ids.ts`, "import { toPage } from './cursor.js';\nexport const pages = toPage;\n");
    expect(fired).toContain('import-x/no-cycle');
  });

  it("refuses a reach into another feature's internals, and allows its index.ts", async () => {
    const file = `${src}/features/agents/slug.ts`;
    expect(await rulesFired(file, "import type { IngestService } from '../telemetry/ingest-service.js';\nexport type X = IngestService;\n"))
      .toContain('import-x/no-restricted-paths');
    expect(await rulesFired(file, "import type { IngestService } from '../telemetry/index.js';\nexport type X = IngestService;\n"))
      .not.toContain('import-x/no-restricted-paths');
  });

  it('refuses an import of the composition root from below it', async () => {
    const fired = await rulesFired(`${src}/lib/clock.ts`, "import type { Container } from '../container.js';\nexport type X = Container;\n");
    expect(fired).toContain('import-x/no-restricted-paths');
  });

  it('keeps HTTP out of services: neither http/ nor Fastify', async () => {
    const file = `${src}/features/agents/agent-service.ts`;
    expect(await rulesFired(file, "import type { AuthRule } from '../../http/auth.js';\nexport type X = AuthRule;\n"))
      .toContain('import-x/no-restricted-paths');
    expect(await rulesFired(file, "import type { FastifyRequest } from 'fastify';\nexport type X = FastifyRequest;\n"))
      .toContain('no-restricted-imports');
  });

  it('runs the type-aware rules', async () => {
    const fired = await rulesFired(`${src}/lib/clock.ts`, 'export async function f(p: Promise<void>): Promise<void> {\n  p;\n}\n');
    expect(fired).toContain('@typescript-eslint/no-floating-promises');
  });
});
