/**
 * Every export here is public API (of this private package): fixture MCP
 * servers and the helpers every test suite shares. Helpers that register
 * vitest hooks are at `@wave/testkit/vitest`. The leak check and home guard
 * are wired by path as vitest global setups, not exported.
 * @packageDocumentation
 */
export { ChildProcessTransport, childProcessTransport } from './child-transport';
export { TestkitError, type TestkitErrorCode } from './errors';
export {
  type FakeHangStep,
  type FakeModelOptions,
  type FakeModelRequest,
  type FakeModelServer,
  type FakeModelStep,
  type FakeModelWire,
  type FakeRawStep,
  type FakeReplyStep,
  type FakeStatusStep,
  type FakeToolCall,
  fakeModelFixturePath,
  startFakeAnthropic,
  startFakeOpenAI,
} from './fake-models';
export {
  FIXTURE_NAMES,
  type FixtureName,
  fixturePath,
  fixtureServer,
  type StdioServerSpec,
} from './fixtures';
export { type HttpFixture, type HttpFixtureOptions, startHttpFixture } from './http-fixture';
export { killMarked, makeMarker, markerEnv } from './markers';
export {
  followAuthorizationRedirect,
  type OAuthFixture,
  type OAuthFixtureOptions,
  startOAuthFixture,
} from './oauth-fixture';
export {
  findProcessesByMarker,
  isPidAlive,
  killPids,
  listDescendants,
  MARKER_ENV,
  supportsProcScan,
} from './procfs';
export { type RealServerName, type RealServerOptions, realServer } from './real-servers';
export { makeTempDir, makeTempHome, type TempDir, type TempHome } from './temp';
export {
  type Clock,
  type Deferred,
  deepFreeze,
  deferred,
  type FakeClock,
  type FakeClockOptions,
  fakeClock,
  type Gate,
  gate,
  systemClock,
  type WaitForOptions,
  waitFor,
} from './wait';
