import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { Tables } from './schema.js';

/**
 * The sandbox wholesaler's state in the gateway's database: per tenant a head (a small JSON document
 * with a version, `sandbox_tenants`) and its records (`sandbox_records`: one row per order, notice,
 * document, …). The mock (`mock/world-store.ts`, `persistentWorld`) reads a tenant before a request and
 * after one that changed it writes the head and the changed records in one transaction, only if nobody
 * else wrote in between, so every gateway on this database sees one sandbox and no number is given out
 * twice. What the texts hold is the mock's business (`mock/state-codec.ts`).
 */

/** A stored record: one entry of one of a customer's record maps (`kind`: which map). */
export interface SandboxRecord {
  customerId: string;
  kind: string;
  key: string;
  document: string;
}

/**
 * A record write: `set` stores `document` (a new record after the ones stored), `deleted` removes,
 * `moved` removes and stores it anew, after the ones stored.
 */
export interface SandboxRecordWrite {
  customerId: string;
  kind: string;
  key: string;
  change: 'set' | 'deleted' | 'moved';
  document?: string;
}

/** What a save writes: the head, the changed records, and whether to drop every other stored record. */
export interface SandboxWrite {
  head: string;
  records: readonly SandboxRecordWrite[];
  /** The records are the whole state (a head of the mock's format 1 converted): any other record goes. */
  replaceAll: boolean;
}

/** A tenant as read: its version, and its head and records unless the reader had that version. */
export interface StoredSandboxTenant {
  version: number;
  head?: string;
  records?: SandboxRecord[];
}

export function sandboxTenantStore(db: Kysely<Tables>, clock: Clock) {
  return {
    /** The stored version, and the head and records unless the caller already has that version. */
    async read(tenant: string, knownVersion?: number): Promise<StoredSandboxTenant | undefined> {
      if (knownVersion !== undefined) {
        const row = await db
          .selectFrom('sandbox_tenants')
          .select('version')
          .where('tenant', '=', tenant)
          .executeTakeFirst();
        if (row === undefined) return undefined;
        if (row.version === knownVersion) return { version: row.version };
      }
      // Head and records from one snapshot, as a save writes them in one transaction (on PostgreSQL each
      // statement of a read-committed transaction would see the saves committed before it).
      return db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const head = await trx
            .selectFrom('sandbox_tenants')
            .select(['version', 'document'])
            .where('tenant', '=', tenant)
            .executeTakeFirst();
          if (head === undefined) return undefined;
          const records = await trx
            .selectFrom('sandbox_records')
            .select(['customer_id', 'kind', 'key', 'document'])
            .where('tenant', '=', tenant)
            .orderBy('seq')
            .execute();
          return {
            version: head.version,
            head: head.document,
            records: records.map((r) => ({
              customerId: r.customer_id,
              kind: r.kind,
              key: r.key,
              document: r.document,
            })),
          };
        });
    },

    /**
     * Writes the head and the records if the stored version is `expectedVersion` (0: no row yet), all in
     * one transaction; `replaceAll` drops the tenant's other records first. The new version, or undefined.
     */
    write(tenant: string, change: SandboxWrite, expectedVersion: number): Promise<number | undefined> {
      return db.transaction().execute(async (trx) => {
        const version = await writeHead(trx, tenant, change.head, expectedVersion, clock.now());
        if (version === undefined) return undefined;
        if (change.replaceAll) await trx.deleteFrom('sandbox_records').where('tenant', '=', tenant).execute();
        for (const record of change.records) await writeRecord(trx, tenant, record);
        return version;
      });
    },
  };
}

async function writeHead(
  trx: Transaction<Tables>,
  tenant: string,
  document: string,
  expectedVersion: number,
  updatedAt: number,
): Promise<number | undefined> {
  const version = expectedVersion + 1;
  if (expectedVersion === 0) {
    const inserted = await trx
      .insertInto('sandbox_tenants')
      .values({ tenant, version, document, updated_at: updatedAt })
      .onConflict((oc) => oc.column('tenant').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1 ? version : undefined;
  }
  // On PostgreSQL this locks the row: a second writer from the same version waits, then matches nothing.
  const updated = await trx
    .updateTable('sandbox_tenants')
    .set({ version, document, updated_at: updatedAt })
    .where('tenant', '=', tenant)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1 ? version : undefined;
}

async function writeRecord(trx: Transaction<Tables>, tenant: string, record: SandboxRecordWrite) {
  const { customerId, kind, key, change, document } = record;
  if (change !== 'set') {
    await trx
      .deleteFrom('sandbox_records')
      .where('tenant', '=', tenant)
      .where('customer_id', '=', customerId)
      .where('kind', '=', kind)
      .where('key', '=', key)
      .execute();
  }
  if (change === 'deleted') return;
  if (document === undefined) throw new Error(`the sandbox record "${kind}" "${key}" has no document`);
  await trx
    .insertInto('sandbox_records')
    .values({ tenant, customer_id: customerId, kind, key, document })
    .onConflict((oc) =>
      oc.columns(['tenant', 'customer_id', 'kind', 'key']).doUpdateSet((eb) => ({
        document: eb.ref('excluded.document'),
      })),
    )
    .execute();
}
