import type { Command, OptionSpec, Output } from './command.js';

export function createOutput(json: boolean): Output {
  return {
    result(human, data) {
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human}\n`);
    },
  };
}

/** Errors go to stderr; under --json as `{"error": {"code", "message"}}`, the API's own shape. */
export function reportError(json: boolean, code: 'usage' | 'failed', message: string, hint?: string): void {
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
    return;
  }
  process.stderr.write(`corral: ${message}\n${hint ? `${hint}\n` : ''}`);
}

const flag = (name: string, spec: OptionSpec): string => `--${name}${spec.type === 'string' ? ` <${spec.placeholder ?? 'value'}>` : ''}`;
const optionLabel = (name: string, spec: OptionSpec): string => `${spec.short ? `-${spec.short}, ` : ''}${flag(name, spec)}`;

export function synopsis(command: Command): string {
  const args = command.args.map((a) => `<${a}>`);
  const options = Object.entries(command.options).map(([name, spec]) => (spec.required ? flag(name, spec) : `[${flag(name, spec)}]`));
  return ['corral', command.name, ...args, ...options, '[--json]'].join(' ');
}

function table(rows: Array<[string, string]>): string {
  const width = Math.max(...rows.map(([left]) => left.length)) + 3;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join('\n');
}

export function commandHelp(command: Command): string {
  const options: Array<[string, string]> = [
    ...Object.entries(command.options).map(([name, spec]): [string, string] => [optionLabel(name, spec), spec.describe]),
    ['--json', 'Print the result as JSON'],
    ['-h, --help', 'Show this help'],
  ];
  return [`Usage: ${synopsis(command)}`, '', command.describe, ...(command.notes ? ['', ...command.notes] : []), '', 'Options:', table(options), ''].join('\n');
}

export function generalHelp(commands: readonly Command[]): string {
  return [
    'corral: control plane and telemetry service for AI agents',
    '',
    'Usage: corral <command> [arguments] [options]',
    '',
    'Commands:',
    table(commands.map((c): [string, string] => [c.name, c.describe])),
    '',
    'Options:',
    table([
      ['--json', 'Print results (and errors) as JSON'],
      ['-h, --help', 'Show help; "corral <command> --help" for one command'],
      ['-v, --version', 'Print the version'],
    ]),
    '',
    'Configuration comes from the environment, exactly as for the server (PORT, DATA_DIR,',
    'DATABASE_URL, CORRAL_JWT_SECRET, ...; see docs/configuration.md).',
    'Exit codes: 0 done, 1 failed, 2 bad input or configuration.',
    '',
  ].join('\n');
}

/** `corral org --help`: the commands of one group. */
export function groupHelp(group: string, commands: readonly Command[]): string {
  return [
    `Usage: corral ${group} <command> [arguments] [options]`,
    '',
    'Commands:',
    table(commands.map((c): [string, string] => [c.name, c.describe])),
    '',
    `Run "corral ${group} <command> --help" for one command.`,
    '',
  ].join('\n');
}
