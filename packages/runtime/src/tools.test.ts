import {
  ActionDeniedError,
  AgentError,
  ApprovalRequiredError,
  ValidationError,
  ValueError,
  type JsonObject,
} from '@agent/core';
import { Agent } from './agent.js';
import { approve, deny, type ApprovalHandler, type ApprovalRequest } from './approvals.js';
import { RunAction, previewArtifact } from './run-action.js';
import { RunContext } from './run-context.js';
import type { RuntimeEventInput } from './run-events.js';
import { types } from './test-support/helpers.js';

function setup(
  options: {
    policy?: ConstructorParameters<typeof Agent>[0]['policy'];
    approvalHandler?: ApprovalHandler;
  } = {},
) {
  const effects: JsonObject[] = [];
  const agent = new Agent({ card: { name: 'tools' }, ...options });
  agent.registerTool({
    name: 'delete_record',
    description: 'Deletes a record',
    parameters: {
      type: 'object',
      properties: { id: { type: 'string', minLength: 1 } },
      required: ['id'],
      additionalProperties: false,
    },
    capabilities: ['records.delete'],
    actionBuilder: (args) =>
      new RunAction({
        kind: 'resource.update',
        name: 'delete_record',
        payload: { arguments: args },
        capabilities: ['records.write'],
      }).withArtifacts([previewArtifact(`would delete ${String(args.id)}`)]),
    handler: (args) => {
      effects.push(args);
      return { deleted: args.id };
    },
  });
  const events: RuntimeEventInput[] = [];
  const call = (args: JsonObject, context: RunContext | null = null) =>
    agent.callToolInContext('delete_record', context, args, { onEvent: (e) => events.push(e) });
  return { agent, effects, events, call };
}

describe('tools and the action authorization flow', () => {
  it('allow: the tool runs, with requested → policy → started → completed', async () => {
    const { effects, events, call } = setup();
    await expect(call({ id: 'r1' })).resolves.toEqual({ deleted: 'r1' });
    expect(effects).toEqual([{ id: 'r1' }]);
    expect(types(events)).toEqual([
      'action.requested',
      'action.policy',
      'action.started',
      'action.completed',
    ]);
    const requested = events[0] as unknown as {
      action: {
        capabilities: string[];
        kind: string;
        artifacts: { kind: string; action_id: string }[];
        action_id: string;
      };
    };
    // The builder's action keeps its kind and gets the tool's declared capability merged in.
    expect(requested.action.kind).toBe('resource.update');
    expect(requested.action.capabilities).toEqual(['records.delete', 'records.write']);
    expect(requested.action.artifacts[0]).toMatchObject({
      kind: 'preview',
      action_id: requested.action.action_id,
    });
    expect(events[3]).toMatchObject({ result: { deleted: 'r1' } });
  });

  it('deny: ActionDeniedError, action.denied, no side effect', async () => {
    const { effects, events, call } = setup({ policy: { 'records.*': 'deny' } });
    const error = await call({ id: 'r1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ActionDeniedError);
    expect(effects).toEqual([]);
    expect(types(events)).toEqual(['action.requested', 'action.policy', 'action.denied']);
    expect(events[1]).toMatchObject({ decision: { outcome: 'deny', rule: 'records.*' } });
  });

  it('approval granted: the handler sees the serializable request with its preview, then the tool runs', async () => {
    const seen: ApprovalRequest[] = [];
    const { effects, events, call } = setup({
      policy: { 'records.delete': 'require_approval' },
      approvalHandler: (request) => {
        seen.push(request);
        return approve(request, 'alice');
      },
    });
    await expect(call({ id: 'r2' })).resolves.toEqual({ deleted: 'r2' });
    expect(effects).toEqual([{ id: 'r2' }]);
    expect(types(events)).toEqual([
      'action.requested',
      'action.policy',
      'approval.required',
      'approval.decided',
      'action.started',
      'action.completed',
    ]);
    expect(JSON.parse(JSON.stringify(seen[0]))).toEqual(seen[0]);
    expect(seen[0].action.artifacts[0].kind).toBe('preview');
    expect(events[3]).toMatchObject({
      decision: { approved: true, decided_by: 'alice', request_id: seen[0].request_id },
    });
  });

  it('approval denied: ActionDeniedError and no side effect', async () => {
    const { effects, events, call } = setup({
      policy: { 'records.delete': 'require_approval' },
      approvalHandler: (request) => deny(request, 'bob', 'not today'),
    });
    await expect(call({ id: 'r3' })).rejects.toThrow(/denied by bob: not today/);
    expect(effects).toEqual([]);
    expect(types(events)).toEqual([
      'action.requested',
      'action.policy',
      'approval.required',
      'approval.decided',
      'action.denied',
    ]);
  });

  it('a decision for another request id, or a malformed one, is a denial', async () => {
    const other = setup({
      policy: { 'records.delete': 'require_approval' },
      approvalHandler: () => ({ request_id: 'other', approved: true, decided_by: 'x' }),
    });
    await expect(other.call({ id: 'r' })).rejects.toBeInstanceOf(ActionDeniedError);
    const junk = setup({
      policy: { 'records.delete': 'require_approval' },
      approvalHandler: () => 'yes' as never,
    });
    await expect(junk.call({ id: 'r' })).rejects.toBeInstanceOf(ActionDeniedError);
    expect([...other.effects, ...junk.effects]).toEqual([]);
  });

  it('no handler: ApprovalRequiredError carrying the JSON-serializable request', async () => {
    const { effects, events, call } = setup({ policy: { 'records.delete': 'require_approval' } });
    const error = (await call({ id: 'r4' }).catch((e: unknown) => e)) as ApprovalRequiredError;
    expect(error).toBeInstanceOf(ApprovalRequiredError);
    expect(error.code).toBe('APPROVAL_REQUIRED');
    expect(error.request!.action).toMatchObject({
      name: 'delete_record',
      payload: { arguments: { id: 'r4' } },
    });
    const wire = JSON.parse(JSON.stringify(error.toJSON()));
    expect(wire.data.request).toEqual(error.request);
    // A client rebuilding the error from the wire gets the same request back.
    const rebuilt = AgentError.fromJSON(wire) as ApprovalRequiredError;
    expect(rebuilt).toBeInstanceOf(ApprovalRequiredError);
    expect(rebuilt.request).toEqual(error.request);
    expect(effects).toEqual([]);
    expect(types(events)).toEqual(['action.requested', 'action.policy', 'approval.required']);
  });

  it('task permissions narrow the agent policy', async () => {
    const { effects, call } = setup();
    await expect(
      call({ id: 'r5' }, new RunContext({ permissions: { 'records.write': false } })),
    ).rejects.toBeInstanceOf(ActionDeniedError);
    expect(effects).toEqual([]);
  });

  it('validates arguments before the action is prepared, with every failure named', async () => {
    const { effects, events, call } = setup();
    const error = (await call({ id: '', extra: 1 }).catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect((error.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer).sort()).toEqual([
      '/extra',
      '/id',
    ]);
    expect(events).toEqual([]);
    expect(effects).toEqual([]);
    await expect(call([] as never)).rejects.toBeInstanceOf(ValidationError);
  });

  it('re-validates after approval: a handler that tampers with the request cannot change what runs', async () => {
    const { effects, call } = setup({
      policy: { 'records.delete': 'require_approval' },
      approvalHandler: (request) => {
        (request.action.payload.arguments as JsonObject).id = 'someone-else';
        return approve(request);
      },
    });
    await call({ id: 'mine' });
    expect(effects).toEqual([{ id: 'mine' }]);
  });

  it('a tool that throws emits action.failed and rejects with its error', async () => {
    const agent = new Agent({ card: { name: 'x' } });
    agent.registerTool({ name: 'boom', handler: () => Promise.reject(new Error('disk full')) });
    const events: RuntimeEventInput[] = [];
    await expect(
      agent.callToolInContext('boom', null, {}, { onEvent: (e) => events.push(e) }),
    ).rejects.toThrow('disk full');
    expect(types(events)).toEqual(['action.requested', 'action.policy', 'action.started', 'action.failed']);
    expect(events[3]).toMatchObject({ error: { code: 'INTERNAL', message: 'disk full' } });
  });

  it('rejects bad tool definitions and unknown tools', async () => {
    const agent = new Agent({ card: { name: 'x' } });
    expect(() => agent.registerTool({ name: 'has space', handler: () => 1 })).toThrow(ValueError);
    expect(() => agent.registerTool({ name: 'a', handler: 1 as never })).toThrow(/handler/);
    expect(() => agent.registerTool({ name: 'a', parameters: { type: 'nope' }, handler: () => 1 })).toThrow(
      /schema/,
    );
    expect(() => agent.registerTool({ name: 'a', capabilities: [''], handler: () => 1 })).toThrow(
      /capabilities/,
    );
    agent.registerTool({ name: 'a', handler: () => 1 });
    expect(() => agent.registerTool({ name: 'a', handler: () => 1 })).toThrow(/already/);
    await expect(agent.callToolInContext('missing', null)).rejects.toThrow(/Unknown tool/);
    await expect(agent.callToolInContext('a', { permissions: 'x' })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('approval handler failures', () => {
  it('a throwing approval handler is a denial: nothing runs', async () => {
    let ran = false;
    const agent = new Agent({
      card: { name: 'x' },
      policy: { 'x.*': 'require_approval' },
      approvalHandler: () => {
        throw new Error('reviewer offline');
      },
    });
    agent.registerTool({ name: 't', capabilities: ['x.y'], handler: () => (ran = true) });
    const events: RuntimeEventInput[] = [];
    await expect(agent.callToolInContext('t', null, {}, { onEvent: (e) => events.push(e) })).rejects.toThrow(
      /approval handler failed: reviewer offline/,
    );
    expect(ran).toBe(false);
    expect(types(events)).toEqual([
      'action.requested',
      'action.policy',
      'approval.required',
      'action.denied',
    ]);
  });

  it('callToolInContext honours its abort signal while awaiting approval', async () => {
    const controller = new AbortController();
    const agent = new Agent({
      card: { name: 'x' },
      policy: { 'x.*': 'require_approval' },
      approvalHandler: () => new Promise(() => undefined),
    });
    agent.registerTool({ name: 't', capabilities: ['x.y'], handler: () => 1 });
    const pending = agent.callToolInContext(
      't',
      null,
      {},
      {
        signal: controller.signal,
        onEvent: (e) => e.type === 'approval.required' && controller.abort('caller left'),
      },
    );
    await expect(pending).rejects.toMatchObject({ code: 'TASK_CANCELED' });
  });
});
