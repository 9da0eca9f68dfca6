/**
 * The A2A TCK's system-under-test scenarios, so the official TCK can be pointed at the reference
 * server in A2A mode. The TCK picks a behaviour by the prefix of the id of the message it sends (an
 * A2A `messageId` becomes the native message `id`), whatever the text says. Native callers never
 * meet these: a message id only starts with one of the prefixes when the caller chose it so.
 */
import { createArtifact, createMessage, newId, type Message, type Part, type Task } from '@agent/core';
import type { RunHandle } from '@agent/runtime';

/**
 * The TCK's streaming timeout (its `TCK_STREAMING_TIMEOUT`, 2 s by default): the scenarios that must
 * outlast a stream read wait a multiple of it.
 */
export const TCK_STREAMING_TIMEOUT_MS = 2000;
const PROGRESS_INTERVAL_MS = 500;

export const TCK_FILE = {
  filename: 'output.txt',
  mediaType: 'text/plain',
  text: 'TCK file content',
  url: 'https://example.com/output.txt',
} as const;

/** Longest prefix first: `tck-artifact-file-url` must not be taken for `tck-artifact-file`. */
export const TCK_PREFIXES = [
  'tck-complete-task',
  'tck-delayed-complete',
  'tck-artifact-text',
  'tck-artifact-file-url',
  'tck-artifact-file',
  'tck-artifact-data',
  'tck-message-response',
  'tck-input-required',
  'tck-auth-required',
  'tck-reject-task',
  'tck-stream-001',
  'tck-stream-002',
  'tck-stream-003',
  'tck-stream-ordering-001',
  'tck-stream-artifact-text',
  'tck-stream-artifact-file',
  'tck-stream-artifact-chunked',
  'test-resubscribe-message-id',
] as const;
export type TckScenario = (typeof TCK_PREFIXES)[number];

/** Scenarios that stop for the caller; the task's next message ends them. */
const INTERRUPTING: ReadonlySet<TckScenario> = new Set(['tck-input-required', 'tck-auth-required']);

function scenarioOf(message: Message): TckScenario | undefined {
  return TCK_PREFIXES.find((prefix) => message.id.startsWith(prefix));
}

function userMessages(task: Task): Message[] {
  return task.messages.filter((message) => message.role === 'user');
}

/**
 * What the task's last user message asks for: its own scenario, else `'follow-up'` when it answers
 * an earlier message that stopped the task for input or authorization, else undefined (a native
 * command).
 */
export function tckScenarioOf(task: Task): TckScenario | 'follow-up' | undefined {
  const users = userMessages(task);
  const last = users.at(-1);
  if (!last) return undefined;
  const own = scenarioOf(last);
  if (own) return own;
  const interrupted = users.slice(0, -1).some((message) => {
    const earlier = scenarioOf(message);
    return earlier !== undefined && INTERRUPTING.has(earlier);
  });
  return interrupted ? 'follow-up' : undefined;
}

function agentSays(run: RunHandle, text: string): Promise<void> {
  return run.addMessage(createMessage(text, { role: 'agent' }));
}

function filePart(): Part {
  return {
    type: 'file',
    content: {
      bytes: Buffer.from(TCK_FILE.text).toString('base64'),
      media_type: TCK_FILE.mediaType,
      filename: TCK_FILE.filename,
    },
  };
}

function fileUrlPart(): Part {
  return {
    type: 'file',
    content: { url: TCK_FILE.url, media_type: TCK_FILE.mediaType, filename: TCK_FILE.filename },
  };
}

/** Works `ms`, reporting progress, so a caller can drop its stream and resubscribe meanwhile. */
async function work(run: RunHandle, ms: number): Promise<void> {
  let elapsed = 0;
  while (elapsed < ms) {
    const step = Math.min(PROGRESS_INTERVAL_MS, ms - elapsed);
    await run.sleep(step);
    elapsed += step;
    await run.progress(elapsed / ms, `worked ${elapsed} of ${ms} ms`);
  }
}

const TEXT_ARTIFACTS: Partial<Record<TckScenario, string>> = {
  'tck-artifact-text': 'Generated text content',
  'tck-stream-001': 'Stream hello from TCK',
  'tck-stream-003': 'Stream task lifecycle',
  'tck-stream-ordering-001': 'Ordered output',
  'tck-stream-artifact-text': 'Streamed text content',
};

/**
 * Runs one scenario. The runtime has already reported `working`; a scenario that returns nothing
 * ends `completed`, the others return the task in the state they end in.
 */
export async function runTckScenario(
  task: Task,
  run: RunHandle,
  scenario: TckScenario | 'follow-up',
): Promise<Task | void> {
  const text = TEXT_ARTIFACTS[scenario as TckScenario];
  if (text !== undefined) {
    await run.addArtifact(createArtifact(text, { name: 'output' }));
    return;
  }
  switch (scenario) {
    case 'tck-complete-task':
      return agentSays(run, 'Hello from TCK');
    case 'tck-delayed-complete':
      await work(run, TCK_STREAMING_TIMEOUT_MS);
      return agentSays(run, 'Done after delay');
    case 'tck-artifact-file':
    case 'tck-stream-artifact-file':
      return run.addArtifact(createArtifact(filePart(), { name: TCK_FILE.filename }));
    case 'tck-artifact-file-url':
      return run.addArtifact(createArtifact(fileUrlPart(), { name: TCK_FILE.filename }));
    case 'tck-artifact-data':
      return run.addArtifact(
        createArtifact({ type: 'data', content: { key: 'value', count: 42 } }, { name: 'data' }),
      );
    case 'tck-message-response':
      return agentSays(run, 'Direct message response');
    case 'tck-input-required':
      await agentSays(run, 'Input required: send a message on this task to continue');
      return { ...task, state: 'input-required' };
    case 'tck-auth-required':
      await agentSays(run, 'Authorization required: send a message on this task once authorized');
      return { ...task, state: 'auth-required' };
    case 'tck-reject-task':
      await agentSays(run, 'rejected');
      return { ...task, state: 'rejected' };
    case 'tck-stream-002':
      return;
    case 'tck-stream-artifact-chunked': {
      const id = newId();
      await run.addArtifact(createArtifact('chunk-1 ', { id, name: 'chunked' }), {
        append: false,
        lastChunk: false,
      });
      await run.addArtifact(createArtifact('chunk-2', { id, name: 'chunked' }), {
        append: true,
        lastChunk: true,
      });
      return;
    }
    case 'test-resubscribe-message-id':
      await work(run, 2 * TCK_STREAMING_TIMEOUT_MS);
      return;
    case 'follow-up':
      return agentSays(run, 'Input received, task completed');
    default:
      return;
  }
}
