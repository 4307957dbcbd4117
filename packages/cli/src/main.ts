#!/usr/bin/env node
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { type Command, UsageError } from './command.js';
import { migrate } from './commands/migrate.js';
import { openapi } from './commands/openapi.js';
import { orgSetPlan } from './commands/org-set-plan.js';
import { start } from './commands/start.js';
import { token } from './commands/token.js';
import { commandHelp, createOutput, generalHelp, groupHelp, reportError } from './output.js';

const commands: readonly Command[] = [start, token, orgSetPlan, migrate, openapi];

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

function version(): string {
  // src/ and dist/ both sit one level below the package root.
  const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
  return pkg.version;
}

/** The commands of a group (`org` → `org set-plan`, …); empty when `word` names no group. */
const groupOf = (word: string | undefined): Command[] => (word === undefined ? [] : commands.filter((c) => c.name.startsWith(`${word} `)));
const isHelp = (word: string | undefined): boolean => word === '-h' || word === '--help';

/** Two-word commands (`org set-plan`) are matched before one-word ones. */
function findCommand(words: readonly string[]): Command | undefined {
  const byLength = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  return byLength.find((c) => c.name.split(' ').every((part, i) => words[i] === part));
}

function unknownCommand(words: readonly string[]): UsageError {
  const group = commands.filter((c) => c.name.startsWith(`${words[0]} `));
  if (group.length > 0) {
    const sub = words[1] === undefined ? 'a subcommand is required' : `unknown subcommand "${words[1]}"`;
    return new UsageError(`${words[0]}: ${sub}; one of: ${group.map((c) => c.name).join(', ')}`);
  }
  return new UsageError(words[0] === undefined ? 'a command is required' : `unknown command "${words[0]}"`);
}

function parse(command: Command, argv: string[]) {
  const options = {
    ...Object.fromEntries(Object.entries(command.options).map(([name, s]) => [name, { type: s.type, ...(s.short ? { short: s.short } : {}) }])),
    json: { type: 'boolean' as const },
    help: { type: 'boolean' as const, short: 'h' },
  };
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs reports unknown options, missing values and the like as ERR_PARSE_ARGS_*.
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((err as Error).message, command);
    throw err;
  }
}

async function main(argv: string[]): Promise<number | undefined> {
  const leadingJson = argv[0] === '--json';
  const words = leadingJson ? argv.slice(1) : argv;
  const first = words[0];
  if (isHelp(first) || first === 'help') {
    const topic = words.length > 1 ? findCommand(words.slice(1)) : undefined;
    const group = words.length === 2 ? groupOf(words[1]) : [];
    if (words.length > 1 && !topic && group.length === 0) throw unknownCommand(words.slice(1));
    process.stdout.write(topic ? commandHelp(topic) : group.length > 0 ? groupHelp(words[1] ?? '', group) : generalHelp(commands));
    return 0;
  }
  // `corral org --help`: the group's commands.
  if (groupOf(first).length > 0 && isHelp(words[1])) {
    process.stdout.write(groupHelp(first ?? '', groupOf(first)));
    return 0;
  }
  if (first === '-v' || first === '--version') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const command = findCommand(words);
  if (!command) throw unknownCommand(words);
  const { values, positionals } = parse(command, words.slice(command.name.split(' ').length));
  if (values.help) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  if (positionals.length !== command.args.length) {
    const expected = command.args.length === 0 ? 'no arguments' : command.args.map((a) => `<${a}>`).join(' ');
    throw new UsageError(`${command.name} takes ${expected}, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`, command);
  }
  await command.run({ options: values, args: positionals, output: createOutput(leadingJson || values.json === true) });
  return undefined;
}

const argv = process.argv.slice(2);
const json = argv.includes('--json');
main(argv).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      const hint = err.hint ?? (err.command ? `Run "corral ${err.command.name} --help" for usage.` : 'Run "corral --help" for usage.');
      reportError(json, 'usage', err.message, hint);
      process.exit(EXIT_USAGE);
    }
    reportError(json, 'failed', err instanceof Error ? err.message : String(err));
    process.exit(EXIT_FAILED);
  },
);
