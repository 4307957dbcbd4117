import { roles } from '@corral/contracts';
import { createCorralClient, unwrap } from '@corral/client';
import type { Command as Commander } from 'commander';
import { createInterface } from 'node:readline/promises';
import { DEFAULT_URL, globalsOf, resolveConnection } from '../api.js';
import { UsageError } from '../command.js';
import { cliEnvironment } from '../environment.js';
import { fields, shortTime } from '../format.js';
import { print } from '../print.js';
import { configFile, readProfiles, writeProfiles } from '../profiles.js';
import { defaultSubject, mintJwt, parseTtl } from './token.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A pasted token: from the terminal with a prompt, or the first line of piped stdin. */
async function readToken(): Promise<string> {
  if (process.stdin.isTTY) {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    process.stderr.write('Mint a token where the server runs with: corral token --org <uuid> --role admin\n');
    const answer = await rl.question('Paste a token: ');
    rl.close();
    return answer.trim();
  }
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.split('\n')[0]?.trim() ?? '';
}

interface LoginOptions {
  mint?: boolean;
  org?: string;
  role?: string;
  ttl: string;
}

async function login(options: LoginOptions, command: Commander): Promise<void> {
  const globals = globalsOf(command);
  const url = globals.url ?? cliEnvironment().url ?? DEFAULT_URL;
  if (!/^https?:\/\//.test(url)) throw new UsageError(`--url must start with http:// or https://, got "${url}"`);
  let token = globals.token;
  if (options.mint) {
    if (!options.org || !uuidPattern.test(options.org)) throw new UsageError('--mint needs --org <uuid>');
    const role = roles.find((r) => r === (options.role ?? 'admin'));
    if (!role) throw new UsageError(`--role must be one of ${roles.join(', ')}`);
    const ttlSeconds = parseTtl(options.ttl);
    if (ttlSeconds === undefined) throw new UsageError(`--ttl must be a duration from 1s to 365d, got "${options.ttl}"`);
    token = await mintJwt({ orgId: options.org.toLowerCase(), role, subject: defaultSubject() }, ttlSeconds);
  }
  token ??= await readToken();
  if (!token) throw new UsageError('no token given', undefined, 'Paste one, pass --token, or --mint --org <uuid> where the server runs.');
  // The token is checked by the server before it is saved: a typo fails now, not at the next command.
  const session = unwrap(await createCorralClient({ baseUrl: url, token }).GET('/v1/auth/session'));
  const profile = globals.profile ?? cliEnvironment().profile ?? 'default';
  const stored = readProfiles();
  writeProfiles({ current: profile, profiles: { ...stored.profiles, [profile]: { url, token } } });
  print(command, { profile, url, org_id: session.org_id, role: session.role, subject: session.subject, expires_at: session.expires_at, config_file: configFile() }, () =>
    `Logged in to ${url} as ${session.subject} (${session.role} of ${session.org_id}); profile "${profile}" saved in ${configFile()}.`,
  );
}

export function registerLogin(program: Commander): void {
  program
    .command('login')
    .description('Save the API address and a token in a profile (checked against the server first)')
    .option('--mint', 'Mint the token here, with the server\'s secret (run where the server\'s configuration is)')
    .option('--org <uuid>', 'With --mint: the organization')
    .option('--role <role>', `With --mint: one of ${roles.join(', ')}`, 'admin')
    .option('--ttl <duration>', 'With --mint: lifetime such as 12h or 30d', '30d')
    .addHelpText(
      'after',
      [
        '',
        'Without --token or --mint the token is read from the terminal (or the first line of stdin).',
        `Profiles are kept in ${'$XDG_CONFIG_HOME/corral/config.json'} (mode 0600); --profile names one,`,
        'and the last one logged in to is used by default. CORRAL_URL and CORRAL_TOKEN override it.',
      ].join('\n'),
    )
    .action((options: LoginOptions, command: Commander) => login(options, command));

  program
    .command('logout')
    .description('Forget the token of a profile')
    .action((_options: unknown, command: Commander) => {
      const globals = globalsOf(command);
      const stored = readProfiles();
      const profile = globals.profile ?? cliEnvironment().profile ?? stored.current;
      const { [profile]: removed, ...rest } = stored.profiles;
      writeProfiles({ current: stored.current, profiles: rest });
      print(command, { profile, removed: removed !== undefined }, () => (removed ? `Profile "${profile}" removed.` : `No profile "${profile}".`));
    });

  program
    .command('whoami')
    .description('Who the token is for, as the server sees it')
    .action(async (_options: unknown, command: Commander) => {
      const connection = resolveConnection(globalsOf(command));
      const session = unwrap(await createCorralClient({ baseUrl: connection.url, token: connection.token }).GET('/v1/auth/session'));
      const data = { url: connection.url, profile: connection.profile, subject: session.subject, org_id: session.org_id, role: session.role, expires_at: session.expires_at };
      print(command, data, () =>
        fields([
          ['subject', session.subject],
          ['organization', session.org_id],
          ['role', session.role],
          ['expires', shortTime(session.expires_at)],
          ['url', connection.url],
          ['profile', connection.profile],
        ]),
      );
    });
}
