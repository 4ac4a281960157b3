import { gzipSync } from 'node:zlib';
import { encodeFault, type FaultInput, wrapEnvelope } from '../src/msv3/envelope.js';
import { type Behaviour, httpAnswer, stream } from './hostile-server.js';

/**
 * Hostile wholesaler behaviours, each a small named function, with the answers the API client may get
 * (error kinds of the catalogue, or `ok` for a 200) and how long it may take. `long`: left out of the
 * short form. The gateway under test runs with 3 s headers and body timeouts (hostile-check.ts).
 */

export interface HostileCase {
  name: string;
  run: Behaviour;
  expect: readonly string[];
  boundMs: number;
  long?: boolean;
  /** Builds a big answer ahead of time. */
  prepare?: () => unknown;
}

const MB = 1024 * 1024;
const QUICK_MS = 5_000;
/** Headers/body timeout 3 s (hostile-check.ts) plus room for a loaded machine. */
const TIMEOUT_MS = 10_000;

const bad = ['wholesaler_bad_response'];
const broke = ['wholesaler_unreachable', 'wholesaler_bad_response'];
const late = ['wholesaler_timeout'];

const soap = (payload: string) => wrapEnvelope(2, payload);
const fault = (input: FaultInput) => encodeFault(2, input);

const billionLaughs: Behaviour = (socket) => {
  const entities = ['<!ENTITY l0 "lol">'];
  for (let i = 1; i < 10; i++) entities.push(`<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`);
  socket.end(
    httpAnswer(200, `<?xml version="1.0"?><!DOCTYPE e [${entities.join('')}]>${soap('<m:x>&l9;</m:x>')}`),
  );
};

const doctypeOnly: Behaviour = async (socket, request, tools) => {
  const answer = await tools.validAnswer(request);
  socket.end(
    httpAnswer(
      200,
      answer.body
        .replace('<?xml version="1.0" encoding="UTF-8"?>', '')
        .replace(/^/, '<!DOCTYPE env:Envelope>'),
    ),
  );
};

const externalEntity: Behaviour = (socket) => {
  socket.end(
    httpAnswer(
      200,
      `<?xml version="1.0"?><!DOCTYPE e [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${soap('<m:x>&xxe;</m:x>')}`,
    ),
  );
};

const parameterEntity: Behaviour = (socket) => {
  socket.end(
    httpAnswer(
      200,
      `<?xml version="1.0"?><!DOCTYPE e [<!ENTITY % p SYSTEM "http://127.0.0.1:1/evil.dtd">%p;]>${soap('<m:x/>')}`,
    ),
  );
};

const answer200MB: Behaviour = async (socket) => {
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nContent-Length: ${200 * MB}\r\nConnection: close\r\n\r\n`,
  );
  await stream(socket, 200 * MB, Buffer.alloc(64 * 1024, 'a'));
  socket.end();
};

const answer200MBChunked: Behaviour = async (socket) => {
  socket.write(
    'HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
  );
  const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, '<a/>'), Buffer.from('\r\n')]);
  await stream(socket, Math.ceil((200 * MB) / 0x10000) * chunk.length, chunk);
  socket.end('0\r\n\r\n');
};

const dripFeed: Behaviour = async (socket, request, tools) => {
  const body = Buffer.from((await tools.validAnswer(request)).body);
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
  );
  let at = 0;
  tools.every(1_000, () => {
    if (!socket.destroyed && at < body.length) socket.write(body.subarray(at, ++at));
  });
};

const neverCloses: Behaviour = async (socket, request, tools) => {
  const body = Buffer.from((await tools.validAnswer(request)).body);
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nContent-Length: ${body.length + 100}\r\n\r\n`,
  );
  socket.write(body);
};

const neverAnswers: Behaviour = () => {};

const closesMidBody: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  socket.end(body.slice(0, body.length / 2));
};

const closesWithoutAnswer: Behaviour = (socket) => {
  socket.end();
};

const resetsConnection: Behaviour = (socket) => {
  socket.resetAndDestroy();
};

/** Big answers are built once, before the behaviour's turn (`prepare`), so that building them does not stall the battery's own health polling. */
function memo<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

const sendOnce = (make: () => Buffer) => {
  const answer = memo(make);
  const behaviour: Behaviour = (socket) => {
    socket.end(answer());
  };
  return { behaviour, prepare: answer };
};

const attributeBomb = sendOnce(() =>
  httpAnswer(
    200,
    soap(
      `<m:verfuegbarkeitAnfragenResponse${Array.from({ length: 100_000 }, (_, i) => ` a${i}="${i}"`).join('')}/>`,
    ),
  ),
);
const duplicateAttributeBomb = sendOnce(() =>
  httpAnswer(200, soap(`<m:verfuegbarkeitAnfragenResponse${' a="1"'.repeat(100_000)}/>`)),
);
const nestingBomb = sendOnce(() =>
  httpAnswer(200, soap(`${'<m:a>'.repeat(200_000)}${'</m:a>'.repeat(200_000)}`)),
);
const elementBomb = sendOnce(() =>
  httpAnswer(
    200,
    soap(
      `<m:verfuegbarkeitAnfragenResponse>${'<m:x/>'.repeat(2_000_000)}</m:verfuegbarkeitAnfragenResponse>`,
    ),
  ),
);
const hugeText = sendOnce(() =>
  httpAnswer(
    200,
    soap(`<m:verfuegbarkeitAnfragenResponse>${'t'.repeat(15 * MB)}</m:verfuegbarkeitAnfragenResponse>`),
  ),
);
/**
 * A 10 MB error page of words and spaces (a stack trace printed over and over, say): under the 12 MiB
 * the gateway reads, so that its error shows the page's start.
 */
const hugeErrorPage = sendOnce(() =>
  httpAnswer(
    500,
    `<html><body>${'at com.example.Backend.call(Backend.java:42)\n  '.repeat((10 * MB) / 48)}</body></html>`,
    {
      'Content-Type': 'text/html',
    },
  ),
);
/** 128 MB of zeros in about 130 KB of gzip. */
const gzipBomb = sendOnce(() =>
  httpAnswer(200, gzipSync(Buffer.alloc(128 * MB), { level: 9 }), {
    'Content-Type': 'application/soap+xml',
    'Content-Encoding': 'gzip',
  }),
);

const redirect =
  (status: number, location: (request: { headers: Record<string, string> }) => string): Behaviour =>
  (socket, request) =>
    socket.end(httpAnswer(status, '', { Location: location(request), 'Content-Type': 'text/plain' }));

const redirect301Loopback = redirect(
  301,
  (r) => `http://${r.headers.host}/validAnswer/msv3/v2.0/verfuegbarkeitAnfragen`,
);
const redirect302Elsewhere = redirect(302, () => 'http://127.0.0.2:9/msv3/v2.0/verfuegbarkeitAnfragen');
const redirect307Loopback = redirect(
  307,
  (r) => `http://${r.headers.host}/validAnswer/msv3/v2.0/verfuegbarkeitAnfragen`,
);
// Never a Location off this machine: if a gateway ever followed one, the battery would leave loopback.
const redirect308Port1 = redirect(308, () => 'http://127.0.0.1:1/msv3/v2.0/verfuegbarkeitAnfragen');

const status401: Behaviour = (socket) =>
  socket.end(
    httpAnswer(401, 'Unauthorized', {
      'WWW-Authenticate': 'Basic realm="MSV3"',
      'Content-Type': 'text/plain',
    }),
  );
const status403: Behaviour = (socket) =>
  socket.end(httpAnswer(403, 'Forbidden', { 'Content-Type': 'text/plain' }));
const html500: Behaviour = (socket) =>
  socket.end(
    httpAnswer(
      500,
      '<html><body><h1>500 Internal Server Error</h1><pre>java.lang.NullPointerException</pre></body></html>',
      { 'Content-Type': 'text/html' },
    ),
  );
const html503RetryAfter: Behaviour = (socket) =>
  socket.end(
    httpAnswer(503, '<html>maintenance</html>', { 'Content-Type': 'text/html', 'Retry-After': '99999' }),
  );

const soapFault = (input: FaultInput) => sendOnce(() => httpAnswer(500, fault(input)));
const texts = { userText: 'Fehler', technicalText: 'battery' };
const serverFault = soapFault({ kind: 'ServerFault', errorCode: 'S001', ...texts });
const validationFault = soapFault({ kind: 'ValidationFault', errorCode: 'V001', ...texts });
const authorizationFault = soapFault({ kind: 'AuthorizationFault', errorCode: 'A001', ...texts });
const denialOfServiceFault = soapFault({ kind: 'DenialOfServiceFault', errorCode: 'D001', ...texts });
const unknownDeliveryFault = soapFault({
  kind: 'LieferscheinOderBarcodeUnbekanntFault',
  errorCode: 'L001',
  ...texts,
});
const hugeFault = soapFault({
  kind: 'ServerFault',
  errorCode: 'S002',
  userText: 'ü'.repeat(MB),
  technicalText: 'x'.repeat(MB),
});
const foreignFault: Behaviour = (socket) =>
  socket.end(
    httpAnswer(
      500,
      soap(
        '<env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code><env:Reason><env:Text xml:lang="en">NPE</env:Text></env:Reason><env:Detail><x:Oops xmlns:x="urn:other"/></env:Detail></env:Fault>',
      ),
    ),
  );

const garbageBytes: Behaviour = (socket) =>
  socket.end(httpAnswer(200, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256))));

const wrongContentType: Behaviour = async (socket, request, tools) =>
  socket.end(
    httpAnswer(200, (await tools.validAnswer(request)).body, {
      'Content-Type': 'text/html; charset=iso-8859-1',
    }),
  );

const invalidUtf8: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  const at = body.indexOf('</');
  socket.end(
    httpAnswer(
      200,
      Buffer.concat([
        Buffer.from(body.slice(0, at)),
        Buffer.from([0xc3, 0x28, 0xff, 0xfe]),
        Buffer.from(body.slice(at)),
      ]),
    ),
  );
};

const utf8Bom: Behaviour = async (socket, request, tools) =>
  socket.end(
    httpAnswer(
      200,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from((await tools.validAnswer(request)).body)]),
    ),
  );

const utf16Bom: Behaviour = async (socket, request, tools) =>
  socket.end(
    httpAnswer(
      200,
      Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from((await tools.validAnswer(request)).body.replace('UTF-8', 'UTF-16'), 'utf16le'),
      ]),
    ),
  );

const truncatedXml: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  socket.end(httpAnswer(200, body.slice(0, Math.floor(body.length * 0.7))));
};

const wrongNamespace: Behaviour = async (socket, request, tools) =>
  socket.end(
    httpAnswer(200, (await tools.validAnswer(request)).body.replaceAll('urn:msv3:v2', 'urn:msv3:v9')),
  );

const soap11Envelope: Behaviour = async (socket, request, tools) =>
  socket.end(
    httpAnswer(
      200,
      (await tools.validAnswer(request)).body.replace(
        'http://www.w3.org/2003/05/soap-envelope',
        'http://schemas.xmlsoap.org/soap/envelope/',
      ),
    ),
  );

const wrongOperation: Behaviour = async (socket, request, tools) =>
  socket.end(
    httpAnswer(
      200,
      (await tools.validAnswer(request)).body.replaceAll(
        'verfuegbarkeitAnfragenResponse',
        'bestellenResponse',
      ),
    ),
  );

const emptyBody200: Behaviour = (socket) => socket.end(httpAnswer(200, ''));

const chunkedBadSize: Behaviour = (socket) =>
  socket.end(
    'HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n<a/>\r\n0\r\n\r\n',
  );

const chunkedNeverEnds: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`,
  );
};

const http09Junk: Behaviour = async (socket, request, tools) =>
  socket.end((await tools.validAnswer(request)).body);

const statusLineJunk: Behaviour = (socket) => socket.end('HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n');

const continueLoop: Behaviour = (socket, _request, tools) => {
  tools.every(100, () => {
    if (!socket.destroyed) socket.write('HTTP/1.1 100 Continue\r\n\r\n');
  });
};

const hugeHeader: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  socket.end(httpAnswer(200, body, { 'X-Huge': 'h'.repeat(MB) }));
};

const manyHeaders: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  const headers: Record<string, string> = {};
  for (let i = 0; i < 20_000; i++) headers[`X-H${i}`] = '1';
  socket.end(httpAnswer(200, body, headers));
};

const slowlorisHeaders: Behaviour = (socket, _request, tools) => {
  socket.write('HTTP/1.1 200 OK\r\nX-Slow: ');
  tools.every(200, () => {
    if (!socket.destroyed) socket.write('s');
  });
};

const contentLengthTooShort: Behaviour = async (socket, request, tools) => {
  const body = (await tools.validAnswer(request)).body;
  socket.end(
    `HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml\r\nContent-Length: 40\r\nConnection: close\r\n\r\n${body}`,
  );
};

const validAnswer: Behaviour = async (socket, request, tools) => {
  const answer = await tools.validAnswer(request);
  socket.end(httpAnswer(answer.status, answer.body));
};

export const HOSTILE_CASES: HostileCase[] = [
  { name: 'validAnswer', run: validAnswer, expect: ['ok'], boundMs: QUICK_MS },
  { name: 'billionLaughs', run: billionLaughs, expect: bad, boundMs: QUICK_MS },
  { name: 'doctypeOnly', run: doctypeOnly, expect: ['ok', ...bad], boundMs: QUICK_MS, long: true },
  { name: 'externalEntity', run: externalEntity, expect: bad, boundMs: QUICK_MS },
  { name: 'parameterEntity', run: parameterEntity, expect: bad, boundMs: QUICK_MS, long: true },
  { name: 'answer200MB', run: answer200MB, expect: bad, boundMs: 20_000 },
  { name: 'answer200MBChunked', run: answer200MBChunked, expect: bad, boundMs: 20_000, long: true },
  { name: 'dripFeed', run: dripFeed, expect: late, boundMs: 75_000, long: true },
  { name: 'neverCloses', run: neverCloses, expect: late, boundMs: TIMEOUT_MS, long: true },
  { name: 'neverAnswers', run: neverAnswers, expect: late, boundMs: TIMEOUT_MS },
  { name: 'closesMidBody', run: closesMidBody, expect: broke, boundMs: QUICK_MS },
  { name: 'closesWithoutAnswer', run: closesWithoutAnswer, expect: broke, boundMs: QUICK_MS, long: true },
  { name: 'resetsConnection', run: resetsConnection, expect: broke, boundMs: QUICK_MS, long: true },
  {
    name: 'attributeBomb',
    run: attributeBomb.behaviour,
    prepare: attributeBomb.prepare,
    expect: bad,
    boundMs: QUICK_MS,
  },
  {
    name: 'duplicateAttributeBomb',
    run: duplicateAttributeBomb.behaviour,
    prepare: duplicateAttributeBomb.prepare,
    expect: bad,
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'nestingBomb',
    run: nestingBomb.behaviour,
    prepare: nestingBomb.prepare,
    expect: bad,
    boundMs: QUICK_MS,
  },
  {
    name: 'elementBomb',
    run: elementBomb.behaviour,
    prepare: elementBomb.prepare,
    expect: bad,
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'hugeText',
    run: hugeText.behaviour,
    prepare: hugeText.prepare,
    expect: bad,
    boundMs: QUICK_MS,
    long: true,
  },
  { name: 'gzipBomb', run: gzipBomb.behaviour, prepare: gzipBomb.prepare, expect: bad, boundMs: QUICK_MS },
  {
    name: 'redirect301Loopback',
    run: redirect301Loopback,
    expect: ['wholesaler_http_error'],
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'redirect302Elsewhere',
    run: redirect302Elsewhere,
    expect: ['wholesaler_http_error'],
    boundMs: QUICK_MS,
  },
  {
    name: 'redirect307Loopback',
    run: redirect307Loopback,
    expect: ['wholesaler_http_error'],
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'redirect308Port1',
    run: redirect308Port1,
    expect: ['wholesaler_http_error'],
    boundMs: QUICK_MS,
    long: true,
  },
  { name: 'status401', run: status401, expect: ['wholesaler_credentials_rejected'], boundMs: QUICK_MS },
  {
    name: 'status403',
    run: status403,
    expect: ['wholesaler_credentials_rejected'],
    boundMs: QUICK_MS,
    long: true,
  },
  { name: 'html500', run: html500, expect: ['wholesaler_http_error'], boundMs: QUICK_MS, long: true },
  {
    name: 'hugeErrorPage',
    run: hugeErrorPage.behaviour,
    prepare: hugeErrorPage.prepare,
    expect: ['wholesaler_http_error'],
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'html503RetryAfter',
    run: html503RetryAfter,
    expect: ['wholesaler_unavailable'],
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'serverFault',
    run: serverFault.behaviour,
    prepare: serverFault.prepare,
    expect: ['wholesaler_fault'],
    boundMs: QUICK_MS,
  },
  {
    name: 'validationFault',
    run: validationFault.behaviour,
    prepare: validationFault.prepare,
    expect: ['wholesaler_rejected_request'],
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'authorizationFault',
    run: authorizationFault.behaviour,
    prepare: authorizationFault.prepare,
    expect: ['wholesaler_function_not_agreed'],
    boundMs: QUICK_MS,
    long: true,
  },
  {
    name: 'denialOfServiceFault',
    run: denialOfServiceFault.behaviour,
    prepare: denialOfServiceFault.prepare,
    expect: ['wholesaler_throttled'],
    boundMs: QUICK_MS,
  },
  {
    name: 'unknownDeliveryFault',
    run: unknownDeliveryFault.behaviour,
    prepare: unknownDeliveryFault.prepare,
    expect: ['wholesaler_fault', 'delivery_not_found'],
    boundMs: QUICK_MS,
    long: true,
  },
  { name: 'foreignFault', run: foreignFault, expect: ['wholesaler_fault'], boundMs: QUICK_MS, long: true },
  {
    name: 'hugeFault',
    run: hugeFault.behaviour,
    prepare: hugeFault.prepare,
    expect: ['wholesaler_fault', ...bad],
    boundMs: QUICK_MS,
    long: true,
  },
  { name: 'garbageBytes', run: garbageBytes, expect: bad, boundMs: QUICK_MS },
  { name: 'wrongContentType', run: wrongContentType, expect: ['ok', ...bad], boundMs: QUICK_MS, long: true },
  { name: 'invalidUtf8', run: invalidUtf8, expect: ['ok', ...bad], boundMs: QUICK_MS, long: true },
  { name: 'utf8Bom', run: utf8Bom, expect: ['ok', ...bad], boundMs: QUICK_MS, long: true },
  { name: 'utf16Bom', run: utf16Bom, expect: ['ok', ...bad], boundMs: QUICK_MS, long: true },
  { name: 'truncatedXml', run: truncatedXml, expect: bad, boundMs: QUICK_MS },
  { name: 'wrongNamespace', run: wrongNamespace, expect: bad, boundMs: QUICK_MS, long: true },
  { name: 'soap11Envelope', run: soap11Envelope, expect: bad, boundMs: QUICK_MS, long: true },
  { name: 'wrongOperation', run: wrongOperation, expect: bad, boundMs: QUICK_MS, long: true },
  { name: 'emptyBody200', run: emptyBody200, expect: bad, boundMs: QUICK_MS, long: true },
  { name: 'chunkedBadSize', run: chunkedBadSize, expect: broke, boundMs: QUICK_MS },
  { name: 'chunkedNeverEnds', run: chunkedNeverEnds, expect: late, boundMs: TIMEOUT_MS, long: true },
  { name: 'http09Junk', run: http09Junk, expect: broke, boundMs: QUICK_MS },
  { name: 'statusLineJunk', run: statusLineJunk, expect: broke, boundMs: QUICK_MS, long: true },
  { name: 'continueLoop', run: continueLoop, expect: [...late, ...broke], boundMs: TIMEOUT_MS, long: true },
  { name: 'hugeHeader', run: hugeHeader, expect: broke, boundMs: QUICK_MS },
  { name: 'manyHeaders', run: manyHeaders, expect: broke, boundMs: QUICK_MS, long: true },
  {
    name: 'slowlorisHeaders',
    run: slowlorisHeaders,
    expect: [...late, ...broke],
    boundMs: TIMEOUT_MS,
    long: true,
  },
  { name: 'contentLengthTooShort', run: contentLengthTooShort, expect: broke, boundMs: QUICK_MS, long: true },
];
