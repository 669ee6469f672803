/**
 * @wave/testkit: fixture MCP servers and helpers shared by every test suite.
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
export {
  collectLeaks,
  formatLeakReport,
  type LeakedProcess,
  type LeakScanner,
  leakNamespace,
  procLeakScanner,
} from './leak-check';
export { killMarked, makeMarker, markerEnv } from './markers';
export {
  followAuthorizationRedirect,
  type OAuthFixture,
  type OAuthFixtureOptions,
  startOAuthFixture,
} from './oauth-fixture';
export {
  descendantsOf,
  environValue,
  findProcessesByMarker,
  isPidAlive,
  killPids,
  listDescendants,
  MARKER_ENV,
  markerMatches,
  type ProcStat,
  parseProcStat,
  readCmdline,
  readMarker,
  readProcStat,
  supportsProcScan,
} from './procfs';
export { type RealServerName, type RealServerOptions, realServer } from './real-servers';
export { makeTempDir, makeTempHome, type TempDir, type TempHome } from './temp';
export {
  type Clock,
  type Deferred,
  deferred,
  type Gate,
  gate,
  systemClock,
  type WaitForOptions,
  waitFor,
} from './wait';
