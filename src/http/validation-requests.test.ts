import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { type Gateway, type GatewayRequest, startGateway } from '../../test/gateway.js';

/**
 * Input validation through the real app: text a wholesaler cannot receive unchanged, dates that do not
 * exist and numbers in query strings that are not plain decimal integers are 400 `invalid_request`
 * naming the field, before anything is sent or stored.
 */

/** A character XML 1.0 cannot carry: C0 controls but tab/LF/CR, U+FFFE, U+FFFF, lone surrogates. */
const disallowedChar = fc
  .oneof(
    fc.integer({ min: 0, max: 0x1f }).filter((c) => c !== 0x9 && c !== 0xa && c !== 0xd),
    fc.constantFrom(0xfffe, 0xffff),
    fc.integer({ min: 0xd800, max: 0xdfff }),
  )
  .map((c) => String.fromCharCode(c));

/** Characters XML 1.0 can carry, including tab, LF, CR, U+FFFD and astral characters (surrogate pairs). */
const allowedChar = fc
  .oneof(
    fc.constantFrom(0x9, 0xa, 0xd, 0xfffd, 0xe000, 0x10000, 0x10ffff, 0xd7ff),
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0x20, max: 0xd7ff }),
    fc.integer({ min: 0xe000, max: 0xfffd }),
    fc.integer({ min: 0x10000, max: 0x10ffff }),
  )
  .map((c) => String.fromCodePoint(c));

const allowedText = (maxLength: number) => fc.array(allowedChar, { maxLength }).map((cs) => cs.join(''));

/** Allowed text with at least one disallowed character somewhere; lone surrogates stay lone. */
const textWithDisallowed = fc
  .tuple(allowedText(10), disallowedChar, allowedText(10))
  .filter(([before, bad, after]) => {
    // A lone lead surrogate followed by an astral pair's lead is still lone; but a lead followed by a
    // trail (or a trail after a lead) would form a valid pair.
    const lead = (s: string) => /[\uD800-\uDBFF]$/.test(s);
    const trail = (s: string) => /^[\uDC00-\uDFFF]/.test(s);
    return !(lead(before) && trail(bad)) && !(lead(bad) && trail(after));
  })
  .map(([before, bad, after]) => `${before}${bad}${after}`);

describeEachDialect('request validation', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  const item = (extra: Record<string, unknown> = {}) => ({
    tracking_number: 'LS-UNKNOWN',
    pzn: '4114918',
    quantity: 1,
    reason: 'damaged',
    ...extra,
  });

  async function expectInvalid(request: GatewayRequest, param: string) {
    const response = await gw.inject(request);
    expect({ status: response.statusCode, body: response.json() }).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', param, message: expect.stringContaining(param) },
    });
    return response.json() as { message: string };
  }

  // Control characters in strings used to be stripped by the XML writer, and the wholesaler got other text.

  it('refuses control characters, U+FFFE/U+FFFF and lone surrogates in a return batch, naming the item field', async () => {
    for (const url of ['/v1/returns', '/v1/returns/announce']) {
      for (const batch of ['A\u0000B', '\u0001', '\ud800', 'x\udc00', 'CH\uffff', '\ufffe', 'a\u001fb']) {
        const body = { wholesaler: 'phoenix', items: [item(), item({ batch })] };
        const { message } = await expectInvalid({ url, body }, 'items[1].batch');
        expect(message).toBe(
          batch.includes('\u0000')
            ? // Refused with the body, before the field's own rule (src/http/nul-characters.ts).
              '`items[1].batch` contains a NUL character (U+0000), which no value of it can hold.'
            : '`items[1].batch` must not contain control characters (other than tab, line feed and carriage return), U+FFFE, U+FFFF or unpaired surrogates.',
        );
      }
    }
  });

  it('sees a JSON \\ud800 escape as a lone surrogate and refuses it', async () => {
    const response = await gw.app.inject({
      method: 'POST',
      url: '/v1/returns',
      headers: {
        'content-type': 'application/json',
        'x-api-key': gw.keys.test.secret,
        'x-msv3-username': 'apo-lone',
        'x-msv3-password': 'pw',
      },
      payload:
        '{"wholesaler":"phoenix","items":[{"tracking_number":"LS1","pzn":"4114918","quantity":1,"reason":"damaged","batch":"\\ud800"}]}',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request', param: 'items[0].batch' });
  });

  it('refuses such characters in company details, a custom wholesaler name and endpoint and a webhook url', async () => {
    const announce = (company: Record<string, string>) => ({
      url: '/v1/returns/announce',
      body: { wholesaler: 'phoenix', items: [item()], company },
    });
    for (const field of [
      'registry_court',
      'commercial_register_number',
      'vat_id',
      'tax_number',
      'bank_name',
      'bic',
      'iban',
    ]) {
      await expectInvalid(announce({ [field]: 'DE12\u00003456' }), `company.${field}`);
      await expectInvalid(announce({ [field]: '\ud83d' }), `company.${field}`);
    }
    const register = (body: Record<string, string>) => ({
      url: '/v1/wholesalers/custom',
      body,
      credentials: null,
    });
    const endpoint = 'https://93.184.216.34/msv3/v2.0';
    await expectInvalid(register({ name: 'Haus\u0007apotheke', endpoint }), 'name');
    await expectInvalid(register({ name: '\u0001', endpoint }), 'name');
    await expectInvalid(register({ name: 'Nord\udfff', endpoint }), 'name');
    await expectInvalid(register({ name: ' \t ', endpoint }), 'name');
    await expectInvalid(register({ name: 'Nord', endpoint: `${endpoint}\u0000` }), 'endpoint');
    await expectInvalid(
      {
        url: '/v1/webhooks',
        body: { url: 'https://hooks.example/\u0000msv3', wholesaler: 'phoenix', events: ['order.placed'] },
        credentials: null,
      },
      'url',
    );
  });

  it('sends a batch of tab, line breaks, U+FFFD and astral characters to the wholesaler unchanged', async () => {
    const batch = 'CH\t1\r\n2\uFFFD\u{1F48A}\u{10FFFF}Z';
    for (const url of ['/v1/returns', '/v1/returns/announce']) {
      const response = await gw.inject({ url, body: { wholesaler: 'phoenix', items: [item({ batch })] } });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      const echoed = url === '/v1/returns' ? body.items[0] : body.portions[0].items[0];
      expect(echoed.batch).toBe(batch);
    }
  });

  test.prop([fc.integer({ min: 0, max: 3 }), textWithDisallowed], { numRuns: 60 })(
    'refuses any batch with a character XML 1.0 cannot carry, naming that item',
    async (index, batch) => {
      const items = [item(), item(), item(), item()];
      items[index] = item({ batch });
      const response = await gw.inject({ url: '/v1/returns', body: { wholesaler: 'phoenix', items } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_request', param: `items[${index}].batch` });
    },
  );

  test.prop([fc.array(allowedChar, { minLength: 1, maxLength: 50 }).map((cs) => cs.join(''))], {
    numRuns: 40,
  })('accepts any batch of characters XML 1.0 can carry', async (batch) => {
    const response = await gw.inject({
      url: '/v1/returns',
      body: { wholesaler: 'phoenix', items: [item({ batch })] },
    });
    expect(response.statusCode).toBe(200);
    // The XML reader trims text, so only a batch without white space at its ends comes back as it was.
    if (batch === batch.trim()) expect(response.json().items[0].batch).toBe(batch);
  });

  // Impossible calendar dates used to reach the wholesaler (422 `not an xs:date`) or filtered nothing.

  it('refuses an expiry date that does not exist, naming the item field', async () => {
    for (const url of ['/v1/returns', '/v1/returns/announce']) {
      for (const expiry_date of [
        '2026-02-30',
        '2025-02-29',
        '2026-13-01',
        '2026-00-10',
        '2026-04-31',
        '2026-01-00',
      ]) {
        const body = { wholesaler: 'phoenix', items: [item(), item({ expiry_date })] };
        const { message } = await expectInvalid({ url, body }, 'items[1].expiry_date');
        expect(message).toBe('`items[1].expiry_date` must be a date such as 2026-11-25.');
      }
    }
    const leapDay = await gw.inject({
      url: '/v1/returns',
      body: { wholesaler: 'phoenix', items: [item({ expiry_date: '2028-02-29' })] },
    });
    expect(leapDay.statusCode).toBe(200);
    expect(leapDay.json().items[0].expiry_date).toBe('2028-02-29');
  });

  const history = (query: Record<string, string>) => ({
    url: '/v1/deliveries/history',
    query: { wholesaler: 'phoenix', ...query },
  });

  it('refuses a delivery history date that does not exist, naming the query parameter', async () => {
    await expectInvalid(history({ date_from: '2026-13-45' }), 'date_from');
    await expectInvalid(history({ date_from: '2026-02-30' }), 'date_from');
    await expectInvalid(history({ date_to: '2100-02-29' }), 'date_to');
    expect((await gw.inject(history({ date_from: '2024-02-29', date_to: '2026-12-31' }))).statusCode).toBe(
      200,
    );
  });

  // `limit=1.5` used to list 1 notice, `0x10` 16, `%2010` 10: query text went through Number() and truncation.

  const NOT_DECIMAL_INTEGERS = [
    '1.5',
    '2.9',
    '0x10',
    '0b11',
    '0o7',
    ' 10',
    '10 ',
    '1e1',
    '+5',
    'true',
    '',
    '1,5',
  ];

  it('refuses a delivery history limit that is not a plain decimal integer, naming the parameter', async () => {
    for (const limit of NOT_DECIMAL_INTEGERS) {
      const { message } = await expectInvalid(history({ limit }), 'limit');
      expect(message).toBe('Query parameter `limit` must be a whole number.');
    }
    await expectInvalid(history({ limit: '0' }), 'limit');
    await expectInvalid(history({ limit: '101' }), 'limit');
    await expectInvalid(history({ limit: '-1' }), 'limit');
    for (const limit of ['1', '100', '020'])
      expect((await gw.inject(history({ limit }))).statusCode).toBe(200);
  });

  it('refuses a webhook delivery list limit that is not a plain decimal integer, naming the parameter', async () => {
    const deliveries = (limit: string) => ({
      url: '/v1/webhooks/whk_nonexistent/deliveries',
      query: { limit },
      credentials: null,
    });
    for (const limit of NOT_DECIMAL_INTEGERS) await expectInvalid(deliveries(limit), 'limit');
    // A good limit passes validation and reaches the handler, which does not know the subscription.
    const known = await gw.inject(deliveries('5'));
    expect(known.statusCode).toBe(404);
  });

  test.prop([fc.integer({ min: 1, max: 100 }), fc.constantFrom('', '.0', '.5', 'e0', ' ', '\t')], {
    numRuns: 40,
  })('reads a limit only from plain decimal digits', async (limit, suffix) => {
    const response = await gw.inject(history({ limit: `${limit}${suffix}` }));
    expect(response.statusCode).toBe(suffix === '' ? 200 : 400);
  });
});
