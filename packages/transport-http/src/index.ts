// Public API of @agent/transport-http: anything exported here is public.
export {};
