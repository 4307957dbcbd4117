export { Corral, CorralBlockedError, SDK_VERSION, type CorralStatus } from './corral.js';
export type { CorralOptions, DecisionInfo, Logger } from './options.js';
export { templatePath } from './template.js';
