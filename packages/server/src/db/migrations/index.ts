import type { Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { init } from './0001-init.js';
import { controlPlane } from './0002-control-plane.js';
import { telemetry } from './0003-telemetry.js';
import { unloggedRateLimits } from './0004-unlogged-rate-limits.js';
import { policySequence } from './0005-policy-sequence.js';
import { alerts } from './0006-alerts.js';
import { instances } from './0007-instances.js';
import { otlp } from './0008-otlp.js';
import { instanceClosed } from './0009-instance-closed.js';

/**
 * The one migration set for both engines, in order. Names are never changed and a released
 * migration is never edited; add a new numbered one instead.
 */
export function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-init': init(dialect),
    '0002-control-plane': controlPlane(dialect),
    '0003-telemetry': telemetry(dialect),
    '0004-unlogged-rate-limits': unloggedRateLimits(dialect),
    '0005-policy-sequence': policySequence(),
    '0006-alerts': alerts(dialect),
    '0007-instances': instances(dialect),
    '0008-otlp': otlp(dialect),
    '0009-instance-closed': instanceClosed(dialect),
  };
}
