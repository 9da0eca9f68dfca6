// Public API of @agent/events: anything exported here is public.
export {};
