import { ApiError } from '../core/errors.js';

/**
 * A request's `wholesalers` (comparing availability, splitting an order) are an order of preference, so
 * each may appear once; ids are compared in lower case, as the X-MSV3-Credentials header keys them.
 * A repeat is a 400 naming both positions.
 */
export function distinctWholesalers(ids: readonly string[]): void {
  const firstAt = new Map<string, number>();
  ids.forEach((id, i) => {
    const earlier = firstAt.get(id.toLowerCase());
    if (earlier !== undefined) {
      const param = `wholesalers[${i}]`;
      throw new ApiError(
        'invalid_request',
        `${param} repeats wholesalers[${earlier}] (${id}); name each wholesaler once, in your order of preference.`,
        { param, wholesaler: id },
      );
    }
    firstAt.set(id.toLowerCase(), i);
  });
}
