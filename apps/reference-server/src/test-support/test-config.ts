import { DEFAULT_CONFIG, type ServerConfig } from '../config.js';

/**
 * The defaults on ports the system picks, without a log line per request: a test that is about
 * those lines passes its own logger.
 */
export const TEST_CONFIG: ServerConfig = {
  ...DEFAULT_CONFIG,
  ports: { http: 0, sse: 0, ws: 0, grpc: 0 },
  log: { ...DEFAULT_CONFIG.log, requests: false },
};
