import { ApiError } from '../../core/errors.js';
import { retourenavisAnfragen } from '../../msv3/operations/retourenavis-anfragen.js';
import {
  type ReturnAnnouncement,
  retourenavisAnkuendigen,
} from '../../msv3/operations/retourenavis-ankuendigen.js';
import { callWholesaler, type UpstreamDeps } from '../../wholesalers/call.js';
import type { CustomerRequest } from '../deliveries/notices.js';
import type { OrderKeyScope } from '../orders/ids.js';
import { requestIdFor } from './ids.js';
import { type BindingRequest, callBindingReturnOperation, returnOutcomeUnknown } from './outcome.js';
import {
  type AssessedReturnItemJson,
  type ReturnItemInput,
  type ReturnPortionJson,
  sortedByPosition,
  toAssessedReturnItem,
  toReturnPortion,
  toReturnPositions,
} from './view.js';

/**
 * Returns (v2 only): `POST /v1/returns` is the non-binding enquiry (`retourenavisAnfragen`, a verdict
 * per item), `POST /v1/returns/announce` the binding announcement (`retourenavisAnkuendigen`, the items
 * split into portions with reference, pick-up and return slip). The MSV3 `ID` (`return_id`) and
 * `RetoureSupportID` (`support_id`, a number to quote on the phone) are derived from the
 * Idempotency-Key when there is one, so a retry sends the same announcement, not a second one. When
 * the answer to an announcement is lost after sending, the key stays open for that retry
 * (`returns/outcome.ts`); the enquiry books nothing, so a failed one simply releases its key.
 */

export interface ReturnEnquiryJson {
  wholesaler: string;
  return_id: string;
  support_id: number;
  items: AssessedReturnItemJson[];
}

export interface ReturnAnnouncementJson {
  wholesaler: string;
  return_id: string;
  support_id: number;
  portions: ReturnPortionJson[];
}

/** The optional company details of an announcement (mainly for returns to the manufacturer). */
export interface CompanyDetailsInput {
  registry_court?: string;
  commercial_register_number?: string;
  vat_id?: string;
  tax_number?: string;
  bank_name?: string;
  bic?: string;
  iban?: string;
}

// MSV3 allows a `return` element to be absent; without it there is nothing to show.
function emptyAnswer(wholesaler: string, operation: string): ApiError {
  return new ApiError('wholesaler_bad_response', `${wholesaler} answered ${operation} without a result.`, {
    wholesaler,
  });
}

export async function enquireReturn(
  upstream: UpstreamDeps,
  request: CustomerRequest,
  items: readonly ReturnItemInput[],
  keyScope?: OrderKeyScope,
): Promise<ReturnEnquiryJson> {
  const wholesaler = await upstream.registry.resolve(request.tenant, request.wholesaler);
  const header = requestIdFor('retourenavisAnfragen', keyScope);
  const { value } = await callWholesaler(upstream, wholesaler, retourenavisAnfragen, request.credentials, {
    clientSoftwareId: upstream.clientSoftwareId,
    enquiry: { ...header, positions: toReturnPositions(items) },
  });
  if (value.answer === undefined) throw emptyAnswer(request.wholesaler, 'retourenavisAnfragen');
  return {
    wholesaler: request.wholesaler,
    return_id: value.answer.id.toLowerCase(),
    support_id: value.answer.supportId,
    items: sortedByPosition(value.answer.positions).map(toAssessedReturnItem),
  };
}

export async function announceReturn(
  upstream: UpstreamDeps,
  request: CustomerRequest,
  items: readonly ReturnItemInput[],
  company: CompanyDetailsInput = {},
  keyScope?: OrderKeyScope,
): Promise<ReturnAnnouncementJson> {
  const wholesaler = await upstream.registry.resolve(request.tenant, request.wholesaler);
  const announcement: ReturnAnnouncement = {
    ...requestIdFor('retourenavisAnkuendigen', keyScope),
    positions: toReturnPositions(items),
    registryCourt: company.registry_court,
    commercialRegisterNumber: company.commercial_register_number,
    vatId: company.vat_id,
    taxNumber: company.tax_number,
    bankName: company.bank_name,
    bic: company.bic,
    iban: company.iban,
  };
  const sent: BindingRequest = {
    label: 'Return announcement',
    id: announcement.id,
    withKey: keyScope !== undefined,
    withoutKey: `Do not send it again without an Idempotency-Key (that would be a second announcement): check with POST /v1/returns whether the quantities are booked, or ask the wholesaler quoting support id ${announcement.supportId}`,
  };
  const value = await callBindingReturnOperation(
    upstream,
    wholesaler,
    retourenavisAnkuendigen,
    request.credentials,
    { clientSoftwareId: upstream.clientSoftwareId, announcement },
    sent,
  );
  // Received, and perhaps booked, yet unanswered: as open as a lost answer, so the key stays bound.
  if (value.answer === undefined) {
    throw returnOutcomeUnknown(request.wholesaler, sent, 'the answer carried no result');
  }
  return {
    wholesaler: request.wholesaler,
    return_id: value.answer.id.toLowerCase(),
    support_id: value.answer.supportId,
    portions: value.answer.portions.map(toReturnPortion),
  };
}
