// Mapping rules: json-logic setup, loading and validation, per-account rule sets,
// applying rules to one event, hot reload, and versions in the store. See README.md for the rule syntax.
export type { JsonLogic, NativeEvent, RuleData, RuleFile, RuleSpec } from './types.ts';
export { evaluate, truthy, OPERATIONS, BUILTIN_OPERATIONS, CUSTOM_OPERATION_NAMES, REMOVED_OPERATIONS } from './json-logic.ts';
export { checkExpression, type ExpressionProblem } from './check-expression.ts';
export { RULE_FILE_SCHEMA, checkRuleFileSchema } from './rule-schema.ts';
export {
  loadRules, checkRuleDocuments, formatRuleError,
  type LoadRulesOptions, type LoadRulesResult, type OverlayDocument, type RuleDocumentInput, type RuleLoadError,
} from './load-rules.ts';
export { createRuleSet, type LoadedRuleFile, type RuleSet } from './rule-set.ts';
export { usePluginRules, pluginsDirFor, PLUGIN_RULES_FILE } from './plugin-rules.ts';
export { applyRules, ruleMatchesEvent, type ApplyRulesResult } from './apply-rules.ts';
export {
  startRuleWatcher,
  RulesInvalidError,
  type ReloadEvent,
  type RuleWatcher,
  type RuleWatcherOptions,
  type WatcherLogger,
} from './rule-watcher.ts';
export {
  checkDraft, publishRules, rollbackRules, revertRules, importRules, liveDocuments, diffRules,
  type DraftCheck, type ImportResult, type LiveDocument, type RuleDiffEntry, type RuleDraft, type RuleProblem, type RuleVersionDeps, type RuleWriteResult,
} from './rule-versions.ts';
