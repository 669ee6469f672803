/**
 * Benchmark: computeInstructionsDelta on a 100,000-message history with 32
 * servers. Prints median and p95 per call for several situations. Goal from
 * the issue: <= 5 ms per call. Prints figures only; asserts nothing.
 *
 * Run: pnpm --filter @wave/mcp-instructions bench
 */
import { pathToFileURL } from 'node:url';
import {
  computeInstructionsDelta,
  type HistoryMessage,
  type ServerInstructionsState,
} from '@wave/mcp-instructions';

const MESSAGES = 100_000;
const SERVERS = 32;
const WARMUP = 30;
const RUNS = 200;

function instructionsFor(i: number): string {
  const line = `Server ${i}: rate limit ${i + 1} requests/min; call \`login\` before anything else.\n`;
  // 400..3,500 characters: some are over the 2048 limit and get truncated.
  return line.repeat(5 + ((i * 7) % 40));
}

function makeServers(): ServerInstructionsState[] {
  return Array.from({ length: SERVERS }, (_, i) => ({
    name: `server-${String(i).padStart(2, '0')}`,
    available: true,
    permitted: true,
    instructions: instructionsFor(i),
  }));
}

/** Realistic mixed shapes (user text, assistant blocks, tool calls, tool results, host extras). */
function filler(i: number): HistoryMessage {
  switch (i % 5) {
    case 0:
      return { role: 'user', content: `question ${i}` };
    case 1:
      return { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] };
    case 2:
      return {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `t${i}`, name: 'mcp__server-01__echo', input: { text: 'x' } }],
      };
    case 3:
      return { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i - 1}`, content: 'ok' }] };
    default:
      return { role: 'assistant', content: 'thinking', uuid: `u${i}`, timestamp: i, isMeta: false };
  }
}

/**
 * History of MESSAGES messages in which the servers were announced along the
 * way (markers early in the history, so a backward scan must cover it all),
 * with some servers going offline and coming back in between.
 */
function makeHistory(servers: ServerInstructionsState[]): HistoryMessage[] {
  const history: HistoryMessage[] = [];
  const markerEvery = Math.floor(MESSAGES / (SERVERS * 2));
  let next = 0;
  while (history.length < MESSAGES) {
    if (history.length % markerEvery === 0 && next < SERVERS * 2) {
      // First pass: announce server k; second pass: retire and re-announce it.
      const k = next % SERVERS;
      const state = servers.map((s, i) => ({ ...s, available: i <= k || next >= SERVERS }));
      if (next >= SERVERS) state[k] = { ...state[k]!, available: false };
      const delta = computeInstructionsDelta(history, state);
      if (delta) history.push(delta);
      if (next >= SERVERS) {
        const back = computeInstructionsDelta(history, servers.slice(0, k + 1));
        if (back) history.push(back);
      }
      next++;
    }
    history.push(filler(history.length));
  }
  return history.slice(0, MESSAGES);
}

/** Timed calls (ms, sorted ascending) for one situation, and what the delta did. */
export interface DeltaRow {
  label: string;
  times: number[];
  what: string;
}

function measure(
  label: string,
  history: readonly HistoryMessage[],
  servers: readonly ServerInstructionsState[],
  runs: number,
): DeltaRow {
  let sink = 0;
  for (let i = 0; i < WARMUP; i++) sink += computeInstructionsDelta(history, servers)?.content.length ?? 0;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const delta = computeInstructionsDelta(history, servers);
    times.push(performance.now() - t0);
    sink += delta?.content.length ?? 0;
  }
  times.sort((a, b) => a - b);
  const result = computeInstructionsDelta(history, servers);
  const what = result
    ? `announce ${result.mcpInstructions.announced.length}, retire ${result.mcpInstructions.retired.length}`
    : 'null';
  if (sink < 0) console.log('unreachable: keeps the results alive');
  return { label, times, what };
}

/**
 * The history, and every situation measured on it. `onHistory` hears about
 * the history once it is built, `onRow` about each situation once measured.
 */
export function measureInstructionsDelta(
  opts: {
    runs?: number;
    onHistory?: (info: { messages: number; markers: number }) => void;
    onRow?: (row: DeltaRow) => void;
  } = {},
): {
  messages: number;
  markers: number;
  rows: DeltaRow[];
} {
  const runs = opts.runs ?? RUNS;
  const servers = makeServers();
  const history = makeHistory(servers);
  const markers = history.filter((m) => 'mcpInstructions' in m).length;
  opts.onHistory?.({ messages: history.length, markers });
  const rows: DeltaRow[] = [];
  const row = (label: string, h: readonly HistoryMessage[], s: readonly ServerInstructionsState[]): void => {
    const r = measure(label, h, s, runs);
    rows.push(r);
    opts.onRow?.(r);
  };
  const oneNew = servers.map((s, i) => (i === 7 ? { ...s, instructions: `${s.instructions}changed\n` } : s));
  const oneOffline = servers.map((s, i) => (i === 3 ? { ...s, available: false } : s));
  const compacted = history.map((_, i) => filler(i)); // same size, every marker gone
  row('steady state: nothing new (null)', history, servers);
  row('one server changed its text', history, oneNew);
  row('one server went offline', history, oneOffline);
  row('one server removed from config', history, servers.slice(1));
  row('after compaction: all 32 announced again', compacted, servers);
  row('no servers configured: all 32 retired', history, []);
  return { messages: history.length, markers, rows };
}

function main(): void {
  measureInstructionsDelta({
    onHistory: ({ messages, markers }) =>
      console.log(
        `computeInstructionsDelta: ${messages} messages (${markers} with markers), ${SERVERS} servers, ` +
          `${WARMUP} warm-up + ${RUNS} timed calls each, Node ${process.version}`,
      ),
    onRow: ({ label, times, what }) => {
      const median = times[Math.floor(times.length / 2)]!;
      const p95 = times[Math.floor(times.length * 0.95)]!;
      console.log(
        `${label.padEnd(44)} median ${median.toFixed(3)} ms   p95 ${p95.toFixed(3)} ms   (${what})`,
      );
    },
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
