import { z } from 'zod';

/** `GET /admin/me`: who a token belongs to, its scopes and its namespaces. */
export const WhoAmI = z.object({
  user: z.string(),
  admin: z.boolean(),
  scopes: z.array(z.string()),
  namespaces: z.array(z.object({ name: z.string(), kind: z.string(), role: z.string() })).default([]),
});
export type WhoAmI = z.infer<typeof WhoAmI>;

/** One line about a token's owner: `alice (scopes: read, publish; namespaces: acme (owner))`. */
export function describeWhoAmI(me: WhoAmI): string {
  const namespaces = me.namespaces.map((n) => `${n.name} (${n.role})`).join(', ');
  return `${me.user}${me.admin ? ' (hub admin)' : ''}, scopes: ${me.scopes.join(', ') || 'none'}${namespaces ? `; namespaces: ${namespaces}` : ''}`;
}
