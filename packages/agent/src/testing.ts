// @wave/agent/testing: helpers for tests and examples. Every export here is public API.
export {
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedReply,
  type ScriptedStep,
  scriptedModel,
} from './models/scripted';
