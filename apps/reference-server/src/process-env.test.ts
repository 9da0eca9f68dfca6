import { PROCESS_ENV, withProcessEnv } from './process-env.js';

describe('process settings', () => {
  it('gives the server two malloc arenas unless the environment says otherwise', () => {
    expect(PROCESS_ENV).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(withProcessEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '2' });
    expect(withProcessEnv({ MALLOC_ARENA_MAX: '4' }).MALLOC_ARENA_MAX).toBe('4');
  });
});
