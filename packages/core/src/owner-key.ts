/**
 * One string per owner and id, for the maps that track tasks and requests by both. Each part's
 * length comes first, so no tenant or principal can make another's key whatever characters it
 * holds; half the cost of a JSON array, and such a key is made several times per task.
 */
export function ownerKey(
  owner: { readonly tenant: string; readonly principal_id: string },
  id: string,
): string {
  return `${owner.tenant.length}:${owner.tenant}${owner.principal_id.length}:${owner.principal_id}${id}`;
}
