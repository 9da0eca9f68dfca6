// Public API of @agent/runtime: anything exported here is public.
export {};
