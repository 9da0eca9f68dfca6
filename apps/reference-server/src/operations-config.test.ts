/** The operations settings: log level and format, request logs, metrics and limits. */
import { loadConfig, parseConfigFile } from './config.js';
import { createServerLogger, prettyLine, turnBufferedWriter } from './logging.js';

describe('operations settings', () => {
  it('defaults to JSON logs at info with request lines, no metrics, 32 tasks at once and no rate limit', () => {
    const config = loadConfig({});
    expect(config.log).toEqual({ level: 'info', format: 'json', requests: true });
    expect(config.metrics).toEqual({ enabled: false, token: null });
    expect(config.limits).toEqual({ maxConcurrentTasks: 32 });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      AGENT_LOG_LEVEL: 'warn',
      AGENT_LOG_FORMAT: 'pretty',
      AGENT_LOG_REQUESTS: '0',
      AGENT_METRICS: '1',
      AGENT_METRICS_TOKEN: 'scrape-me',
      AGENT_MAX_CONCURRENT_TASKS: '16',
      AGENT_MAX_CONCURRENT_TASKS_PER_CALLER: '4',
      AGENT_RATE_LIMIT_PER_SECOND: '2.5',
      AGENT_RATE_LIMIT_BURST: '10',
    });
    expect(config.log).toEqual({ level: 'warn', format: 'pretty', requests: false });
    expect(config.metrics).toEqual({ enabled: true, token: 'scrape-me' });
    expect(config.limits).toEqual({
      maxConcurrentTasks: 16,
      maxConcurrentTasksPerCaller: 4,
      rateLimit: { perSecond: 2.5, burst: 10 },
    });
  });

  it('takes the same settings from the file', () => {
    const file = parseConfigFile({
      log: { level: 'debug', format: 'pretty', requests: false },
      metrics: { enabled: true },
      limits: { maxConcurrentTasks: 3, maxConcurrentTasksPerCaller: 2, rateLimit: { perSecond: 1 } },
    });
    expect(file.limits).toEqual({
      maxConcurrentTasks: 3,
      maxConcurrentTasksPerCaller: 2,
      rateLimit: { perSecond: 1 },
    });
    expect(() => parseConfigFile({ limits: { rateLimit: { burst: 2 } } })).toThrow(/perSecond/);
    expect(() => parseConfigFile({ log: { format: 'xml' } })).toThrow(/\/log\/format/);
  });

  it('refuses bad values, naming the variable and never echoing the token', () => {
    const refusals: [Record<string, string>, RegExp][] = [
      [{ AGENT_LOG_LEVEL: 'loud' }, /AGENT_LOG_LEVEL/],
      [{ AGENT_LOG_FORMAT: 'xml' }, /AGENT_LOG_FORMAT/],
      [{ AGENT_MAX_CONCURRENT_TASKS: '0' }, /AGENT_MAX_CONCURRENT_TASKS/],
      [{ AGENT_MAX_CONCURRENT_TASKS_PER_CALLER: '0' }, /AGENT_MAX_CONCURRENT_TASKS_PER_CALLER/],
      [{ AGENT_RATE_LIMIT_PER_SECOND: '-1' }, /AGENT_RATE_LIMIT_PER_SECOND/],
      [{ AGENT_RATE_LIMIT_PER_SECOND: '0' }, /AGENT_RATE_LIMIT_PER_SECOND/],
      [{ AGENT_RATE_LIMIT_BURST: '5' }, /AGENT_RATE_LIMIT_BURST .*needs AGENT_RATE_LIMIT_PER_SECOND/],
      [{ AGENT_METRICS_TOKEN: 'secret-token-x' }, /AGENT_METRICS_TOKEN .*AGENT_METRICS=1/],
    ];
    for (const [env, message] of refusals) {
      let error: Error | undefined;
      try {
        loadConfig(env);
      } catch (caught) {
        error = caught as Error;
      }
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toContain('secret-token-x');
    }
  });
});

describe('log formats', () => {
  it('writes JSON lines, or one readable line with the same fields', () => {
    const json: string[] = [];
    createServerLogger({ level: 'info', format: 'json' }, (line) => json.push(line)).info(
      { operation: 'send_task', status: 'ok' },
      'request',
    );
    expect(JSON.parse(json[0]!)).toMatchObject({
      level: 30,
      msg: 'request',
      operation: 'send_task',
      status: 'ok',
    });

    const pretty: string[] = [];
    const logger = createServerLogger({ level: 'info', format: 'pretty' }, (line) => pretty.push(line));
    logger.debug({ dropped: true }, 'below the level');
    logger.error({ err: new TypeError('bad\nthing'), error_id: 'e1', tenant: '' }, 'Unexpected error');
    expect(pretty).toHaveLength(1);
    expect(pretty[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} ERROR Unexpected error err="TypeError: bad\\nthing" error_id=e1 tenant=""$/,
    );
  });

  it('writes the lines of one event-loop turn together, in order, in one write', async () => {
    const writes: string[] = [];
    const write = turnBufferedWriter({ write: (text: string) => writes.push(text) });
    write('first');
    write('second');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['first\nsecond\n']);
    write('third');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['first\nsecond\n', 'third\n']);
  });

  it('keeps values with spaces, quotes or structure on the one line', () => {
    const line = prettyLine(
      'info',
      { a: 'two words', b: 3, c: { d: [1] }, e: undefined },
      'm\nn',
      new Date(0),
    );
    expect(line).toBe('00:00:00.000 INFO  m n a="two words" b=3 c={"d":[1]}');
  });
});
