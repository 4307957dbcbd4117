import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { cliEnvironment } from './environment.js';

/** A saved connection: where the API is and the token to send. */
export interface Profile {
  url: string;
  token: string;
}

export interface ProfileFile {
  /** The profile used when neither --profile nor CORRAL_PROFILE names one. */
  current: string;
  profiles: Record<string, Profile>;
}

/** $XDG_CONFIG_HOME/corral/config.json (~/.config/corral when unset), as the XDG base directory spec says. */
export function configFile(configHome = cliEnvironment().configHome): string {
  const base = configHome && path.isAbsolute(configHome) ? configHome : path.join(homedir(), '.config');
  return path.join(base, 'corral', 'config.json');
}

export function readProfiles(file = configFile()): ProfileFile {
  if (!existsSync(file)) return { current: 'default', profiles: {} };
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ProfileFile>;
  return { current: parsed.current ?? 'default', profiles: parsed.profiles ?? {} };
}

/**
 * Tokens are secrets: the file is written owner-only (0600, its folder 0700) through a
 * temporary file and a rename, so a crash never leaves half a file and no reader ever sees
 * the token with wider permissions.
 */
export function writeProfiles(data: ProfileFile, file = configFile()): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}
