import type { Artifact, Message, Task, TaskEvent } from '@agent/core';

/**
 * Folds a task's stream events into the partial results `sendTaskStream` yields: the Message of a
 * status update that carries one, a Task snapshot after each artifact chunk (artifacts merged so far),
 * and finally the finished Task. Other event types are not results and yield nothing.
 */
export function createPartialResultMapper(sent: Task): (event: TaskEvent) => Task | Message | undefined {
  let working: Task = { ...sent, artifacts: [...sent.artifacts] };
  return (event) => {
    if (event.type === 'task.status') {
      if (event.final) return event.task ?? { ...working, state: event.state };
      working = { ...working, state: event.state };
      return event.message;
    }
    if (event.type === 'task.artifact') {
      working = { ...working, artifacts: mergeArtifact(working.artifacts, event.artifact, event.append) };
      return { ...working, artifacts: [...working.artifacts] };
    }
    return undefined;
  };
}

function mergeArtifact(artifacts: Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const index = artifacts.findIndex((existing) => existing.id === artifact.id);
  if (index === -1) return [...artifacts, artifact];
  const next = [...artifacts];
  const existing = artifacts[index]!;
  next[index] = append ? { ...existing, parts: [...existing.parts, ...artifact.parts] } : artifact;
  return next;
}
