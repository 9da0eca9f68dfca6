// Public API of @agent/auth/testing: helpers for tests, never for production code.
export { mintJwt, signJwtInput, epochSeconds, type MintJwtOptions, type MintAlgorithm } from './mint-jwt.js';
