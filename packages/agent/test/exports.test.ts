import { describe, expect, it } from 'vitest';
import { AgentError, isAgentError } from '../src/errors';
import * as api from '../src/index';
import { isModelError, ModelError } from '../src/models/errors';

describe('public API', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'Agent',
      'AgentError',
      'AgentHost',
      'DEFAULT_OUTPUT_LIMITS',
      'DEFAULT_SYSTEM_PROMPT',
      'ModelError',
      'anthropic',
      'createJsonlSessionStore',
      'fullToolName',
      'isAgentError',
      'isModelError',
      'openaiCompatible',
      'parseFullToolName',
      'sanitizeSchema',
      'toolDefinitionHash',
    ]);
  });
});

describe('error guards check name and code, not instanceof', () => {
  it('recognise errors of another installed copy', () => {
    const agent = Object.assign(new Error('x'), { name: 'AgentError', code: 'UNKNOWN_SERVER' });
    const model = Object.assign(new Error('x'), { name: 'ModelError', code: 'MODEL_AUTH' });
    expect(isAgentError(agent, 'UNKNOWN_SERVER')).toBe(true);
    expect(isAgentError(new AgentError('AGENT_DESTROYED', 'x'), 'AGENT_DESTROYED')).toBe(true);
    expect(isModelError(model, 'MODEL_AUTH')).toBe(true);
    expect(isModelError(model, 'MODEL_HTTP')).toBe(false);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['a look-alike object', { name: 'AgentError', code: 'UNKNOWN_SERVER', message: 'x' }],
    ['no code', Object.assign(new Error('x'), { name: 'AgentError' })],
  ])('reject %s', (_label, value) => {
    expect(isAgentError(value)).toBe(false);
    expect(isModelError(value)).toBe(false);
  });

  it('ModelError is recognised by its own guard only', () => {
    const err = new ModelError('MODEL_AUTH', 'x');
    expect(isModelError(err)).toBe(true);
    expect(isAgentError(err)).toBe(false);
  });
});
