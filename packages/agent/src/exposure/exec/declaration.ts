import type { ToolDeclaration } from '../../model';

/** The name `Exec` is declared under. */
export const EXEC_TOOL_NAME = 'Exec';

/**
 * The Exec tool declaration. `catalogText` is `renderCatalog(pool)`; the schema
 * never changes, so the declaration changes only when the pool does.
 */
export function execDeclaration(catalogText: string): ToolDeclaration {
  return {
    name: EXEC_TOOL_NAME,
    description: catalogText,
    inputSchema: {
      type: 'object',
      properties: {
        code: {
          type: 'string',
          description:
            'JavaScript: the body of an async function. Use await, and return the value you want back.',
        },
      },
      required: ['code'],
      additionalProperties: false,
    },
  };
}
