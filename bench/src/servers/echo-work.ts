/**
 * The echo work the baseline servers do, so a baseline answers what the reference server's `echo`
 * answers: the task, completed, with an agent message and one text artifact carrying the text after
 * `echo `. The reply is about as large as the reference server's, which matters for the payload
 * subjects (a 64 KiB text goes out three times). Plain objects, no framework code: it is the floor.
 */
import { randomUUID } from 'node:crypto';

interface TextPart {
  type: string;
  content?: unknown;
}

export interface EchoTask {
  id: string;
  state: string;
  messages: { id: string; role: string; parts: TextPart[]; timestamp: string }[];
  artifacts?: unknown[];
  metadata?: Record<string, unknown>;
  created_at?: string;
}

function lastUserText(task: EchoTask): string {
  for (let i = task.messages.length - 1; i >= 0; i--) {
    const message = task.messages[i]!;
    if (message.role !== 'user') continue;
    return message.parts
      .filter((part) => part.type === 'text' && typeof part.content === 'string')
      .map((part) => part.content as string)
      .join('');
  }
  return '';
}

export function echoReply<T extends EchoTask>(task: T): T {
  const text = lastUserText(task).replace(/^echo\s+/i, '');
  const now = new Date().toISOString();
  return {
    ...task,
    state: 'completed',
    messages: [
      ...task.messages,
      { id: randomUUID(), role: 'agent', parts: [{ type: 'text', content: text }], timestamp: now },
    ],
    artifacts: [
      ...(task.artifacts ?? []),
      {
        id: randomUUID(),
        parts: [{ type: 'text', content: text }],
        metadata: {},
        created_at: now,
        name: 'echo',
      },
    ],
    metadata: task.metadata ?? {},
    created_at: task.created_at ?? now,
  } as T; // T only adds fields the spread carries over; the ones written here keep their wire types
}

/** The line every bench server prints once it serves, in the reference server's format. */
export function announce(urls: { http: string }): void {
  process.stdout.write(`${JSON.stringify({ event: 'listening', ...urls })}\n`);
}
