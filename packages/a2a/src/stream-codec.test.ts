import {
  type Task,
  type TaskEvent,
  createArtifact,
  createMessage,
  createTask,
  isFinalEvent,
} from '@agent/core';
import { A2AStreamDecoder, A2AStreamEncoder } from './stream-codec.js';

const T = '2026-01-01T00:00:00.000Z';

function status(task: Task, state: Task['state'], final = false): TaskEvent {
  return final
    ? { type: 'task.status', task_id: task.id, state, final, timestamp: T, task: structuredClone(task) }
    : { type: 'task.status', task_id: task.id, state, final, timestamp: T };
}

describe('A2AStreamEncoder', () => {
  it('sends the task first, then updates, and unstreamed final artifacts before the final status', () => {
    const task = createTask('q', { metadata: { session_id: 'ctx' } });
    const encoder = new A2AStreamEncoder(task);
    expect(encoder.first().task).toMatchObject({
      id: task.id,
      contextId: 'ctx',
      status: { state: 'TASK_STATE_SUBMITTED' },
    });
    expect(encoder.encode(status(task, 'working'))).toEqual([
      {
        statusUpdate: {
          taskId: task.id,
          contextId: 'ctx',
          status: { state: 'TASK_STATE_WORKING', timestamp: T },
        },
      },
    ]);
    const streamed = createArtifact([{ type: 'text', content: 'a' }]);
    const frames = encoder.encode({
      type: 'task.artifact',
      task_id: task.id,
      artifact: streamed,
      append: false,
      last_chunk: true,
      timestamp: T,
    });
    expect(frames).toEqual([
      {
        artifactUpdate: {
          taskId: task.id,
          contextId: 'ctx',
          artifact: expect.objectContaining({ artifactId: streamed.id }),
          lastChunk: true,
        },
      },
    ]);
    expect(frames[0]).not.toHaveProperty('artifactUpdate.append');
    expect(encoder.encode({ type: 'llm.stream', task_id: task.id, delta: 'x', timestamp: T })).toEqual([]);

    const late = createArtifact([{ type: 'text', content: 'b' }]);
    const answer = createMessage('done', { role: 'agent' });
    const final = {
      ...task,
      state: 'completed' as const,
      artifacts: [streamed, late],
      messages: [...task.messages, answer],
    };
    const last = encoder.encode(status(final, 'completed', true));
    expect(last).toHaveLength(2);
    expect(last[0]).toMatchObject({ artifactUpdate: { artifact: { artifactId: late.id }, lastChunk: true } });
    expect(last[1]).toMatchObject({
      statusUpdate: {
        status: { state: 'TASK_STATE_COMPLETED', message: { messageId: answer.id, role: 'ROLE_AGENT' } },
      },
    });
  });
});

describe('A2AStreamDecoder', () => {
  it('accumulates a task and ends with one final status carrying it', () => {
    const decoder = new A2AStreamDecoder('native-1');
    const first = decoder.decode({
      task: { id: 'remote-1', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } },
    });
    expect(first).toEqual([
      expect.objectContaining({ type: 'task.status', task_id: 'native-1', state: 'submitted', final: false }),
    ]);
    expect(decoder.remoteTaskId).toBe('remote-1');
    decoder.decode({ status_update: { taskId: 'remote-1', contextId: 'c', status: { state: 2 } } });
    decoder.decode({
      artifactUpdate: {
        taskId: 'remote-1',
        contextId: 'c',
        artifact: { artifactId: 'a', parts: [{ text: 'x' }] },
      },
    });
    const appended = decoder.decode({
      artifactUpdate: {
        taskId: 'remote-1',
        contextId: 'c',
        append: true,
        lastChunk: true,
        artifact: { artifactId: 'a', parts: [{ text: 'y' }] },
      },
    });
    expect(appended[0]).toMatchObject({ type: 'task.artifact', append: true, last_chunk: true });
    const end = decoder.decode({
      statusUpdate: {
        taskId: 'remote-1',
        contextId: 'c',
        status: {
          state: 'TASK_STATE_COMPLETED',
          message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'ok' }] },
        },
      },
    });
    expect(end).toHaveLength(1);
    expect(isFinalEvent(end[0]!)).toBe(true);
    const finalTask = (end[0] as { task: Task }).task;
    expect(finalTask).toMatchObject({ id: 'native-1', state: 'completed', metadata: { session_id: 'c' } });
    expect(finalTask.artifacts[0]!.parts).toEqual([
      { type: 'text', content: 'x' },
      { type: 'text', content: 'y' },
    ]);
    expect(finalTask.messages.map((m) => m.id)).toEqual(['m']);
    expect(
      decoder.decode({
        statusUpdate: { taskId: 'remote-1', contextId: 'c', status: { state: 'TASK_STATE_FAILED' } },
      }),
    ).toEqual([]);
  });

  it('treats interrupted states as the end and a terminal task frame as final', () => {
    const decoder = new A2AStreamDecoder();
    const events = decoder.decode({
      task: { id: 'r', contextId: 'c', status: { state: 'TASK_STATE_INPUT_REQUIRED' } },
    });
    expect(events).toEqual([expect.objectContaining({ final: true, state: 'input-required', task_id: 'r' })]);
    expect(decoder.done).toBe(true);
  });

  it('turns a lone message into a completed final status', () => {
    const decoder = new A2AStreamDecoder('n');
    const events = decoder.decode({
      message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'hi' }], contextId: 'c' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      final: true,
      state: 'completed',
      task: { id: 'n', messages: [{ id: 'm' }] },
    });
  });

  it('decodes what the encoder produces', () => {
    const task = createTask('q');
    const encoder = new A2AStreamEncoder(task);
    const decoder = new A2AStreamDecoder(task.id);
    const events: TaskEvent[] = [...decoder.decode(JSON.parse(JSON.stringify(encoder.first())))];
    const done = {
      ...task,
      state: 'completed' as const,
      artifacts: [createArtifact([{ type: 'data', content: { n: 1 } }])],
    };
    for (const frame of encoder.encode(status(done, 'completed', true))) {
      events.push(...decoder.decode(JSON.parse(JSON.stringify(frame))));
    }
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    expect(decoder.task).toMatchObject({
      id: task.id,
      state: 'completed',
      artifacts: [{ id: done.artifacts[0]!.id, parts: [{ type: 'data', content: { n: 1 } }] }],
    });
  });
});
