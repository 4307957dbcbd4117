import { Command as Commander, type Help } from 'commander';
import { createRequire } from 'node:module';
import { type Command, UsageError } from './command.js';
import { migrate } from './commands/migrate.js';
import { openapi } from './commands/openapi.js';
import { orgSetPlan } from './commands/org-set-plan.js';
import { start } from './commands/start.js';
import { token } from './commands/token.js';
import { registerAgents } from './commands/agents.js';
import { registerAlerts } from './commands/alerts.js';
import { registerAudit } from './commands/audit.js';
import { registerCompletion } from './commands/completion.js';
import { registerEvents } from './commands/events.js';
import { registerKeys } from './commands/keys.js';
import { registerLogin } from './commands/login.js';
import { registerPolicies } from './commands/policies.js';
import { registerStats } from './commands/stats.js';
import { createOutput, synopsis } from './output.js';

function version(): string {
  // src/ and dist/ both sit one level below the package root.
  const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
  return pkg.version;
}

/** `org set-plan`: the words after `corral`. */
export function pathOf(command: Commander): string {
  const words: string[] = [];
  for (let c: Commander | null = command; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** Every runnable command under `command`, depth first, in the order they were added. */
export function leavesOf(command: Commander): Commander[] {
  return command.commands.flatMap((c) => (c.commands.length === 0 ? [c] : leavesOf(c))).filter((c) => !c.name().startsWith('__'));
}

/** Operator commands check their own arguments (all required), so commander declares them optional. */
const operatorArguments = new WeakMap<Commander, readonly string[]>();

const argumentsOf = (command: Commander): string =>
  (operatorArguments.get(command)?.map((a) => `<${a}>`) ?? command.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}${a.variadic ? '...' : ''}]`))).join(' ');

/** The operator commands keep their module shape (`{ name, describe, args, options, run }`). */
function addOperatorCommand(parent: Commander, command: Command): void {
  const words = command.name.split(' ');
  const cmd = parent
    .command(words[words.length - 1] ?? command.name)
    .description(command.describe)
    .usage(synopsis(command).replace(`corral ${command.name} `, ''))
    .allowExcessArguments(true);
  operatorArguments.set(cmd, command.args);
  for (const [name, spec] of Object.entries(command.options)) {
    cmd.option(`${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` <${spec.placeholder ?? 'value'}>` : ''}`, spec.describe);
  }
  if (command.notes) cmd.addHelpText('after', `\n${command.notes.join('\n')}`);
  cmd.action(async (...params: unknown[]) => {
    const self = params[params.length - 1] as Commander;
    const args = self.args;
    if (args.length !== command.args.length) {
      const expected = command.args.length === 0 ? 'no arguments' : command.args.map((a) => `<${a}>`).join(' ');
      throw new UsageError(`${command.name} takes ${expected}, got ${args.length === 0 ? 'none' : args.join(' ')}`, command);
    }
    const json = self.optsWithGlobals<{ json?: boolean }>().json === true;
    await command.run({ options: self.opts(), args, output: createOutput(json) });
  });
}

/** A command that only groups others (`keys`, `org`): called alone or with an unknown word, it says so. */
export function group(parent: Commander, name: string, description: string): Commander {
  const cmd = parent.command(name).description(description).usage('<command> [arguments] [options]').argument('[command]');
  cmd.action((word: string | undefined) => {
    const names = cmd.commands.map((c) => `${name} ${c.name()}`).join(', ');
    const problem = word === undefined ? 'a subcommand is required' : `unknown subcommand "${word}"`;
    throw new UsageError(`${name}: ${problem}; one of: ${names}`, undefined, `Run "corral ${name} --help" for usage.`);
  });
  return cmd;
}

/** `writeOut` takes help and version text instead of stdout (tests read the help of every command in process). */
export function buildProgram(io: { writeOut?: (text: string) => void } = {}): Commander {
  const program = new Commander('corral');
  program
    .description('corral: control plane and telemetry service for AI agents')
    .usage('<command> [arguments] [options]')
    .version(version(), '-v, --version', 'Print the version')
    .helpOption('-h, --help', 'Show help; "corral <command> --help" for one command')
    .helpCommand(false)
    .option('--json', 'Print results (and errors) as JSON')
    .option('--url <url>', 'API address (else CORRAL_URL, the profile, or http://127.0.0.1:8080)')
    .option('--token <jwt>', 'Token to send (else CORRAL_TOKEN or the profile)')
    .option('--profile <name>', 'Saved profile to use (else CORRAL_PROFILE or the last login)')
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, ...(io.writeOut ? { writeOut: io.writeOut } : {}) })
    .configureHelp({
      sortSubcommands: false,
      subcommandTerm: (cmd) => [pathOf(cmd), argumentsOf(cmd)].filter(Boolean).join(' '),
      // The top level lists every command by its full name: one screen is the whole reference.
      visibleCommands: (cmd) => (cmd.parent ? cmd.commands.filter((c) => !c.name().startsWith('__')) : leavesOf(cmd)),
    } satisfies Partial<Help>)
    .addHelpText(
      'after',
      [
        '',
        'Operator commands (start, migrate, org set-plan, token, openapi) read the server\'s own',
        'configuration from the environment (PORT, DATA_DIR, DATABASE_URL, CORRAL_JWT_SECRET, ...;',
        'see docs/configuration.md). Every other command talks to the HTTP API.',
        'Exit codes: 0 done, 1 failed, 2 bad input or configuration, 3 unauthorized or forbidden,',
        '4 not found, 5 conflict, 6 rate limited.',
      ].join('\n'),
    )
    .argument('[command]')
    .action((word: string | undefined) => {
      throw new UsageError(word === undefined ? 'a command is required' : `unknown command "${word}"`);
    });

  addOperatorCommand(program, start);
  addOperatorCommand(program, migrate);
  addOperatorCommand(program, token);
  addOperatorCommand(program, openapi);
  addOperatorCommand(group(program, 'org', 'Operator commands on organizations'), orgSetPlan);
  registerLogin(program);
  registerKeys(group(program, 'keys', 'API keys: create (shown once), list, revoke, delete'));
  registerAgents(group(program, 'agents', 'Agents and their kill switch'));
  registerPolicies(group(program, 'policies', "An agent's policy versions"));
  registerAlerts(group(program, 'alerts', 'Alert rules, their history and notifications'));
  registerEvents(group(program, 'events', 'Telemetry events: list with filters, or tail live'));
  registerStats(program);
  registerAudit(group(program, 'audit', "The organization's audit log"));
  registerCompletion(program);
  return program;
}
