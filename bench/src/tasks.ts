/** Task bodies and the demo-agent commands the subjects send. */
import { CLIENT_OPERATIONS, createTask, type Task, type Transport } from '@agent/core';

export const ECHO_TEXT = 'benchmark payload';
const TIMESTAMP = '2026-01-01T00:00:00.000Z';

/** A submitted Task `id` as JSON, one user message of `text` (the whole text, command included). */
export function taskBody(id: string, text: string): string {
  return JSON.stringify({
    id,
    state: 'submitted',
    messages: [
      { id: `m-${id}`, role: 'user', parts: [{ type: 'text', content: text }], timestamp: TIMESTAMP },
    ],
    artifacts: [],
    metadata: {},
    created_at: TIMESTAMP,
  });
}

/**
 * {@link taskBody} whose ids are autocannon's `[<id>]` placeholder, so each request is a new task
 * (see httpLoad).
 */
export function taskBodyTemplate(text: string): string {
  return taskBody('[<id>]', text);
}

/** `echo ` and a text of exactly `bytes` ASCII characters. */
export function echoOfSize(bytes: number): string {
  return `echo ${'x'.repeat(bytes)}`;
}

/** The text of the agent's reply: the last message's first text part. */
function replyText(task: Task): string | undefined {
  const part = task.messages.at(-1)?.parts[0];
  return part?.type === 'text' && typeof part.content === 'string' ? part.content : undefined;
}

/** Throws unless `task` is the completed echo of `text`: a wrong answer must not count as speed. */
export function checkEcho(task: Task, text: string): void {
  if (task.state !== 'completed' || replyText(task) !== text)
    throw new Error(
      `wrong echo answer: state ${task.state}, reply ${JSON.stringify(replyText(task))?.slice(0, 80)}`,
    );
}

/** One unary echo through a transport's client, checked. */
export async function sendEcho(transport: Transport, url: string, text = ECHO_TEXT): Promise<void> {
  const done = await transport.send<Task>(CLIENT_OPERATIONS.send_task, url, createTask(`echo ${text}`));
  checkEcho(done, text);
}

/** One `stream n` through a transport's client; throws unless n artifact events and a completed end came. */
export async function streamOnce(transport: Transport, url: string, n: number): Promise<void> {
  let artifacts = 0;
  let final: string | undefined;
  for await (const event of transport.subscribe(url, createTask(`stream ${n}`))) {
    if (event.type === 'task.artifact') artifacts++;
    else if (event.type === 'task.status' && event.final) final = event.state;
  }
  if (artifacts !== n || final !== 'completed')
    throw new Error(`stream ${n}: ${artifacts} artifact events, final status ${final ?? 'none'}`);
}
