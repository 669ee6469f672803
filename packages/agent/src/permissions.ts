/**
 * Permission rules: pure decisions over full tool names (`mcp__<server>__<tool>`
 * or a built-in's name). No I/O; the funnel asks the user when this says `ask`.
 */
import { matchToolGlob } from '@wave/mcp-config';
import { stableHash } from './stable-hash';

/** Glob rules on full tool names (`*` any run, `?` one character). Deny wins. */
export interface PermissionRules {
  /** Run without asking. @default [] */
  allow?: readonly string[];
  /** Never run; the model gets a blocked result. Wins over `allow` and `ask`. @default [] */
  deny?: readonly string[];
  /** Always ask, even when `allow`, `approveTools` or an earlier "allow always" would let it run. @default [] */
  ask?: readonly string[];
}

/** What the rules say about one name. */
export type RuleMatch =
  | { kind: 'deny'; rule: string }
  | { kind: 'ask'; rule: string }
  | { kind: 'allow'; rule: string }
  | { kind: 'none' };

/** Match `fullName` against the rules: deny, then ask, then allow. Pure. */
export function matchRules(rules: PermissionRules | undefined, fullName: string): RuleMatch {
  const first = (list: readonly string[] | undefined) => list?.find((g) => matchToolGlob(g, fullName));
  const deny = first(rules?.deny);
  if (deny !== undefined) return { kind: 'deny', rule: deny };
  const ask = first(rules?.ask);
  if (ask !== undefined) return { kind: 'ask', rule: ask };
  const allow = first(rules?.allow);
  if (allow !== undefined) return { kind: 'allow', rule: allow };
  return { kind: 'none' };
}

/** Why the user is asked. */
export type AskReason =
  /** No rule matched the name. */
  | 'no-rule'
  /** An `ask` rule matched. */
  | 'ask-rule'
  /** The tool always asks (e.g. `McpSettings`). */
  | 'always-ask'
  /** "Allow always" was given earlier, but the server changed the tool's definition since. */
  | 'definition-changed';

/** The decision before asking anyone. */
export type PermissionDecision =
  | { kind: 'allow'; reason: 'rule' | 'approve-tools' | 'remembered' | 'trusted'; rule?: string }
  | { kind: 'deny'; reason: string }
  | { kind: 'ask'; reason: AskReason };

/** Inputs of {@link decidePermission}. */
export interface PermissionInput {
  fullName: string;
  rules?: PermissionRules | undefined;
  /** The tool always asks, whatever the rules (deny still wins). */
  alwaysAsk?: boolean;
  /** `approveTools` of a trusted source (user or constructor config) matches the tool. */
  autoApproved?: boolean;
  /** Hash of the tool's current definition (see {@link toolDefinitionHash}). */
  definitionHash?: string | undefined;
  /** The definition hash remembered by an earlier "allow always" for this exact name, if any. */
  rememberedHash?: string | undefined;
  /** `matchRules(rules, fullName)` when the caller already has it (it caches matches). */
  match?: RuleMatch;
  /** The agent's own tool (e.g. `ReadOutput`): runs unless a rule says otherwise. */
  trusted?: boolean;
}

/**
 * The pure permission decision. Order: deny rule; always-ask tools; ask rule;
 * allow rule; the agent's own trusted tools; trusted `approveTools`; a
 * remembered "allow always" with the same definition hash; otherwise ask.
 */
export function decidePermission(input: PermissionInput): PermissionDecision {
  const match = input.match ?? matchRules(input.rules, input.fullName);
  if (match.kind === 'deny') {
    return {
      kind: 'deny',
      reason: `Permission denied: ${input.fullName} is blocked by the deny rule "${match.rule}". Do not retry; tell the user if the task needs it.`,
    };
  }
  if (input.alwaysAsk) return { kind: 'ask', reason: 'always-ask' };
  if (match.kind === 'ask') return { kind: 'ask', reason: 'ask-rule' };
  if (match.kind === 'allow') return { kind: 'allow', reason: 'rule', rule: match.rule };
  if (input.trusted) return { kind: 'allow', reason: 'trusted' };
  if (input.autoApproved) return { kind: 'allow', reason: 'approve-tools' };
  if (input.rememberedHash !== undefined) {
    if (input.rememberedHash === input.definitionHash) return { kind: 'allow', reason: 'remembered' };
    return { kind: 'ask', reason: 'definition-changed' };
  }
  return { kind: 'ask', reason: 'no-rule' };
}

/** True when the rules deny every name given (an empty list is never "all denied"). Pure. */
export function allDenied(rules: PermissionRules | undefined, fullNames: readonly string[]): boolean {
  if (fullNames.length === 0) return false;
  return fullNames.every((n) => matchRules(rules, n).kind === 'deny');
}

/** Hash of what the user approved: the tool's name, description and input schema. */
export function toolDefinitionHash(tool: {
  name: string;
  description?: string;
  inputSchema?: unknown;
}): string {
  return stableHash({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema ?? {},
  });
}
