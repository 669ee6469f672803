import { describe, expect, test } from 'vitest';
import { mcpSettingsTool } from '../../src/builtins/mcp-settings';
import { readOutputTool } from '../../src/builtins/read-output';
import { TOOL_NAME_PATTERN } from '../../src/exposure/flat';
import { sanitizeSchema } from '../../src/exposure/schema';
import { schemaProblems } from '../exposure/schema-check';

describe('built-in declarations', () => {
  test.each([readOutputTool, mcpSettingsTool].map((t) => ({ name: t.declaration.name, tool: t })))(
    '$name is already in the form every model API accepts',
    ({ tool }) => {
      expect(tool.declaration.name).toMatch(TOOL_NAME_PATTERN);
      expect(schemaProblems(tool.declaration.inputSchema)).toEqual([]);
      expect(sanitizeSchema(tool.declaration.inputSchema)).toEqual(tool.declaration.inputSchema);
    },
  );
});
