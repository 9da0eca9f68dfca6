// Public API of @agent/transport-sse: anything exported here is public.
export {};
