import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import soap from 'soap';
import { XSD_DIR } from '../src/msv3/test-support/xsd.js';

/**
 * A wholesaler built on another SOAP stack: node-soap 1.13.0's server, generated from the original
 * MSV3 WSDLs (docs/msv3.md "Other SOAP stacks"), serving the five services the gateway's connection
 * test, availability, contracts, orders and order status use, for MSV3 v1 or v2. Its handlers answer
 * from the requests (availability in reversed order, orders by sub-order id, the order status from the
 * orders it took); PZN `FAULT_PZN` is refused with a ValidationFault.
 *
 * node-soap's own output deviates from the XSD in four ways (`NodeSoapDeviation`); `deviations` says
 * which of them the answers keep, the others are corrected (all corrected: answers valid for the XSD,
 * which the tests check). Every request and every answer is kept for XSD checks.
 */

/** What node-soap writes differently from the XSD, each corrected unless listed in `deviations`. */
export type NodeSoapDeviation =
  /** A SOAP 1.1 envelope (without `forceSoap12Headers`), still labelled `application/soap+xml`. */
  | 'soap11_envelope'
  /** The wrapper declares the MSV3 namespace as its default, so `return` is qualified. */
  | 'qualified_return'
  /** `xsi:nil="true"` without a declaration of the `xsi` prefix. */
  | 'undeclared_xsi_prefix'
  /** The fault bean and its fields in the SOAP namespace, the reason without `xml:lang`. */
  | 'fault_bean_in_soap_namespace';

export const NODE_SOAP_DEVIATIONS: readonly NodeSoapDeviation[] = [
  'soap11_envelope',
  'qualified_return',
  'undeclared_xsi_prefix',
  'fault_bean_in_soap_namespace',
];

/** A PZN the peer refuses with a ValidationFault (HTTP 500). */
export const FAULT_PZN = '11111116';
/** Articles with this PZN are answered as a back-order part without a delivery time (a nil). */
export const BACKORDER_PZN = '07654325';

/** Whether a PZN as node-soap hands it over (wire form, no leading zeros) is `pzn`. */
const isPzn = (wire: unknown, pzn: string) => Number(wire) === Number(pzn);

export const PEER_CREDENTIALS = { username: 'PLA\\apotheke7', password: 'node-soap-Passwört' } as const;

const SERVICES = [
  'VerbindungTesten',
  'VerfuegbarkeitAnfragen',
  'VertragsdatenAbfragen',
  'Bestellen',
  'BestellstatusAbfragen',
] as const;

/** `null` when the WSDLs of both versions are there, otherwise why the peer cannot run. */
export const wsdlUnavailableReason: string | null = SERVICES.every((s) =>
  [1, 2].every((v) => existsSync(join(XSD_DIR, `v${v}`, `Msv3${s}Service.wsdl`))),
)
  ? null
  : `MSV3 WSDLs not found in ${XSD_DIR} (set MSV3_XSD_DIR)`;

if (wsdlUnavailableReason !== null) {
  console.warn(`[node-soap peer] tests are SKIPPED: ${wsdlUnavailableReason}`);
}

interface Exchange {
  /** The service path's last segment, e.g. `bestellen`. */
  service: string;
  request: string;
  status: number;
  contentType: string;
  answer: string;
}

export interface NodeSoapPeer {
  /** The base URL to register, with the version segment (`…/msv3/v2.0`). */
  readonly baseUrl: string;
  /** The deviations the answers keep; set it between calls. Default: all four (node-soap as it is). */
  deviations: ReadonlySet<NodeSoapDeviation>;
  /** Every request and answer, in order. */
  readonly exchanges: Exchange[];
  close(): Promise<void>;
}

type Args = Record<string, unknown> & { attributes?: Record<string, string> };

/** node-soap hands a repeated element over as an array, a single one as an object. */
function list(value: unknown): Args[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]) as Args[];
}

function attributes(value: unknown): Record<string, string> {
  return ((value as Args | undefined)?.attributes ?? {}) as Record<string, string>;
}

const DELIVERY = '2026-12-01T10:30:00+01:00';

export async function startNodeSoapPeer(version: 1 | 2): Promise<NodeSoapPeer> {
  const dir = join(XSD_DIR, `v${version}`);
  const ns = `urn:msv3:v${version}`;
  const server = createServer();
  const exchanges: Exchange[] = [];
  /** Orders taken: their answers by Bestellung Id, for the order status. */
  const orders = new Map<string, { supportId: number; subOrders: unknown[] }>();
  const peer = {
    baseUrl: '',
    deviations: new Set(NODE_SOAP_DEVIATIONS) as ReadonlySet<NodeSoapDeviation>,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  /** One `Anteile` in XSD order; an order's part has a TourId. */
  const part = (quantity: number, backorder: boolean, inOrder = false) => ({
    Menge: quantity,
    Typ: backorder ? 'Nachlieferung' : 'Normal',
    // A back-order part has no delivery time yet: node-soap writes null as xsi:nil="true".
    Lieferzeitpunkt: backorder ? null : DELIVERY,
    ...(backorder ? {} : { Tour: 'Morgentour' }),
    Grund: backorder ? 'FehltZurzeit' : 'KeineAngabe',
    ...(inOrder ? { TourId: 'T1' } : {}),
    ...(version === 2 ? { Tourabweichung: false } : {}),
  });

  const fault = (text: string) => {
    const bean = { ErrorCode: 'V17', EndanwenderFehlertext: text, TechnischerFehlertext: `peer: ${text}` };
    return peer.deviations.has('soap11_envelope')
      ? {
          Fault: {
            faultcode: 'soap:Client',
            faultstring: text,
            detail: { ValidationFault: bean },
            statusCode: 500,
          },
        }
      : {
          Fault: {
            Code: { Value: 'soap:Sender' },
            Reason: { Text: text },
            Detail: { ValidationFault: bean },
            statusCode: 500,
          },
        };
  };

  const handlers: Record<(typeof SERVICES)[number], Record<string, (args: Args) => unknown>> = {
    VerbindungTesten: { verbindungTesten: () => ({}) },
    VerfuegbarkeitAnfragen: {
      verfuegbarkeitAnfragen(args) {
        const query = args.verfuegbarkeitsanfrage as Args;
        const articles = list(query.Artikel);
        if (articles.some((a) => isPzn(a.Pzn, FAULT_PZN))) throw fault(`PZN ${FAULT_PZN} ist gesperrt.`);
        return {
          return: {
            attributes: { Id: attributes(query).Id, RTyp: 'Spezifisch' },
            // Reversed: the gateway matches the articles by PZN.
            Artikel: articles.reverse().map((a) => ({
              AnfrageMenge: a.Menge,
              AnfragePzn: a.Pzn,
              Anteile: [part(Number(a.Menge), isPzn(a.Pzn, BACKORDER_PZN))],
            })),
          },
        };
      },
    },
    VertragsdatenAbfragen: {
      vertragsdatenAbfragen() {
        const window = (tag: string) => ({
          Tag: tag,
          Endezeit: '09:30:00',
          Hauptbestellzeit: { Tag: tag, Zeitpunkt: '09:00:00' },
        });
        const free = (n: number) => ({ MaxAnzahlFreieAuftragskennungen: n });
        return {
          return: {
            attributes:
              version === 2
                ? { AutomatischerAbruf: false, KundenKennung: PEER_CREDENTIALS.username }
                : { GueltigAb: '2026-01-01', KundenKennung: PEER_CREDENTIALS.username },
            Bestellfenster: ['Mo', 'Di', 'Mi', 'Do', 'Fr'].map(window),
            AuftragsartNormal: { attributes: free(3) },
            AuftragsartStapel: { attributes: { ...free(1), Vereinbart: false } },
            AuftragsartSonder: { attributes: { ...free(1), Vereinbart: false } },
            AuftragsartVersand: { attributes: { ...free(0), Vereinbart: false, NurKompletteGebinde: false } },
            Substitutionsvereinbarung: false,
            VerfuegbarkeitEinzelnSpezifischeRueckmeldungVereinbart: true,
            VerfuegbarkeitBulkVereinbart: false,
            RuecknahmeangebotVereinbart: true,
          },
        };
      },
    },
    Bestellen: {
      bestellen(args) {
        const order = args.bestellung as Args;
        const { Id: id, BestellSupportId: supportId } = attributes(order);
        const subOrders = list(order.Auftraege).map((sub) => {
          const { Id, Auftragsart, Auftragskennung, AuftragsSupportID } = attributes(sub);
          return {
            attributes: { Id, Auftragsart, Auftragskennung, AuftragsSupportID },
            Positionen: list(sub.Positionen).map((p) => ({
              BestellPzn: p.Pzn,
              BestellMenge: p.Menge,
              BestellLiefervorgabe: p.Liefervorgabe,
              Anteile: [part(Number(p.Menge), false, true)],
            })),
          };
        });
        // Reversed: the gateway matches the sub-orders by their Id.
        subOrders.reverse();
        orders.set(String(id), { supportId: Number(supportId), subOrders });
        return {
          return: {
            attributes: { Id: id, BestellSupportId: supportId, NachtBetrieb: false },
            Auftraege: subOrders,
          },
        };
      },
    },
    BestellstatusAbfragen: {
      bestellstatusAbfragen(args) {
        const id = String(args.bestellId);
        const order = orders.get(id);
        if (order === undefined)
          return { return: { attributes: { Id: id, Status: 'KennungUnbekannt' }, BestellSupportId: null } };
        return {
          return: {
            attributes: { Id: id, Status: 'BestellantwortVerfuegbar' },
            BestellSupportId: order.supportId,
            Auftraege: order.subOrders,
          },
        };
      },
    },
  };

  // Basic authentication as wholesalers do it: 401 with a challenge, before any SOAP processing.
  const expected = `Basic ${Buffer.from(`${PEER_CREDENTIALS.username}:${PEER_CREDENTIALS.password}`).toString('base64')}`;

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  peer.baseUrl = `http://127.0.0.1:${port}/msv3/v${version}.0`;
  for (const name of SERVICES) {
    const service = `${name.charAt(0).toLowerCase()}${name.slice(1)}`;
    const file = join(dir, `Msv3${name}Service.wsdl`);
    const path = `/msv3/v${version}.0/${service}`;
    const soapServer = await new Promise<soap.Server>((resolve, reject) => {
      const listening: soap.Server = soap.listen(server, {
        path,
        services: { [`Msv3${name}Service`]: { [`Msv3${name}Port`]: handlers[name] } },
        xml: readFileSync(file, 'utf8'),
        uri: file,
        callback: (error: unknown) => (error ? reject(error) : resolve(listening)),
      } as soap.IServerOptions);
    });
    // node-soap keeps the WSDL's options (forceSoap12Headers among them) on a field its types hide.
    const { options } = (soapServer as unknown as { wsdl: { options: { forceSoap12Headers?: boolean } } })
      .wsdl;
    const requestOf = new WeakMap<object, string>();
    soapServer.log = (type: string, data: unknown, req?: unknown) => {
      if (type === 'received' && typeof req === 'object' && req !== null) requestOf.set(req, String(data));
    };
    // node-soap asks every service's server in turn (each passes on what is not its path): only the
    // server of the request's path acts.
    soapServer.authorizeConnection = (req: IncomingMessage, res?: ServerResponse) => {
      if (res === undefined) return false;
      if (new URL(req.url ?? '/', 'http://peer').pathname.replace(/\/$/, '') !== path) return true;
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="MSV3"' });
        return false;
      }
      // Read when the envelope is written, within this request's synchronous processing.
      options.forceSoap12Headers = !peer.deviations.has('soap11_envelope');
      recordAnswer(res, (status, answer) =>
        exchanges.push({
          service,
          request: requestOf.get(req) ?? '',
          status,
          contentType: String(res.getHeader('content-type') ?? ''),
          answer,
        }),
      );
      return true;
    };
    soapServer.on('response', (response: { result: string }) => {
      response.result = correct(response.result, peer.deviations, ns);
    });
  }
  return peer;
}

/** Calls `done` with the status and body once `res` is ended. */
function recordAnswer(res: ServerResponse, done: (status: number, body: string) => void): void {
  const chunks: string[] = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (chunk !== undefined) chunks.push(String(chunk));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (chunk !== undefined && typeof chunk !== 'function') chunks.push(String(chunk));
    done(res.statusCode, chunks.join(''));
    return (end as (...a: unknown[]) => ServerResponse)(chunk, ...rest);
  }) as typeof res.end;
}

/**
 * node-soap's answer with every deviation not in `keep` corrected to the XSD. node-soap (with
 * forceSoap12Headers) writes `<soap:Envelope xmlns:soap=… xmlns:tns="urn:msv3:vN">`, the wrapper as
 * `<xResponse xmlns="urn:msv3:vN">` with everything below it unprefixed, nils as `xsi:nil="true"`
 * without declaring xsi, and faults entirely in `soap:`.
 */
function correct(xml: string, keep: ReadonlySet<NodeSoapDeviation>, ns: string): string {
  let out = xml;
  if (!keep.has('qualified_return')) {
    // The wrapper takes the declared tns prefix, `return` stays unqualified, everything below it tns.
    out = out.replace(
      new RegExp(`<(\\w+Response) xmlns="${ns}"(/?)>`),
      (_all, wrapper: string, empty: string) => `<tns:${wrapper}${empty}>`,
    );
    out = out.replace(/<\/(\w+Response)>/, '</tns:$1>');
    const open = out.indexOf('<return');
    const close = out.lastIndexOf('</return>');
    if (open !== -1 && close !== -1) {
      const inner = out.indexOf('>', open) + 1;
      const below = out.slice(inner, close).replace(/<(\/?)([A-Za-z_][\w.-]*)(?=[\s/>])/g, '<$1tns:$2');
      out = out.slice(0, inner) + below + out.slice(close);
    }
  }
  if (!keep.has('undeclared_xsi_prefix') && out.includes('xsi:nil')) {
    out = out.replace(
      /<(\w+):Envelope /,
      '<$1:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ',
    );
  }
  if (!keep.has('fault_bean_in_soap_namespace')) {
    out = out.replace(/<(\w+):Detail>([\s\S]*)<\/\1:Detail>/, (_all, p: string, detail: string) => {
      const bean = detail.replace(new RegExp(`<(/?)${p}:`, 'g'), '<$1tns:');
      return `<${p}:Detail>${bean}</${p}:Detail>`;
    });
    out = out.replace(/<(\w+):Text>/, '<$1:Text xml:lang="de">');
  }
  return out;
}
