import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { Tables } from './schema.js';

/**
 * The sandbox wholesaler's state in the gateway's database: one JSON document per tenant with a
 * version. The mock (`mock/world-store.ts`, `persistentWorld`) reads it before a request and writes it
 * after one that changed it, only if nobody else wrote in between, so every gateway on this database
 * sees one sandbox and no number is given out twice. What the document holds is the mock's business.
 */
export function sandboxTenantDocuments(db: Kysely<Tables>, clock: Clock) {
  return {
    /** The stored version, and the document unless the caller already has that version. */
    async read(
      tenant: string,
      knownVersion?: number,
    ): Promise<{ version: number; document?: string } | undefined> {
      if (knownVersion !== undefined) {
        const row = await db
          .selectFrom('sandbox_tenants')
          .select('version')
          .where('tenant', '=', tenant)
          .executeTakeFirst();
        if (row === undefined) return undefined;
        if (row.version === knownVersion) return { version: row.version };
      }
      // With the document, and the version that goes with it (it may have moved on since the first read).
      return db
        .selectFrom('sandbox_tenants')
        .select(['version', 'document'])
        .where('tenant', '=', tenant)
        .executeTakeFirst();
    },

    /** Writes if the stored version is `expectedVersion` (0: no row yet); the new version, or undefined. */
    async write(tenant: string, document: string, expectedVersion: number): Promise<number | undefined> {
      const version = expectedVersion + 1;
      const updatedAt = clock.now();
      if (expectedVersion === 0) {
        const inserted = await db
          .insertInto('sandbox_tenants')
          .values({ tenant, version, document, updated_at: updatedAt })
          .onConflict((oc) => oc.column('tenant').doNothing())
          .executeTakeFirst();
        return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1 ? version : undefined;
      }
      const updated = await db
        .updateTable('sandbox_tenants')
        .set({ version, document, updated_at: updatedAt })
        .where('tenant', '=', tenant)
        .where('version', '=', expectedVersion)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) === 1 ? version : undefined;
    },
  };
}
