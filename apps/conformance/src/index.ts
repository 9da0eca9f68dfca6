// Public API of @agent/conformance: anything exported here is public.
export {};
