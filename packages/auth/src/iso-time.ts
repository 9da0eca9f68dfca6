/** Seconds since the epoch (a JWT NumericDate) as a UTC ISO timestamp. */
export function numericDateToIso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
