import { and, desc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { teamInvitations } from '../schema/security.js';
import { namespaces, users } from '../schema/teams.js';
import type { Role } from './teams.js';

// Table family `team_invitations` (src/schema/security.ts): a team owner's invitation, which only the
// invitee's acceptance turns into a membership (SPEC 2.3).

export type InvitationRow = typeof teamInvitations.$inferSelect;

/** An invitation with its team's and invitee's names. */
export interface InvitationView {
  id: number;
  team: string;
  user: string;
  role: Role;
  status: string;
  invitedBy: string | null;
  createdAt: Date;
}

/** Creates (or re-roles) the pending invitation of `userId` to `namespaceId`. */
export async function upsertInvitation(
  tx: Executor,
  input: { namespaceId: number; userId: number; role: Role; invitedBy: number | null; at: Date },
): Promise<InvitationRow> {
  const [row] = await tx
    .insert(teamInvitations)
    .values({ ...input, createdAt: input.at })
    .onConflictDoUpdate({
      target: [teamInvitations.namespaceId, teamInvitations.userId],
      targetWhere: sql`${teamInvitations.status} = 'pending'`,
      set: { role: input.role, invitedBy: input.invitedBy, createdAt: input.at },
    })
    .returning();
  if (!row) throw new Error('insert into team_invitations returned no row');
  return row;
}

/** A pending invitation by id. */
export async function findPendingInvitation(db: Executor, id: number): Promise<InvitationRow | undefined> {
  const [row] = await db
    .select()
    .from(teamInvitations)
    .where(and(eq(teamInvitations.id, id), eq(teamInvitations.status, 'pending')))
    .limit(1);
  return row;
}

/** Marks an invitation decided (accepted, declined or withdrawn). */
export async function decideInvitation(
  tx: Executor,
  id: number,
  status: 'accepted' | 'declined' | 'withdrawn',
  at: Date,
): Promise<void> {
  await tx.update(teamInvitations).set({ status, decidedAt: at }).where(eq(teamInvitations.id, id));
}

/** Withdraws every pending invitation of a user to a team (when they join or are removed). */
export async function withdrawInvitations(tx: Executor, namespaceId: number, userId: number, at: Date) {
  await tx
    .update(teamInvitations)
    .set({ status: 'withdrawn', decidedAt: at })
    .where(
      and(
        eq(teamInvitations.namespaceId, namespaceId),
        eq(teamInvitations.userId, userId),
        eq(teamInvitations.status, 'pending'),
      ),
    );
}

/** Pending invitations, of one user or to one team, newest first. */
export async function listPendingInvitations(
  db: Executor,
  by: { userId: number } | { namespaceId: number },
): Promise<InvitationView[]> {
  const invitee = users;
  const rows = await db
    .select({
      id: teamInvitations.id,
      team: namespaces.name,
      user: invitee.name,
      role: teamInvitations.role,
      status: teamInvitations.status,
      invitedBy: sql<string | null>`(select u.name from users u where u.id = ${teamInvitations.invitedBy})`,
      createdAt: teamInvitations.createdAt,
    })
    .from(teamInvitations)
    .innerJoin(namespaces, eq(namespaces.id, teamInvitations.namespaceId))
    .innerJoin(invitee, eq(invitee.id, teamInvitations.userId))
    .where(
      and(
        eq(teamInvitations.status, 'pending'),
        'userId' in by
          ? eq(teamInvitations.userId, by.userId)
          : eq(teamInvitations.namespaceId, by.namespaceId),
      ),
    )
    .orderBy(desc(teamInvitations.id));
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}
