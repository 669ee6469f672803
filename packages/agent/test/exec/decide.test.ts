import { describe, expect, test } from 'vitest';
import { renderCatalog } from '../../src/exposure/catalog';
import { decideExposure, type ExposureInput } from '../../src/exposure/decide';
import { execDeclaration } from '../../src/exposure/exec/declaration';

const rows: [string, ExposureInput, 'flat' | 'exec' | 'gateway'][] = [
  ['auto, no tools', { execDenied: false, visibleToolCount: 0 }, 'flat'],
  ['auto, 4 tools', { toolMode: 'auto', execDenied: false, visibleToolCount: 4 }, 'flat'],
  ['auto, 5 tools', { toolMode: 'auto', execDenied: false, visibleToolCount: 5 }, 'exec'],
  ['auto, 250 tools', { toolMode: 'auto', execDenied: false, visibleToolCount: 250 }, 'exec'],
  [
    'auto, 5 tools, Exec disabled',
    { toolMode: 'auto', enableExec: false, execDenied: false, visibleToolCount: 5 },
    'flat',
  ],
  ['auto, 5 tools, Exec denied', { toolMode: 'auto', execDenied: true, visibleToolCount: 5 }, 'flat'],
  [
    'auto, enableExec true explicitly',
    { toolMode: 'auto', enableExec: true, execDenied: false, visibleToolCount: 9 },
    'exec',
  ],
  ['flat, 50 tools', { toolMode: 'flat', execDenied: false, visibleToolCount: 50 }, 'flat'],
  ['exec, 1 tool', { toolMode: 'exec', execDenied: false, visibleToolCount: 1 }, 'exec'],
  ['exec, 0 tools', { toolMode: 'exec', execDenied: false, visibleToolCount: 0 }, 'exec'],
  ['exec, disabled', { toolMode: 'exec', enableExec: false, execDenied: false, visibleToolCount: 9 }, 'flat'],
  ['exec, denied', { toolMode: 'exec', execDenied: true, visibleToolCount: 9 }, 'flat'],
  ['gateway, 0 tools', { toolMode: 'gateway', execDenied: false, visibleToolCount: 0 }, 'gateway'],
  ['gateway, Exec denied', { toolMode: 'gateway', execDenied: true, visibleToolCount: 30 }, 'gateway'],
];

describe('decideExposure', () => {
  test.each(rows)('%s', (_name, input, expected) => {
    expect(decideExposure(input)).toBe(expected);
  });

  test('auto converges both ways as the pool grows and shrinks', () => {
    const seq = [4, 5, 4, 6, 0].map((visibleToolCount) =>
      decideExposure({ execDenied: false, visibleToolCount }),
    );
    expect(seq).toEqual(['flat', 'exec', 'flat', 'exec', 'flat']);
  });
});

describe('execDeclaration', () => {
  test('declares Exec with the catalog as its description and a code argument', () => {
    const catalog = renderCatalog([]);
    expect(execDeclaration(catalog)).toEqual({
      name: 'Exec',
      description: catalog,
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
    });
  });
});
