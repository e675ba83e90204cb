// A fake Anthropic Messages API that plays scripts embedded in task prompts (tests, `serve --demo`).

export { startScriptedModelProcess } from './process.js';
export type { ScriptedModelProcess, ScriptedModelProcessOptions } from './process.js';
export { startScriptedModel } from './server.js';
export type { RecordedRequest, ScriptedModel, ScriptedModelOptions } from './server.js';
export { MAX_DELAY_MS, currentTask, estimateTokens, nextTurn, parseScript, promptText, turnFor } from './script.js';
export type { Block, Directive, Script, StopReason, Task, Turn } from './script.js';
export { assistantMessage, errorBody, renderSse, sseEvents } from './sse.js';
export type { AssistantMessage, ContentBlock, ErrorBody, SseEvent, Usage } from './sse.js';
