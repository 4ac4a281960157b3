import { encodeFault, type FaultInput, type Msv3Version, wrapEnvelope } from '../msv3/envelope.js';
import { escapeText } from '../msv3/xml/write.js';

/**
 * The faults the mock raises. Handlers throw a `MockFault`; the dispatcher turns it into a SOAP 1.2
 * `env:Fault` with the MSV3 bean (HTTP 500, like JAX-WS RI). Error codes are the mock's own (MSV3
 * publishes no catalogue): V… invalid request, A… not agreed, S… server, D… load, L… unknown note.
 */

export class MockFault extends Error {
  constructor(readonly input: FaultInput) {
    super(input.technicalText);
    this.name = 'MockFault';
  }
}

/** The request breaks the schema or a business rule (duplicates, limits, unknown ids, …). */
export function validationFault(technicalText: string, userText = 'Die Anfrage ist ungültig.'): MockFault {
  return new MockFault({ kind: 'ValidationFault', errorCode: 'V001', userText, technicalText });
}

/** The function is not part of the customer's contract. */
export function authorizationFault(operation: string, contractFlag: string): MockFault {
  return new MockFault({
    kind: 'AuthorizationFault',
    errorCode: 'A001',
    userText: 'Diese Funktion ist in Ihrem Vertrag mit dem Großhandel nicht vereinbart.',
    technicalText: `${operation} requires ${contractFlag}=true in the contract`,
  });
}

export function serverFault(): MockFault {
  return new MockFault({
    kind: 'ServerFault',
    errorCode: 'S001',
    userText: 'Der Dienst ist vorübergehend nicht verfügbar.',
    technicalText: 'sandbox scenario SERVER_FAULT: simulated backend failure',
  });
}

export function denialOfServiceFault(): MockFault {
  return new MockFault({
    kind: 'DenialOfServiceFault',
    errorCode: 'D001',
    userText: 'Zu viele Anfragen. Bitte versuchen Sie es später erneut.',
    technicalText: 'sandbox scenario DENIAL_OF_SERVICE: request refused for load reasons',
  });
}

export function unknownDeliveryNoteFault(what: string): MockFault {
  return new MockFault({
    kind: 'LieferscheinOderBarcodeUnbekanntFault',
    errorCode: 'L001',
    userText: 'Lieferschein oder Barcode unbekannt.',
    technicalText: `no delivery notice for ${what}`,
  });
}

export function encodeMockFault(version: Msv3Version, fault: MockFault): string {
  return encodeFault(version, fault.input);
}

/**
 * A fault without an MSV3 bean, as JAX-WS writes it when it cannot even pick an operation: the body's
 * root element is not an operation of this endpoint (or not MSV3 at all), or the envelope is SOAP 1.1.
 */
export function plainFault(code: 'Sender' | 'VersionMismatch', reason: string): string {
  return wrapEnvelope(
    2,
    `<env:Fault><env:Code><env:Value>env:${code}</env:Value></env:Code>` +
      `<env:Reason><env:Text xml:lang="en">${escapeText(reason)}</env:Text></env:Reason></env:Fault>`,
  );
}
