// @agent/transport-http/internal: plumbing shared with sibling packages' HTTP clients (not semver-stable).
export { CallSignal, HttpSession, type HttpSessionOptions } from './http-session.js';
