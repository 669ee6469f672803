import { describe, expect, test } from 'vitest';
import { loadCatalog } from '../bench/search-metrics';
import { createToolSearchIndex, searchTools } from '../src/exposure/search';
import { stem, tokenize } from '../src/exposure/text';

const catalog = loadCatalog();
const index = createToolSearchIndex(catalog);
const names = (query: string, limit = 5): string[] =>
  index.search(query, { limit }).map((t) => `${t.server}__${t.name}`);

describe('tokenize', () => {
  test.each([
    ['create_pull_request', ['create', 'pull', 'request']],
    ['getFileContents', ['get', 'file', 'contents']],
    ['list-issues', ['list', 'issues']],
    ['API-retrieve-a-page', ['api', 'retrieve', 'a', 'page']],
    ['HTTPServer v2 context7', ['http', 'server', 'v2', 'context7']],
    ['mcp__github__search_code', ['mcp', 'github', 'search', 'code']],
    ['  slack: send, a   message!  ', ['slack', 'send', 'a', 'message']],
  ])('%s', (text, words) => {
    expect(tokenize(text)).toEqual(words);
  });
});

describe('stem', () => {
  test.each([
    [['create', 'creates', 'created', 'creating', 'creation'], 'creat'],
    [['query', 'queries'], 'query'],
    [['directory', 'directories'], 'directory'],
    [['message', 'messages', 'messaging'], 'messag'],
    [['browse', 'browser', 'browsers'], 'brows'],
    [['map', 'maps', 'mapping'], 'map'],
  ])('%j -> %s', (words, expected) => {
    for (const w of words) expect(stem(w)).toBe(expected);
  });
});

describe('searchTools', () => {
  test('returns the same objects, best first, at most limit', () => {
    const out = searchTools(catalog, 'create a pull request', { limit: 3 });
    expect(out).toHaveLength(3);
    expect(out[0]).toBe(catalog.find((t) => t.server === 'github' && t.name === 'create_pull_request'));
    for (const t of out) expect(catalog).toContain(t);
  });

  test('an exact tool name or full name is first, whatever else matches better', () => {
    // `query`, `search`, `list`, `get` are names of single-tool servers and common words too.
    expect(names('query')[0]).toBe('postgres__query');
    expect(names('search')[0]).toBe('gdrive__search');
    expect(names('list')[0]).toBe('redis__list');
    expect(names('mcp__redis__get')[0]).toBe('redis__get');
    expect(names('github__update_issue')[0]).toBe('github__update_issue');
    expect(names('mcp__sentry__update_issue')[0]).toBe('sentry__update_issue');
    expect(names('MCP__Notion__API-post-page')[0]).toBe('notion__API-post-page');
    expect(names('`browser_take_screenshot`')[0]).toBe('playwright__browser_take_screenshot');
    // A name shared by three servers puts all three first.
    expect(new Set(names('create_branch', 3))).toEqual(
      new Set(['github__create_branch', 'gitlab__create_branch', 'supabase__create_branch']),
    );
  });

  test('an identifier inside a sentence is ranked first', () => {
    expect(names('call create_refund for the order')[0]).toBe('stripe__create_refund');
    expect(names('then use mcp__slack__slack_add_reaction')[0]).toBe('slack__slack_add_reaction');
  });

  test('identifiers in snake, camel and kebab case are found by their words', () => {
    expect(names('pull request files')[0]).toBe('github__get_pull_request_files');
    expect(names('library id')[0]).toBe('context7__resolve-library-id');
    const camel = createToolSearchIndex([
      { server: 'a', name: 'getFileContents' },
      { server: 'a', name: 'listIssues' },
    ]);
    expect(camel.search('file contents').map((t) => t.name)).toEqual(['getFileContents']);
    expect(camel.search('list issue').map((t) => t.name)).toEqual(['listIssues']);
  });

  test("a server named in the query ranks that server's tools first", () => {
    expect(names('gitlab: create an issue')[0]).toBe('gitlab__create_issue');
    expect(names('in supabase create a branch')[0]).toBe('supabase__create_branch');
    expect(names('google drive: find the budget')[0]).toBe('gdrive__search');
    expect(names('postgresql run a query')[0]).toBe('postgres__query');
    const slack = names('slack: send a message', 8);
    expect(slack[0]).toBe('slack__slack_post_message');
    // A server name alone lists its tools.
    expect(names('redis', 10).sort()).toEqual(['redis__delete', 'redis__get', 'redis__list', 'redis__set']);
  });

  test('a server name that is a common word needs a marker', () => {
    expect(names('memory: search nodes')[0]).toBe('memory__search_nodes');
    const own = createToolSearchIndex([
      { server: 'web', name: 'fetch', description: 'Fetch a URL' },
      { server: 'other', name: 'web_search', description: 'Search the web' },
      { server: 'third', name: 'web_scrape', description: 'Scrape a web page' },
    ]);
    expect(own.search('search the web')[0]?.name).toBe('web_search');
    expect(own.search('in web: search')[0]?.server).toBe('web');
  });

  test('paraphrased tasks reach the right tool through the vocabulary', () => {
    expect(names('refund the last payment')[0]).toBe('stripe__create_refund');
    expect(names('remember this fact for later', 3)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^memory__(create_entities|add_observations)$/)]),
    );
  });

  test('schema property names and descriptions are searched', () => {
    const tools = [
      {
        server: 's',
        name: 'run',
        description: 'Runs it',
        inputSchema: { properties: { sql: { type: 'string' } } },
      },
      {
        server: 's',
        name: 'go',
        description: 'Does it',
        inputSchema: { properties: { x: { description: 'a postal code' } } },
      },
      { server: 's', name: 'other', description: 'Something else' },
    ];
    expect(searchTools(tools, 'sql')[0]?.name).toBe('run');
    expect(searchTools(tools, 'postal code')[0]?.name).toBe('go');
  });

  test('nothing to match gives nothing; odd input does not throw', () => {
    expect(searchTools(catalog, '')).toEqual([]);
    expect(searchTools(catalog, 'the of and')).toEqual([]);
    expect(searchTools(catalog, 'zzqxv wkkq')).toEqual([]);
    expect(searchTools([], 'anything')).toEqual([]);
    expect(searchTools(catalog, 'create issue', { limit: 0 })).toEqual([]);
    const weird = [{ server: 'x', name: 'y', description: undefined, inputSchema: { properties: null } }];
    expect(searchTools(weird, 'y')).toEqual(weird);
    expect(() => searchTools(catalog, `${'a_'.repeat(20_000)}!`)).not.toThrow();
  });

  test('the index gives the same answer as the one-shot function and keeps no state between queries', () => {
    for (const q of ['list issues', 'slack: post', 'take a screenshot', 'create_branch']) {
      expect(index.search(q, { limit: 7 })).toEqual(searchTools(catalog, q, { limit: 7 }));
    }
    const a = index.search('refund a payment');
    index.search('slack: send a message');
    expect(index.search('refund a payment')).toEqual(a);
  });

  test('default limit is 10; NaN means the default, Infinity means all', () => {
    expect(index.search('list')).toHaveLength(10);
    expect(index.search('list', { limit: Number.NaN })).toHaveLength(10);
    expect(index.search('list', { limit: 2.7 })).toHaveLength(2);
    expect(index.search('list', { limit: Number.POSITIVE_INFINITY }).length).toBeGreaterThan(40);
  });

  test('every tool of the catalog is first for its full name, and among the tools of that name for its name', () => {
    for (const tool of catalog) {
      for (const full of [`${tool.server}__${tool.name}`, `mcp__${tool.server}__${tool.name}`]) {
        expect(index.search(full, { limit: 1 })[0]).toBe(tool);
      }
      const sameName = catalog.filter((t) => t.name === tool.name);
      expect(new Set(index.search(tool.name, { limit: sameName.length }))).toEqual(new Set(sameName));
    }
  });
});
