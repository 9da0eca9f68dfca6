// Shared jest settings: @swc/jest transpiles TypeScript (type checking is the separate `typecheck` task).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.test.ts'],
  // NodeNext sources import './x.js'; under jest the file is ./x.ts.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'] },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/jose@[^/]+/node_modules/)?jose/)'],
  testTimeout: 20000,
};
