/** What every command module exports, and the error that means "the caller asked wrongly". */

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Shown in help as `--name <placeholder>`. */
  readonly placeholder?: string;
  /** Shown without brackets in the synopsis; the command itself checks presence. */
  readonly required?: boolean;
  readonly describe: string;
}

export interface Output {
  /** Prints a command's result: the human text, or the data as one line of JSON under --json. */
  result(human: string, data: unknown): void;
}

export interface CommandInput {
  readonly options: Readonly<Record<string, string | boolean | undefined>>;
  readonly args: readonly string[];
  readonly output: Output;
}

export interface Command {
  /** One or two words: `token`, `org set-plan`. */
  readonly name: string;
  readonly describe: string;
  /** Positional arguments, all required, in order. */
  readonly args: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Lines of explanation for `--help`. */
  readonly notes?: readonly string[];
  run(input: CommandInput): Promise<void>;
}

/** Bad input: reported on stderr with exit code 2, so scripts can tell it from a failed run (1). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: Command,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Organization ids are compared lowercase everywhere, so they are normalized at the edge. */
export function parseOrgId(value: string | undefined, what: string, command: Command): string {
  if (value === undefined) throw new UsageError(`${what} is required`, command);
  if (!uuidPattern.test(value)) throw new UsageError(`${what} must be a UUID, got "${value}"`, command);
  return value.toLowerCase();
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], what: string, command: Command): T {
  if (value === undefined) throw new UsageError(`${what} is required (one of ${allowed.join(', ')})`, command);
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${what} must be one of ${allowed.join(', ')}, got "${value}"`, command);
  }
  return value as T;
}
