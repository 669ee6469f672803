import { fileURLToPath } from 'node:url';
import {
  type FakeModelServer,
  type FakeModelServerOptions,
  startFakeModelServer,
} from '../fixtures/lib/fake-model-server.mjs';

export type {
  FakeHangStep,
  FakeModelRequest,
  FakeModelServer,
  FakeModelServerOptions,
  FakeModelStep,
  FakeModelWire,
  FakeRawStep,
  FakeReplyStep,
  FakeStatusStep,
  FakeToolCall,
} from '../fixtures/lib/fake-model-server.mjs';

/** Options of {@link startFakeOpenAI} and {@link startFakeAnthropic}. */
export type FakeModelOptions = Omit<FakeModelServerOptions, 'wire' | 'host'>;

/**
 * Starts a fake OpenAI-compatible model server (Chat Completions at
 * `/v1/chat/completions`) inside this process, on 127.0.0.1 and a random
 * port. Pass its `baseURL` to the adapter. Close it in `afterEach`.
 */
export function startFakeOpenAI(options: FakeModelOptions = {}): Promise<FakeModelServer> {
  return startFakeModelServer({ ...options, wire: 'openai', host: '127.0.0.1' });
}

/**
 * Starts a fake Anthropic Messages server (`/v1/messages`) inside this
 * process, on 127.0.0.1 and a random port. Close it in `afterEach`.
 */
export function startFakeAnthropic(options: FakeModelOptions = {}): Promise<FakeModelServer> {
  return startFakeModelServer({ ...options, wire: 'anthropic', host: '127.0.0.1' });
}

/**
 * Absolute path of `fixtures/fake-model.mjs`, the standalone fake model
 * server (run it with `process.execPath`; it prints `FAKE_MODEL_BASE_URL <url>`).
 */
export function fakeModelFixturePath(): string {
  return fileURLToPath(new URL('../fixtures/fake-model.mjs', import.meta.url));
}
