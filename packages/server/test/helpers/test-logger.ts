import type { Logger } from '../../src/lib/logger.js';

export interface LogEntry {
  readonly level: 'info' | 'warn' | 'error';
  readonly msg: string | undefined;
  readonly obj: object;
}

/** A Logger that keeps what it is told, so tests can show that a failure was logged, not dropped. */
export interface TestLogger extends Logger {
  readonly entries: LogEntry[];
}

export function createTestLogger(): TestLogger {
  const entries: LogEntry[] = [];
  const at = (level: LogEntry['level']) => (obj: object, msg?: string) => void entries.push({ level, msg, obj });
  return { entries, info: at('info'), warn: at('warn'), error: at('error') };
}
