/**
 * The part of pino the service's own code logs through. The process's one pino instance (the
 * one Fastify logs requests with) satisfies it, so worker and request logs go to one stream.
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
