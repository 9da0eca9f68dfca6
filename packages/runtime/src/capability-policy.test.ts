import { ValueError } from '@agent/core';
import { CapabilityPolicy, evaluatePolicy, type Policy } from './capability-policy.js';
import { RunAction } from './run-action.js';
import { RunContext } from './run-context.js';

const action = (...capabilities: string[]) => new RunAction({ kind: 'tool.call', name: 't', capabilities });

describe('CapabilityPolicy', () => {
  const policy = new CapabilityPolicy({
    'records.*': 'require_approval',
    'records.delete': 'deny',
    'records.audit.*': 'allow',
    'files.read': true,
    'net.http': false,
  });

  it('matches exact names first, then the longest wildcard, at any depth', () => {
    expect(policy.evaluate(action('records.delete'))).toMatchObject({
      outcome: 'deny',
      rule: 'records.delete',
    });
    expect(policy.evaluate(action('records.update'))).toMatchObject({
      outcome: 'require_approval',
      rule: 'records.*',
    });
    expect(policy.evaluate(action('records.a.b.c'))).toMatchObject({ outcome: 'require_approval' });
    expect(policy.evaluate(action('records.audit.read'))).toMatchObject({
      outcome: 'allow',
      rule: 'records.audit.*',
    });
    expect(policy.evaluate(action('records'))).toMatchObject({ outcome: 'allow', rule: 'default' });
    expect(policy.evaluate(action('files.read'))).toMatchObject({ outcome: 'allow', rule: 'files.read' });
    expect(policy.evaluate(action('net.http'))).toMatchObject({ outcome: 'deny' });
  });

  it('across capabilities the strongest wins: deny > require_approval > allow', () => {
    expect(policy.evaluate(action('files.read', 'records.update'))).toMatchObject({
      outcome: 'require_approval',
      capability: 'records.update',
    });
    expect(policy.evaluate(action('files.read', 'records.update', 'net.http'))).toMatchObject({
      outcome: 'deny',
      capability: 'net.http',
    });
  });

  it('allows by default; defaultRule changes that, also for actions without capabilities', () => {
    expect(new CapabilityPolicy().evaluate(action())).toMatchObject({ outcome: 'allow', rule: 'default' });
    const closed = new CapabilityPolicy({ 'files.read': 'allow' }, { defaultRule: 'deny' });
    expect(closed.evaluate(action('files.write'))).toMatchObject({ outcome: 'deny', rule: 'default' });
    expect(closed.evaluate(action())).toMatchObject({ outcome: 'deny' });
    expect(closed.evaluate(action('files.read'))).toMatchObject({ outcome: 'allow' });
    expect(
      new CapabilityPolicy({ '*': 'require_approval', 'a.*': 'allow' }).evaluate(action('a.b', 'c')),
    ).toMatchObject({ outcome: 'require_approval', capability: 'c' });
  });

  it('rejects bad rules and patterns', () => {
    expect(() => new CapabilityPolicy({ x: 'maybe' as never })).toThrow(ValueError);
    expect(() => new CapabilityPolicy({ 'a.*.b': 'allow' })).toThrow(/pattern/);
    expect(() => new CapabilityPolicy({ 'a*': 'allow' })).toThrow(/pattern/);
    expect(() => new CapabilityPolicy({}, { defaultRule: 'nope' as never })).toThrow(/defaultRule/);
  });
});

describe('evaluatePolicy', () => {
  const agentPolicy = new CapabilityPolicy({ 'records.delete': 'require_approval' });

  it('task permissions narrow the agent policy but never widen it', async () => {
    const narrower = new RunContext({ permissions: { 'files.*': false, 'records.delete': 'deny' } });
    expect(await evaluatePolicy(agentPolicy, action('files.read'), narrower)).toMatchObject({
      outcome: 'deny',
    });
    expect(await evaluatePolicy(agentPolicy, action('records.delete'), narrower)).toMatchObject({
      outcome: 'deny',
    });
    const wider = new RunContext({ permissions: { 'records.delete': 'allow', 'records.*': true } });
    expect(await evaluatePolicy(agentPolicy, action('records.delete'), wider)).toMatchObject({
      outcome: 'require_approval',
    });
    const metadataOnly = new RunContext({
      permissions: { 'files.read': { note: 'audited' }, 'files.write': { rule: 'require_approval' } },
    });
    expect(await evaluatePolicy(null, action('files.read'), metadataOnly)).toMatchObject({
      outcome: 'allow',
    });
    expect(await evaluatePolicy(null, action('files.write'), metadataOnly)).toMatchObject({
      outcome: 'require_approval',
    });
  });

  it('a throwing or broken policy denies (fail closed)', async () => {
    const throwing: Policy = {
      evaluate() {
        throw new Error('opa down');
      },
    };
    expect(await evaluatePolicy(throwing, action('x'), null)).toMatchObject({
      outcome: 'deny',
      rule: 'error',
      reason: expect.stringContaining('opa down'),
    });
    const broken = { evaluate: async () => ({ outcome: 'perhaps' }) } as unknown as Policy;
    expect(await evaluatePolicy(broken, action('x'), null)).toMatchObject({ outcome: 'deny' });
    const badPermissions = new RunContext({ permissions: { 'a.*.b': 'deny' } });
    expect(await evaluatePolicy(null, action('x'), badPermissions)).toMatchObject({ outcome: 'deny' });
  });
});
