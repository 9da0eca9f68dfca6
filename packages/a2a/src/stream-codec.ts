/**
 * Native TaskEvents <-> A2A StreamResponses, one codec object per stream. The encoder (server) turns
 * the pipeline's events into the frames an A2A client expects: the Task first, then status and
 * artifact updates, the stream closing after a terminal or interrupted state. The decoder (client)
 * turns any A2A server's frames back into native events ending in exactly one final `task.status`.
 */
import {
  type Artifact,
  type Message,
  type Task,
  type TaskArtifactEvent,
  type TaskEvent,
  type TaskStatusEvent,
  nowIso,
} from '@agent/core';
import { isRecord } from '@agent/core/internal';
import {
  type A2AArtifactUpdate,
  type A2AStatusUpdate,
  type A2AStreamResponse,
  type A2ATask,
  contextIdOf,
  endsA2AStream,
  fromA2AArtifact,
  fromA2AMessage,
  fromA2AState,
  fromA2ATask,
  readRequestObject,
  toA2AArtifact,
  toA2AStatus,
  toA2ATask,
} from './protojson.js';

export class A2AStreamEncoder {
  private readonly ids: { taskId: string; contextId: string };
  private readonly streamed = new Set<string>();

  /** `task`: the task as it stands when the stream starts. */
  constructor(private readonly task: Task) {
    this.ids = { taskId: task.id, contextId: contextIdOf(task) };
  }

  /** The first frame: the Task itself. */
  first(): { task: A2ATask } {
    for (const artifact of this.task.artifacts) this.streamed.add(artifact.id);
    return { task: toA2ATask(this.task) };
  }

  /**
   * The frames for one event: a status becomes a statusUpdate and an artifact an artifactUpdate; the
   * final status first sends the final task's artifacts the stream never carried. Other event types
   * have no A2A frame.
   */
  encode(event: TaskEvent): A2AStreamResponse[] {
    if (event.type === 'task.artifact') return [this.artifactFrame(event as TaskArtifactEvent)];
    if (event.type !== 'task.status') return [];
    const status = event as TaskStatusEvent;
    const frames: A2AStreamResponse[] = [];
    let message = status.message;
    if (status.final && status.task) {
      for (const artifact of status.task.artifacts) {
        if (this.streamed.has(artifact.id)) continue;
        this.streamed.add(artifact.id);
        frames.push({
          artifactUpdate: { ...this.ids, artifact: toA2AArtifact(artifact), lastChunk: true },
        });
      }
      message = lastAgentMessage(status.task) ?? message;
    }
    const update: A2AStatusUpdate = {
      ...this.ids,
      status: toA2AStatus(status.state, this.ids, message, status.timestamp),
    };
    frames.push({ statusUpdate: update });
    return frames;
  }

  private artifactFrame(event: TaskArtifactEvent): A2AStreamResponse {
    this.streamed.add(event.artifact.id);
    const update: A2AArtifactUpdate = { ...this.ids, artifact: toA2AArtifact(event.artifact) };
    if (event.append) update.append = true;
    if (event.last_chunk) update.lastChunk = true;
    return { artifactUpdate: update };
  }
}

function lastAgentMessage(task: Task): Message | undefined {
  const last = task.messages[task.messages.length - 1];
  return last !== undefined && last.role !== 'user' ? last : undefined;
}

export class A2AStreamDecoder {
  private current: Task | undefined;
  private remoteId: string | undefined;
  private finished = false;

  /** `nativeTaskId`: the id the native events and task carry (the server's id when absent). */
  constructor(private readonly nativeTaskId?: string) {}

  /** The accumulated task so far. */
  get task(): Task | undefined {
    return this.current;
  }

  /** The A2A server's id of the task, once a frame named it. */
  get remoteTaskId(): string | undefined {
    return this.remoteId;
  }

  /** True once the one final event was produced; later frames decode to nothing. */
  get done(): boolean {
    return this.finished;
  }

  /** The native events for one StreamResponse (the JSON-RPC `result` or the REST frame). */
  decode(frame: unknown): TaskEvent[] {
    if (this.finished) return [];
    const record = readRequestObject(frame);
    if (record.task !== undefined) return this.onTask(record.task);
    if (record.statusUpdate !== undefined)
      return this.onStatus(readRequestObject(record.statusUpdate, '/statusUpdate'));
    if (record.artifactUpdate !== undefined) {
      return this.onArtifact(readRequestObject(record.artifactUpdate, '/artifactUpdate'));
    }
    if (record.message !== undefined) return this.onMessage(record.message);
    return [];
  }

  private ensureTask(remoteId: unknown, contextId: unknown): Task {
    if (typeof remoteId === 'string' && remoteId !== '') this.remoteId ??= remoteId;
    if (!this.current) {
      this.current = {
        id: this.nativeTaskId ?? this.remoteId ?? '',
        state: 'submitted',
        messages: [],
        artifacts: [],
        metadata: typeof contextId === 'string' && contextId !== '' ? { session_id: contextId } : {},
        created_at: nowIso(),
      };
    }
    return this.current;
  }

  private statusEvent(timestamp: unknown, message?: Message): TaskEvent[] {
    const task = this.current!;
    const final = endsA2AStream(task.state);
    const event: TaskStatusEvent = {
      type: 'task.status',
      task_id: task.id,
      state: task.state,
      final,
      timestamp: typeof timestamp === 'string' && timestamp !== '' ? timestamp : nowIso(),
    };
    if (message) event.message = message;
    if (final) {
      event.task = structuredClone(task);
      this.finished = true;
    }
    return [event];
  }

  private onTask(json: unknown): TaskEvent[] {
    const decoded = fromA2ATask(json);
    this.remoteId ??= decoded.id;
    const previous = this.current;
    this.current = { ...decoded, id: this.nativeTaskId ?? decoded.id };
    if (previous) this.current.created_at = previous.created_at;
    const status = isRecord(json) && isRecord(json.status) ? json.status : {};
    return this.statusEvent(status.timestamp);
  }

  private onStatus(update: Record<string, unknown>): TaskEvent[] {
    const task = this.ensureTask(update.taskId, update.contextId);
    const status = readRequestObject(update.status, '/statusUpdate/status');
    task.state = fromA2AState(status.state, '/statusUpdate/status/state');
    let message: Message | undefined;
    if (status.message !== undefined && status.message !== null) {
      message = fromA2AMessage(status.message, '/statusUpdate/status/message').message;
      if (!task.messages.some((existing) => existing.id === message!.id)) task.messages.push(message);
    }
    return this.statusEvent(status.timestamp, message);
  }

  private onArtifact(update: Record<string, unknown>): TaskEvent[] {
    const task = this.ensureTask(update.taskId, update.contextId);
    const artifact = fromA2AArtifact(update.artifact, '/artifactUpdate/artifact');
    const append = update.append === true;
    mergeArtifact(task, artifact, append);
    const event: TaskArtifactEvent = {
      type: 'task.artifact',
      task_id: task.id,
      artifact,
      append,
      last_chunk: update.lastChunk === true,
      timestamp: nowIso(),
    };
    return [event];
  }

  private onMessage(json: unknown): TaskEvent[] {
    const decoded = fromA2AMessage(json, '/message');
    const task = this.ensureTask(decoded.taskId, decoded.contextId);
    task.messages.push(decoded.message);
    task.state = 'completed';
    return this.statusEvent(undefined, decoded.message);
  }
}

function mergeArtifact(task: Task, artifact: Artifact, append: boolean): void {
  const index = task.artifacts.findIndex((existing) => existing.id === artifact.id);
  if (index < 0) {
    task.artifacts.push(structuredClone(artifact));
    return;
  }
  const existing = task.artifacts[index]!;
  task.artifacts[index] = append
    ? { ...existing, parts: [...existing.parts, ...structuredClone(artifact.parts)] }
    : structuredClone(artifact);
}
