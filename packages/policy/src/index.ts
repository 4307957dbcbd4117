export {
  compile, PolicyCompileError, KILL_SWITCH_DECISION, NO_POLICY_DECISION, ALLOW_DECISION,
  type CompiledPolicy, type Decision, type BlockReason, type EvaluateOptions, type PolicyRequest,
} from './engine.js';
export { compileGlob, globProblem, globSource, globTarget, type GlobMatcher } from './glob.js';
export { jsonPathPattern, parseJsonPath } from './jsonpath.js';
export { ruleProblems, rulesProblems, type RuleProblem } from './document-checks.js';
