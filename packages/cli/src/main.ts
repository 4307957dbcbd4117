#!/usr/bin/env node
import { ApiError } from '@corral/client';
import { CommanderError } from 'commander';
import { connectionError, exitCodeOf, exitCodes } from './api.js';
import { UsageError } from './command.js';
import { reportApiError, reportError } from './output.js';
import { buildProgram } from './program.js';

/** `corral help org set-plan` is `corral org set-plan --help`. */
function normalize(argv: string[]): string[] {
  const at = argv.findIndex((word) => !word.startsWith('-'));
  if (at >= 0 && argv[at] === 'help') return [...argv.slice(0, at), ...argv.slice(at + 1), '--help'];
  return argv;
}

/** Commander's "error: unknown option '--x'" as a sentence: "Unknown option '--x'". */
const sentence = (message: string): string => {
  const text = message.replace(/^error: /, '');
  return text.charAt(0).toUpperCase() + text.slice(1);
};

const argv = process.argv.slice(2);
const json = argv.includes('--json');

function fail(err: unknown): never {
  if (err instanceof CommanderError) {
    if (err.exitCode === 0) process.exit(0);
    reportError(json, 'usage', sentence(err.message), 'Run "corral --help" for usage.');
    process.exit(exitCodes.usage);
  }
  if (err instanceof UsageError) {
    const hint = err.hint ?? (err.command ? `Run "corral ${err.command.name} --help" for usage.` : 'Run "corral --help" for usage.');
    reportError(json, 'usage', err.message, hint);
    process.exit(exitCodes.usage);
  }
  if (err instanceof ApiError) {
    reportApiError(json, err);
    process.exit(exitCodeOf(err));
  }
  reportError(json, 'failed', connectionError(err) ?? (err instanceof Error ? err.message : String(err)));
  process.exit(exitCodes.failed);
}

buildProgram()
  .parseAsync(normalize(argv), { from: 'user' })
  .catch(fail);
