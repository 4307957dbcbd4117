import type { ApiError } from '@corral/client';
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
export function synopsis(command: Command): string {
  const args = command.args.map((a) => `<${a}>`);
  const options = Object.entries(command.options).map(([name, spec]) => (spec.required ? flag(name, spec) : `[${flag(name, spec)}]`));
  return ['corral', command.name, ...args, ...options, '[--json]'].join(' ');
}

/** An API error as the API sent it: under --json its own body, else its message and code. */
export function reportApiError(json: boolean, err: ApiError): void {
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) }, status: err.status })}\n`);
    return;
  }
  const details = Array.isArray(err.details)
    ? (err.details as Array<{ field?: string; message?: string }>).map((d) => `\n  ${d.field ?? ''}: ${d.message ?? ''}`).join('')
    : '';
  process.stderr.write(`corral: ${err.message} (${err.status} ${err.code})${details}\n`);
}
