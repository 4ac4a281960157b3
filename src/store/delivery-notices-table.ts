import type { KeyMode } from '../core/key-mode.js';

/** Every delivery notice the gateway has seen, per pharmacy (see `delivery-notices.ts`). */
export interface DeliveryNoticesTable {
  account_id: string;
  mode: KeyMode;
  /** The wholesaler id as requested (`phoenix` and `phoenix_test` are different servers). */
  wholesaler: string;
  /**
   * SHA-256 hex of the MSV3 user name (the customer id at the wholesaler). Scoping only needs
   * equality, and the user name is half of a credential pair, so it is not stored in clear.
   */
  customer_hash: string;
  /** `Lieferscheinnummer`. */
  tracking_number: string;
  /** `BarcodeReferenz`. */
  barcode: string;
  /** `Belegdatum`, `YYYY-MM-DD` (a zone suffix cut off), for ordering and date filters. */
  document_date: string;
  /** `DokumentId` of the PDF delivery note, if any. */
  document_id: string | null;
  /** The decoded MSV3 notice (`DeliveryNotice` of `msv3/operations/lieferavis.ts`) as JSON. */
  notice: string;
  first_seen_at: number;
  last_seen_at: number;
  /** When this gateway confirmed it (`lieferavisBestaetigen`); null if not through this gateway. */
  confirmed_at: number | null;
}
