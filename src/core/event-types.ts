/**
 * The events a subscription can ask for (docs/webhooks.md "Events and triggers"). `ping` is only sent by the
 * test endpoint.
 */
export const EVENT_TYPES = [
  'delivery.received',
  'delivery.shortage',
  'order.status_changed',
  'order.fulfilled',
  'wholesaler.status_changed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
export type DeliveredEventType = EventType | 'ping';

/** In a subscription: every event type (or every wholesaler), those added later included. */
export const EVERY = '*';
/** What a subscription lists: event types, or `*`. */
export type EventSelector = EventType | typeof EVERY;

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
