import type { Auftragsart } from '../msv3/model.js';

/**
 * MSV3's order types (`Auftragsart`) as the API names them, the same in orders, delivery notices and
 * the contract's `capabilities.order_types` (docs/glossary.md "Auftragsart").
 */
export const ORDER_TYPES = ['normal', 'batch', 'special', 'shipping'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const AUFTRAGSART_OF: Record<OrderType, Auftragsart> = {
  normal: 'NORMAL',
  batch: 'STAPEL',
  special: 'SONDER',
  shipping: 'VERSAND',
};

export const ORDER_TYPE_OF: Record<Auftragsart, OrderType> = {
  NORMAL: 'normal',
  STAPEL: 'batch',
  SONDER: 'special',
  VERSAND: 'shipping',
};
