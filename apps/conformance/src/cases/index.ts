import type { ConformanceCase } from '../context.js';
import { a2aCases } from './a2a-cases.js';
import { httpCases } from './http-cases.js';
import { registryCases } from './registry-cases.js';
import { serverCases } from './server-cases.js';
import { taskApiCases } from './task-api-cases.js';
import { taskCases } from './task-cases.js';

export const ALL_CASES: readonly ConformanceCase[] = [
  ...httpCases,
  ...taskCases,
  ...taskApiCases,
  ...registryCases,
  ...a2aCases,
  // Last: server.stop stops the server.
  ...serverCases,
];
