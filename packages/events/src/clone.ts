/** Deep copies for records of the past: later mutation of a live object must not rewrite them. */
export function snapshot<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    // structuredClone refuses functions and class instances with private state; JSON keeps the data.
    return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
  }
}
