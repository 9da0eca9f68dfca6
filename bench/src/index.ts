// Public API of @agent/bench: anything exported here is public.
export {};
