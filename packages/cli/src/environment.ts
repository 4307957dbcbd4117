/**
 * The one reader of the environment for the API commands (the operator commands read the
 * server's configuration through @corral/server's loadConfig). Read on each call, so a test or
 * a wrapper script may set variables before running a command.
 */
export interface CliEnvironment {
  /** CORRAL_URL: the API address, over the profile's. */
  url: string | undefined;
  /** CORRAL_TOKEN: the token, over the profile's. */
  token: string | undefined;
  /** CORRAL_PROFILE: the profile, over the last one logged in to. */
  profile: string | undefined;
  /** XDG_CONFIG_HOME: where the profile file lives (~/.config when unset). */
  configHome: string | undefined;
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

export function cliEnvironment(): CliEnvironment {
  return {
    url: nonEmpty(process.env.CORRAL_URL),
    token: nonEmpty(process.env.CORRAL_TOKEN),
    profile: nonEmpty(process.env.CORRAL_PROFILE),
    configHome: nonEmpty(process.env.XDG_CONFIG_HOME),
  };
}
