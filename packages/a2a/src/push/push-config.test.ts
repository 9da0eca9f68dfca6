import { ValidationError } from '@agent/core';
import { parsePushConfig, redactUrl, toA2APushConfig, urlPointerOf } from './push-config.js';

function issuesOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return (error.data as { errors: unknown }).errors;
    throw error;
  }
  throw new Error('accepted');
}

describe('parsePushConfig', () => {
  it('reads the A2A 1.0 flat form', () => {
    expect(
      parsePushConfig(
        {
          tenant: 't',
          id: 'c1',
          taskId: 'task-1',
          url: 'https://hooks.example.com/a',
          token: 'tok',
          authentication: { scheme: 'Bearer', credentials: 'cred' },
        },
        'task-1',
      ),
    ).toEqual({
      id: 'c1',
      url: 'https://hooks.example.com/a',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'cred' },
    });
  });

  it('reads the nested pushNotificationConfig form, snake_case names and 0.3 schemes[]', () => {
    expect(
      parsePushConfig(
        {
          task_id: 'task-1',
          push_notification_config: { url: 'https://h.example/', authentication: { schemes: ['Basic'] } },
        },
        'task-1',
      ),
    ).toEqual({ url: 'https://h.example/', authentication: { scheme: 'Basic' } });
    expect(
      parsePushConfig(
        { taskId: 'task-1', pushNotificationConfig: { id: 'x', url: 'https://h.example/', token: 't' } },
        'task-1',
      ),
    ).toEqual({ id: 'x', url: 'https://h.example/', token: 't' });
  });

  it('treats empty optional strings as absent', () => {
    expect(parsePushConfig({ id: '', url: 'https://h.example/', token: '' }, 'task-1')).toEqual({
      url: 'https://h.example/',
    });
  });

  it('lists every problem with its pointer', () => {
    expect(
      issuesOf(() =>
        parsePushConfig(
          {
            taskId: 'other',
            url: 7,
            token: 'a\nb',
            authentication: { scheme: 'Bad Scheme', credentials: 3 },
          },
          'task-1',
          '/params',
        ),
      ),
    ).toEqual([
      { pointer: '/params/taskId', message: 'does not match the task of the request' },
      { pointer: '/params/url', message: 'must be a string' },
      { pointer: '/params/token', message: 'must be printable ASCII (it is sent as a header)' },
      { pointer: '/params/authentication/scheme', message: 'must be an HTTP authentication scheme name' },
      { pointer: '/params/authentication/credentials', message: 'must be a string' },
    ]);
    expect(issuesOf(() => parsePushConfig({}, 'task-1'))).toEqual([
      { pointer: '/url', message: 'is required' },
    ]);
    expect(issuesOf(() => parsePushConfig('x', 'task-1'))).toEqual([
      { pointer: '/', message: 'must be an object' },
    ]);
    expect(issuesOf(() => parsePushConfig({ pushNotificationConfig: 1 }, 'task-1'))).toEqual([
      { pointer: '/pushNotificationConfig', message: 'must be an object' },
      { pointer: '/pushNotificationConfig/url', message: 'is required' },
    ]);
  });

  it('names the URL pointer of either form', () => {
    expect(urlPointerOf({ url: 'x' })).toBe('/url');
    expect(urlPointerOf({ pushNotificationConfig: {} }, '/p')).toBe('/p/pushNotificationConfig/url');
  });
});

describe('toA2APushConfig', () => {
  it('writes camelCase with defaults omitted, echoing token and credentials', () => {
    expect(toA2APushConfig({ id: 'c', taskId: 't', url: 'https://h.example/' })).toEqual({
      id: 'c',
      taskId: 't',
      url: 'https://h.example/',
    });
    expect(
      JSON.stringify(
        toA2APushConfig(
          {
            id: 'c',
            taskId: 't',
            url: 'u',
            token: 'k',
            authentication: { scheme: 'Bearer', credentials: 's' },
          },
          { tenant: 'acme' },
        ),
      ),
    ).toBe(
      '{"tenant":"acme","id":"c","taskId":"t","url":"u","token":"k","authentication":{"scheme":"Bearer","credentials":"s"}}',
    );
  });
});

describe('redactUrl', () => {
  it('drops the query and fragment', () => {
    expect(redactUrl('https://h.example:8443/hook/a?sig=secret#x')).toBe('https://h.example:8443/hook/a');
  });
});
