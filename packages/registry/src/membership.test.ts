import { AlreadyExistsError, NotFoundError, UnavailableError, ValueError, type AgentCard } from '@agent/core';
import type { RegistryEntryView } from './entry-view.js';
import { DEFAULT_HEARTBEAT_MS, RegistryMembership } from './membership.js';
import type { RegistryCallOptions, RegistryClient } from './registry-client.js';
import { card, entryOf } from './test-support/cards.js';

type Step = (name: string, options?: RegistryCallOptions) => Promise<RegistryEntryView>;

/** A RegistryClient stand-in: each method runs a scripted step (default: success) and is recorded. */
class ScriptedClient {
  readonly log: string[] = [];
  register: jest.Mock;
  replace: jest.Mock;
  heartbeat: jest.Mock;
  deregister: jest.Mock;

  constructor(readonly agent: AgentCard) {
    const ok: Step = () => Promise.resolve(entryOf(this.agent, 30));
    this.register = jest.fn((c: AgentCard, o?: RegistryCallOptions) => this.run('register', ok, c.name, o));
    this.replace = jest.fn((c: AgentCard, o?: RegistryCallOptions) => this.run('replace', ok, c.name, o));
    this.heartbeat = jest.fn((n: string, o?: RegistryCallOptions) => this.run('heartbeat', ok, n, o));
    this.deregister = jest.fn((n: string, o?: RegistryCallOptions) => this.run('deregister', ok, n, o));
  }

  /** Scripted outcomes per method, used in order; the default afterwards. */
  readonly script: Record<string, Step[]> = {};

  private run(method: string, fallback: Step, name: string, options?: RegistryCallOptions) {
    this.log.push(`${method} ${name}`);
    const step = this.script[method]?.shift() ?? fallback;
    return step(name, options);
  }

  asClient(): RegistryClient {
    return this as unknown as RegistryClient;
  }
}

const fail =
  (error: Error): Step =>
  () =>
    Promise.reject(error);

/** Polls `check` until it holds (bounded), without asserting anything about time. */
async function eventually(check: () => boolean, what: string, bound = 5000): Promise<void> {
  const end = Date.now() + bound;
  while (!check()) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => process.off('unhandledRejection', onUnhandled));
afterEach(() => expect(unhandled).toEqual([]));

describe('RegistryMembership', () => {
  it('registers on start, heartbeats by the name it got, deregisters on stop', async () => {
    const client = new ScriptedClient(card('alpha'));
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      heartbeatMs: 1,
    });
    await membership.start();
    expect(membership.running).toBe(true);
    expect(membership.registeredName).toBe('alpha');
    await eventually(() => client.heartbeat.mock.calls.length >= 3, 'three heartbeats');
    await membership.stop();
    expect(membership.running).toBe(false);
    expect(client.log[0]).toBe('register alpha');
    expect(client.log.at(-1)).toBe('deregister alpha');
    const beats = client.heartbeat.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client.heartbeat.mock.calls.length).toBe(beats);
  });

  it('reads the card at every registration (a port-0 server knows its URL only after start)', async () => {
    const client = new ScriptedClient(card('alpha'));
    let port = 1;
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => card('alpha', { url: `http://127.0.0.1:${port}` }),
      heartbeatMs: 1,
    });
    await membership.start();
    port = 2;
    client.script.heartbeat = [fail(new NotFoundError('Agent alpha is not registered'))];
    await eventually(() => client.register.mock.calls.length === 2, 're-registration');
    await membership.stop();
    expect(client.register.mock.calls.map(([c]) => (c as AgentCard).url)).toEqual([
      'http://127.0.0.1:1',
      'http://127.0.0.1:2',
    ]);
  });

  it('replaces its own entry when the name is taken (a restart within the ttl)', async () => {
    const client = new ScriptedClient(card('alpha'));
    client.script.register = [fail(new AlreadyExistsError('Agent alpha is already registered'))];
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    await membership.start();
    expect(client.log).toEqual(['register alpha', 'replace alpha']);
    await membership.stop();
  });

  it('registers again when the taken entry expired between the 409 and the replace', async () => {
    const client = new ScriptedClient(card('alpha'));
    client.script.register = [fail(new AlreadyExistsError('taken'))];
    client.script.replace = [fail(new NotFoundError('gone'))];
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    await membership.start();
    expect(client.log).toEqual(['register alpha', 'replace alpha', 'register alpha']);
    await membership.stop();
  });

  it("rejects start with the 409 when the name is someone else's, and stays stopped", async () => {
    const client = new ScriptedClient(card('alpha'));
    const taken = new AlreadyExistsError('Agent alpha is already registered');
    client.script.register = [fail(taken), fail(new AlreadyExistsError('again'))];
    client.script.replace = [fail(new NotFoundError('not yours'))];
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    await expect(membership.start()).rejects.toBe(taken);
    expect(membership.running).toBe(false);
    await membership.stop();
    expect(client.deregister).not.toHaveBeenCalled();
  });

  it('rejects start when the registry cannot be reached', async () => {
    const client = new ScriptedClient(card('alpha'));
    const down = new UnavailableError('connection refused');
    client.script.register = [fail(down)];
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    await expect(membership.start()).rejects.toBe(down);
    // A later start may succeed.
    await membership.start();
    expect(membership.running).toBe(true);
    await membership.stop();
  });

  it('sends every heartbeat failure to onError and keeps going; a 404 re-registers', async () => {
    const client = new ScriptedClient(card('alpha'));
    const errors: unknown[] = [];
    const down = new UnavailableError('registry down');
    client.script.heartbeat = [fail(down), fail(down), fail(new NotFoundError('restarted'))];
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      heartbeatMs: 1,
      onError: (error) => errors.push(error),
    });
    await membership.start();
    await eventually(() => client.register.mock.calls.length === 2, 're-registration after the 404');
    await eventually(() => client.heartbeat.mock.calls.length >= 5, 'heartbeats after re-registering');
    await membership.stop();
    expect(errors).toEqual([down, down]);
  });

  it('reports a failed re-registration to onError and tries again at the next heartbeat', async () => {
    const client = new ScriptedClient(card('alpha'));
    const errors: unknown[] = [];
    const down = new UnavailableError('still starting');
    client.script.heartbeat = [fail(new NotFoundError('gone'))];
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      heartbeatMs: 1,
      onError: (error) => errors.push(error),
    });
    await membership.start();
    client.script.register = [fail(down)];
    client.script.heartbeat = [fail(new NotFoundError('gone')), fail(new NotFoundError('gone'))];
    await eventually(() => client.register.mock.calls.length >= 3, 'a second re-registration');
    await membership.stop();
    expect(errors).toContain(down);
  });

  it('never lets an onError that throws become an unhandled rejection', async () => {
    const client = new ScriptedClient(card('alpha'));
    client.script.heartbeat = [fail(new UnavailableError('down')), fail(new UnavailableError('down'))];
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      heartbeatMs: 1,
      onError: () => {
        throw new Error('onError broke');
      },
    });
    await membership.start();
    await eventually(() => client.heartbeat.mock.calls.length >= 4, 'heartbeats past the failures');
    await membership.stop();
  });

  it('stop is idempotent, deregisters once, and ignores an entry that is already gone', async () => {
    const client = new ScriptedClient(card('alpha'));
    const errors: unknown[] = [];
    client.script.deregister = [fail(new NotFoundError('expired'))];
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      onError: (error) => errors.push(error),
    });
    await membership.start();
    await Promise.all([membership.stop(), membership.stop()]);
    await membership.stop();
    expect(client.deregister).toHaveBeenCalledTimes(1);
    expect(errors).toEqual([]);
    await new RegistryMembership({ client: client.asClient(), card: () => client.agent }).stop();
  });

  it('a deregistration that fails goes to onError; stop still resolves', async () => {
    const client = new ScriptedClient(card('alpha'));
    const errors: unknown[] = [];
    const down = new UnavailableError('down');
    client.script.deregister = [fail(down)];
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      onError: (error) => errors.push(error),
    });
    await membership.start();
    await expect(membership.stop()).resolves.toBeUndefined();
    expect(errors).toEqual([down]);
  });

  it('stop does not wait out a hanging heartbeat: it aborts it, then deregisters', async () => {
    const client = new ScriptedClient(card('alpha'));
    let aborted = false;
    client.script.heartbeat = [
      (_name, options) =>
        new Promise((_resolve, reject) => {
          options?.signal?.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    ];
    const errors: unknown[] = [];
    const membership = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      heartbeatMs: 1,
      onError: (error) => errors.push(error),
    });
    await membership.start();
    await eventually(() => client.heartbeat.mock.calls.length === 1, 'the hanging heartbeat');
    await membership.stop();
    expect(aborted).toBe(true);
    expect(client.log.at(-1)).toBe('deregister alpha');
    // The abandoned heartbeat is no failure to report.
    expect(errors).toEqual([]);
  });

  it('a stop during start abandons the registration: start rejects, nothing is left to deregister', async () => {
    const client = new ScriptedClient(card('alpha'));
    client.script.register = [
      (_name, options) =>
        new Promise((_resolve, reject) => {
          options?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    ];
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    const started = membership.start();
    const stopped = membership.stop();
    await expect(started).rejects.toThrow('aborted');
    await expect(stopped).resolves.toBeUndefined();
    expect(client.deregister).not.toHaveBeenCalled();
    expect(membership.running).toBe(false);
  });

  it('heartbeats at a third of the lifetime the registry reports, 10 s when it reports none', async () => {
    const client = new ScriptedClient(card('alpha'));
    client.script.register = [() => Promise.resolve(entryOf(client.agent, 3000))];
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    expect(membership.heartbeatMs).toBe(DEFAULT_HEARTBEAT_MS);
    await membership.start();
    expect(membership.heartbeatMs).toBe(1000);
    await membership.stop();
    const fixed = new RegistryMembership({
      client: client.asClient(),
      card: () => client.agent,
      heartbeatMs: 250,
    });
    await fixed.start();
    expect(fixed.heartbeatMs).toBe(250);
    await fixed.stop();
  });

  it('does not keep the process alive: its timer is unref()ed', async () => {
    const client = new ScriptedClient(card('alpha'));
    const unref = jest.spyOn(
      Object.getPrototypeOf(setTimeout(() => undefined, 0)) as NodeJS.Timeout,
      'unref',
    );
    const membership = new RegistryMembership({ client: client.asClient(), card: () => client.agent });
    await membership.start();
    expect(unref).toHaveBeenCalled();
    unref.mockRestore();
    await membership.stop();
  });

  it('checks its options', () => {
    const client = new ScriptedClient(card('alpha')).asClient();
    const cardFn = (): AgentCard => card('a');
    expect(() => new RegistryMembership({ client, card: cardFn, every: 1 } as never)).toThrow(ValueError);
    expect(() => new RegistryMembership({ client: {} as never, card: cardFn })).toThrow(/client/);
    expect(() => new RegistryMembership({ client, card: card('a') as never })).toThrow(/card/);
    expect(() => new RegistryMembership({ client, card: cardFn, heartbeatMs: 0 })).toThrow(/heartbeatMs/);
    expect(() => new RegistryMembership({ client, card: cardFn, onError: 'log' as never })).toThrow(
      /onError/,
    );
  });
});
