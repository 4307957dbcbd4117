import type { Command as Commander } from 'commander';
import { globalsOf } from './api.js';

/** Prints a result: the data as one line of JSON under --json, else the human text. */
export function print(command: Commander, data: unknown, human: () => string): void {
  process.stdout.write(globalsOf(command).json ? `${JSON.stringify(data)}\n` : `${human()}\n`);
}
