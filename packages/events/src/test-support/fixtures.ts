// The fixtures live beside the published store suites, which use them too.
export * from '../testing/fixtures.js';
