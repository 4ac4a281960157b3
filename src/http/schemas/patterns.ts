/** Patterns of route-level strings, kept here so their words (`pattern-problems.ts`) sit with them. */

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const CUSTOM_WHOLESALER_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]*$';
export const HOUR_MINUTE_PATTERN = '^\\d{2}:\\d{2}$';
/** MSV3 `BarcodeReferenzType`. */
export const BARCODE_PATTERN = '^[0-9]*[*+#_?][a-zA-Z0-9#+*/_?-]*$';
/** MSV3 `DruckbareKennung`: order labels (`Auftragskennung`), container ids (`GebindeId`). */
export const PRINTABLE_ID_PATTERN = '^[A-Z0-9+_-]{1,20}$';
