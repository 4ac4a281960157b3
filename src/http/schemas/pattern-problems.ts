import { GATEWAY_ORDER_ID_PATTERN, SPLIT_ID_PATTERN } from '../../services/orders/ids.js';
import { PZN_PATTERN } from './common.js';
import { TRACKING_NUMBER_PATTERN } from './deliveries.js';
import { EVENT_ID_PATTERN } from './events.js';
import {
  BARCODE_PATTERN,
  CUSTOM_WHOLESALER_ID_PATTERN,
  HOUR_MINUTE_PATTERN,
  PRINTABLE_ID_PATTERN,
  UUID_PATTERN,
} from './patterns.js';
import { describePattern as describeTextPattern } from './strings.js';
import { WEBHOOK_ID_PATTERN } from './webhooks.js';

/**
 * Every `pattern` a request schema uses, with what breaking it means in words: a client is told
 * "must be 1 to 8 digits, e.g. 04114918", never a regular expression (docs/errors.md). A pattern that
 * is not listed here is reported as "has the wrong form"; test/validation-messages.test.ts checks that
 * every pattern in the route schemas is listed.
 */

const PATTERN_PROBLEMS: ReadonlyMap<string, string> = new Map([
  [PZN_PATTERN, 'must be 1 to 8 digits, e.g. 04114918'],
  [
    PRINTABLE_ID_PATTERN,
    'must be 1 to 20 capital letters, digits or the characters `+ - _` (a printable MSV3 id), e.g. K1',
  ],
  [
    TRACKING_NUMBER_PATTERN,
    'must be 1 to 30 letters, digits or the characters `# + * / - _`, e.g. LS-2025-000123',
  ],
  [
    BARCODE_PATTERN,
    'must be a delivery-note barcode: optional digits, one of `* + # _ ?`, then letters, digits or `# + * / - _ ?`, e.g. 01*LS2025000123',
  ],
  [
    GATEWAY_ORDER_ID_PATTERN,
    'must be an order id as the gateway returned it: `GW-` followed by 22 letters and digits',
  ],
  [
    SPLIT_ID_PATTERN,
    'must be a split id as the gateway returned it: `SP-` followed by 32 hexadecimal digits',
  ],
  [
    WEBHOOK_ID_PATTERN,
    'must be a wholesaler id as listed by GET /v1/wholesalers (lowercase letters, digits, `_` or `-`, e.g. phoenix), or `*` for all of them',
  ],
  [
    EVENT_ID_PATTERN,
    'must be an event id as the gateway returned it: `evt_` followed by letters and digits, e.g. evt_3kTzW9qH2mN7pR1sT5vX9z',
  ],
  [UUID_PATTERN, 'must be a UUID such as 5b0f1f5e-8c1a-4f0e-9d3a-1c2b3d4e5f60'],
  [
    CUSTOM_WHOLESALER_ID_PATTERN,
    'must be a custom wholesaler id as listed by GET /v1/wholesalers: letters, digits, `_`, `.` or `-`',
  ],
  [HOUR_MINUTE_PATTERN, 'must be a time of day such as 07:30'],
]);

/** What breaking `pattern` means, in words; undefined for a pattern no request schema uses. */
export function describePattern(pattern: string): string | undefined {
  return PATTERN_PROBLEMS.get(pattern) ?? describeTextPattern(pattern);
}

/** Whether `describePattern` has words for `pattern`. */
export function isDescribedPattern(pattern: string): boolean {
  return describePattern(pattern) !== undefined;
}
