import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_BYTES } from '../operations/dokument-abfragen.js';
import {
  DEFAULT_LIMITS,
  decodeEntities,
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_ATTRIBUTES,
  MAX_DEPTH,
  MAX_ELEMENTS,
  MAX_NAME_LENGTH,
  MAX_TEXT_LENGTH,
  parseXml,
  readStartTag,
  XmlError,
} from './parse.js';
import { PlainShape } from './plain.js';
import { isNil, XSI_NS } from './read.js';

const NS = 'urn:msv3:v2';

describe('parseXml', () => {
  it('resolves namespaces whatever the prefix, including default namespaces', () => {
    const a = parseXml(`<m:a xmlns:m="${NS}"><m:b>1</m:b></m:a>`);
    const b = parseXml(`<ns2:a xmlns:ns2="${NS}"><ns2:b>1</ns2:b></ns2:a>`);
    const c = parseXml(`<a xmlns="${NS}"><b>1</b></a>`);
    for (const root of [a, b, c]) {
      expect(root.ns).toBe(NS);
      expect(root.local).toBe('a');
      expect(root.child(NS, 'b')?.text()).toBe('1');
    }
  });

  it('keeps unqualified children unqualified when the parent uses a prefix, and undeclares a default', () => {
    const root = parseXml(`<m:w xmlns:m="${NS}"><c>x</c><d xmlns=""><m:e>y</m:e></d></m:w>`);
    expect(root.child('', 'c')?.text()).toBe('x');
    expect(root.child('', 'd')?.child(NS, 'e')?.text()).toBe('y');
  });

  it('ignores comments, processing instructions and whitespace between elements', () => {
    const root = parseXml(
      `<?xml version="1.0"?>\n<!-- lead -->\n<a>\n  <!-- inner -->\n  <b>v<!-- split -->w</b>\n  <?pi x?>\n</a>\n<!-- tail -->\n`,
    );
    expect(root.children.map((c) => c.local)).toEqual(['b']);
    expect(root.child('', 'b')?.text()).toBe('vw');
  });

  it('decodes the five entities and numeric references, and CDATA literally', () => {
    const root = parseXml(
      '<a x="&quot;&lt;&#x41;&#66;"><b>&amp;&apos;&gt;&#228;</b><c><![CDATA[<&amp;>]]></c></a>',
    );
    expect(root.attr('x')).toBe('"<AB');
    expect(root.child('', 'b')?.text()).toBe("&'>ä");
    expect(root.child('', 'c')?.text()).toBe('<&amp;>');
  });

  it('allows > inside attribute values and attributes across lines', () => {
    const root = parseXml('<a\n  x="1>2"\n  y=\'z\'><b/></a>');
    expect(root.attr('x')).toBe('1>2');
    expect(root.attr('y')).toBe('z');
    expect(root.children).toHaveLength(1);
  });

  it('finds xsi:nil under any prefix', () => {
    const root = parseXml(`<a xmlns:i="${XSI_NS}"><b i:nil="true"/><c>1</c></a>`);
    expect(isNil(root.child('', 'b')!)).toBe(true);
    expect(isNil(root.child('', 'c')!)).toBe(false);
    expect(root.child('', 'b')!.attrNS(XSI_NS, 'nil')).toBe('true');
  });

  it('skips a byte order mark', () => {
    expect(parseXml('\uFEFF<a/>').local).toBe('a');
  });

  it.each([
    ['a DOCTYPE', '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', /DOCTYPE/],
    ['an external entity', '<!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>', /DOCTYPE/],
    ['an unknown entity', '<a>&nbsp;</a>', /unknown entity/],
    ['a bad character reference', '<a>&#0;</a>', /not an XML character/],
    ['mismatched tags', '<a><b></c></a>', /expected <\/b>/],
    ['a prefix mismatch in the closing tag', `<m:a xmlns:m="${NS}" xmlns:n="${NS}"></n:a>`, /expected/],
    ['an unclosed element', '<a><b>', /not closed/],
    ['two roots', '<a/><b/>', /more than one root/],
    ['text outside the root', 'x<a/>', /outside the root/],
    ['an undeclared prefix', '<p:a/>', /undeclared namespace prefix/],
    ['an unquoted attribute', '<a x=1/>', /unquoted/],
    ['a duplicate attribute', '<a x="1" x="2"/>', /duplicate/],
    ['an empty document', '   ', /no root/],
    ['an unterminated comment', '<a><!-- x</a>', /comment/],
  ])('refuses %s', (_name, xml, message) => {
    expect(() => parseXml(xml)).toThrow(XmlError);
    expect(() => parseXml(xml)).toThrow(message);
  });

  it('caps nesting depth', () => {
    const deep = `${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}`;
    expect(() => parseXml(deep)).toThrow(/nesting deeper than 64/);
    expect(parseXml(`${'<a>'.repeat(60)}${'</a>'.repeat(60)}`).local).toBe('a');
  });

  it('caps document size before parsing', () => {
    const big = `<a>${'x'.repeat(100)}</a>`;
    expect(() => parseXml(big, { maxLength: 50, maxDepth: 64 })).toThrow(/exceeds the limit/);
  });
});

/** The message of the XmlError that `parseXml(xml)` throws. */
function failure(xml: string, limits?: Parameters<typeof parseXml>[1]): string {
  try {
    parseXml(xml, limits);
  } catch (error) {
    expect(error).toBeInstanceOf(XmlError);
    return (error as XmlError).message;
  }
  throw new Error('parsed');
}

describe('parseXml caps (exactly at each cap passes, one over fails naming the cap)', () => {
  const attributes = (n: number) => Array.from({ length: n }, (_, i) => ` a${i}="1"`).join('');

  it('has the documented default values', () => {
    expect(DEFAULT_LIMITS).toEqual({
      maxLength: 4 * 1024 * 1024,
      maxDepth: 64,
      maxAttributes: 256,
      maxNameLength: 1024,
      maxElements: 65_536,
      maxTextLength: 3 * 1024 * 1024,
      maxAttributeValueLength: 64 * 1024,
    });
  });

  it('takes a document of maxLength characters and refuses one more', () => {
    const at = `<a>${'x'.repeat(43)}</a>`;
    expect(at).toHaveLength(50);
    expect(parseXml(at, { maxLength: 50 }).text()).toHaveLength(43);
    expect(failure(`<a>${'x'.repeat(44)}</a>`, { maxLength: 50 })).toBe(
      'document of 51 characters exceeds the limit of 50 (maxLength)',
    );
  });

  it(`takes ${MAX_ATTRIBUTES} attributes on an element, namespace declarations included, and refuses one more`, () => {
    expect(parseXml(`<a${attributes(MAX_ATTRIBUTES)}/>`).attrs).toHaveLength(2 * MAX_ATTRIBUTES);
    expect(parseXml(`<a xmlns:p="${NS}"${attributes(MAX_ATTRIBUTES - 1)}></a>`).attr('a254')).toBe('1');
    const message = `more than ${MAX_ATTRIBUTES} attributes on element a (maxAttributes)`;
    expect(failure(`<a${attributes(MAX_ATTRIBUTES + 1)}/>`)).toBe(message);
    expect(failure(`<a xmlns:p="${NS}"${attributes(MAX_ATTRIBUTES)}></a>`)).toBe(message);
    // Also where the plain readers read a tag, and after a remembered (predicted) name.
    expect(() => readStartTag(`<a${attributes(MAX_ATTRIBUTES + 1)}/>`, 0)).toThrow(new XmlError(message));
    parseXml('<r><b/><a x="1"/></r>');
    expect(failure(`<r><b/><a${attributes(MAX_ATTRIBUTES + 1)}/></r>`)).toBe(message);
  });

  it(`takes names of ${MAX_NAME_LENGTH} characters, prefix included, and refuses longer ones`, () => {
    const name = (length: number) => `p:${'n'.repeat(length - 2)}`;
    const element = (n: string, attrs = '') => `<r xmlns:p="${NS}"><${n}${attrs}>1</${n}></r>`;
    const attribute = (n: string) => `<r xmlns:p="${NS}"><e ${n}="1"/></r>`;
    expect(parseXml(element(name(MAX_NAME_LENGTH))).children[0]!.local).toHaveLength(MAX_NAME_LENGTH - 2);
    expect(parseXml(element(name(MAX_NAME_LENGTH), ' x="1"')).children[0]!.attr('x')).toBe('1');
    expect(parseXml(attribute(name(MAX_NAME_LENGTH))).children[0]!.attrs).toHaveLength(2);
    const message = `a name is longer than ${MAX_NAME_LENGTH} characters (maxNameLength)`;
    expect(failure(element(name(MAX_NAME_LENGTH + 1)))).toBe(message);
    expect(failure(element(name(MAX_NAME_LENGTH + 1), ' x="1"'))).toBe(message);
    expect(failure(attribute(name(MAX_NAME_LENGTH + 1)))).toBe(message);
  });

  it(`takes ${MAX_DEPTH} nested elements and refuses one more`, () => {
    const nested = (n: number) => `${'<a>'.repeat(n)}${'</a>'.repeat(n)}`;
    expect(parseXml(nested(MAX_DEPTH)).local).toBe('a');
    expect(failure(nested(MAX_DEPTH + 1))).toBe(`nesting deeper than ${MAX_DEPTH} levels (maxDepth)`);
  });

  it(`takes ${MAX_ELEMENTS} elements and refuses one more`, () => {
    const elements = (n: number) => `<r>${'<b/>'.repeat(n - 1)}</r>`;
    expect(parseXml(elements(MAX_ELEMENTS)).children).toHaveLength(MAX_ELEMENTS - 1);
    expect(failure(elements(MAX_ELEMENTS + 1))).toBe(`more than ${MAX_ELEMENTS} elements (maxElements)`);
  });

  it(`takes a text of ${MAX_TEXT_LENGTH} characters, however it is written, and refuses one more`, () => {
    const x = (n: number) => 'x'.repeat(n);
    const message = `text of element a is longer than ${MAX_TEXT_LENGTH} characters (maxTextLength)`;
    // A leaf read at once, one split by a comment, and one with references (counted decoded).
    expect(parseXml(`<r><a>${x(MAX_TEXT_LENGTH)}</a></r>`).children[0]!.text()).toHaveLength(MAX_TEXT_LENGTH);
    expect(parseXml(`<a>x<!---->${x(MAX_TEXT_LENGTH - 1)}</a>`).text()).toHaveLength(MAX_TEXT_LENGTH);
    expect(parseXml(`<a>&amp;${x(MAX_TEXT_LENGTH - 1)}</a>`).text()).toHaveLength(MAX_TEXT_LENGTH);
    expect(failure(`<r><a>${x(MAX_TEXT_LENGTH + 1)}</a></r>`)).toBe(message);
    expect(failure(`<a>x<!---->${x(MAX_TEXT_LENGTH)}</a>`)).toBe(message);
    expect(failure(`<a>&amp;${x(MAX_TEXT_LENGTH)}</a>`)).toBe(message);
    // The largest MSV3 text, a Dokument of at most MAX_DOCUMENT_BYTES in base64 with line breaks, fits.
    expect(Math.ceil(MAX_DOCUMENT_BYTES / 3) * 4 * (78 / 76)).toBeLessThan(MAX_TEXT_LENGTH);
  });

  it(`takes attribute values of ${MAX_ATTRIBUTE_VALUE_LENGTH} characters and refuses longer ones`, () => {
    const value = (n: number) => 'v'.repeat(n);
    expect(parseXml(`<a x="${value(MAX_ATTRIBUTE_VALUE_LENGTH)}"/>`).attr('x')).toHaveLength(
      MAX_ATTRIBUTE_VALUE_LENGTH,
    );
    expect(failure(`<a x='${value(MAX_ATTRIBUTE_VALUE_LENGTH + 1)}'/>`)).toBe(
      `attribute x of element a is longer than ${MAX_ATTRIBUTE_VALUE_LENGTH} characters (maxAttributeValueLength)`,
    );
  });

  it('takes caps raised (or lowered) through its options', () => {
    expect(parseXml(`<a${attributes(1000)}/>`, { maxAttributes: 1000 }).attrs).toHaveLength(2000);
    expect(failure(`<a${attributes(3)}/>`, { maxAttributes: 2 })).toMatch(/maxAttributes/);
    expect(failure('<a><b/><b/></a>', { maxElements: 2 })).toBe('more than 2 elements (maxElements)');
    expect(failure('<a>xyz</a>', { maxTextLength: 2 })).toMatch(/maxTextLength/);
  });

  it('never echoes a hostile name at length', () => {
    const long = 'n'.repeat(100_000);
    for (const xml of [`<${long}>`, `<a ${long}="1"/>`, `<a>1</${long}>`, `<${long.slice(0, 1000)}>`]) {
      expect(failure(xml).length).toBeLessThan(120);
    }
  });
});

describe('parseXml duplicate attributes', () => {
  it('refuses the same name twice, among few attributes or many', () => {
    expect(failure('<a x="1" y="2" x="3"/>')).toBe('duplicate attribute x in <a>');
    const many = Array.from({ length: 40 }, (_, i) => ` a${i}="1"`).join('');
    expect(failure(`<a${many} a7="2"/>`)).toBe('duplicate attribute a7 in <a>');
    expect(failure(`<a${many} a39="2"/>`)).toBe('duplicate attribute a39 in <a>');
    expect(parseXml(`<a${many}/>`).attrs).toHaveLength(80);
  });

  it('refuses two prefixes bound to one namespace for the same local name (Namespaces in XML §6.3)', () => {
    expect(failure(`<a xmlns:p="${NS}" xmlns:q="${NS}" p:x="1" q:x="2"/>`)).toBe(
      'duplicate attribute q:x in <a> (same namespace and name)',
    );
    // Bound above the element, or one of them here; and the same with many attributes.
    expect(failure(`<r xmlns:p="${NS}"><a xmlns:q="${NS}" q:x="1" p:x="2"/></r>`)).toMatch(
      /duplicate attribute p:x/,
    );
    expect(failure(`<r xmlns:p="${NS}" xmlns:q="${NS}"><a q:x="1" p:x="2"></a></r>`)).toMatch(/duplicate/);
    const many = Array.from({ length: 40 }, (_, i) => ` a${i}="1"`).join('');
    expect(failure(`<a xmlns:p="${NS}" xmlns:q="${NS}"${many} p:x="1" q:x="2"/>`)).toMatch(/duplicate/);
  });

  it('takes one local name in different namespaces, unqualified, or under undeclared prefixes', () => {
    const a = parseXml(`<a xmlns:p="${NS}" xmlns:q="urn:other" p:x="1" q:x="2" x="3"/>`);
    expect([a.attrNS(NS, 'x'), a.attrNS('urn:other', 'x'), a.attr('x')]).toEqual(['1', '2', '3']);
    // As before: an undeclared attribute prefix is not resolved by the parser (attrNS finds nothing).
    expect(parseXml('<a p:x="1" q:x="2"/>').attrNS(NS, 'x')).toBeUndefined();
  });
});

describe('the plain readers keep the caps', () => {
  it('gives up on a text longer than maxTextLength, which parseXml refuses', () => {
    const at = new PlainShape(`<a>${'x'.repeat(MAX_TEXT_LENGTH)}</a>`, 0);
    at.leaf('<a>', '</a>');
    expect(at.textEnd - at.textStart).toBe(MAX_TEXT_LENGTH);
    const over = new PlainShape(`<a>${'x'.repeat(MAX_TEXT_LENGTH + 1)}</a>`, 0);
    expect(() => over.leaf('<a>', '</a>')).toThrow();
  });

  it('gives up after more tags than maxElements', () => {
    const shape = new PlainShape('<b/>'.repeat(MAX_ELEMENTS + 1), 0);
    for (let i = 0; i < MAX_ELEMENTS; i++) shape.expect('<b/>');
    expect(() => shape.expect('<b/>')).toThrow();
  });
});

describe('parseXml name memo', () => {
  interface Tree {
    name: string;
    children: Tree[];
    text: string;
  }
  // Names of one length that share the characters the memo hashes, so they compete for the same slots.
  const collidingName = fc
    .tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.constantFrom('e', 'f', 'g'), fc.constantFrom('', 'p:'))
    .map(([x, y, prefix]) => `${prefix}${x}${y}xyz`);
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
    node: fc.record({
      name: collidingName,
      children: fc.oneof(
        { depthSize: 'small', maxDepth: 6 },
        fc.constant<Tree[]>([]),
        fc.array(tie('node'), { maxLength: 4 }),
      ),
      text: fc.constantFrom('', '1', 'x y'),
    }),
  })).node;
  const write = (t: Tree): string =>
    t.children.length === 0
      ? `<${t.name}>${t.text}</${t.name}>`
      : `<${t.name}>${t.children.map(write).join('')}</${t.name}>`;
  const shape = (t: Tree): unknown => [
    t.name.replace('p:', ''),
    t.children.length === 0 ? t.text : t.children.map(shape),
  ];
  const parsedShape = (e: ReturnType<typeof parseXml>): unknown => [
    e.local,
    e.children.length === 0 ? e.text() : e.children.map(parsedShape),
  ];

  it('reads every name correctly while colliding names evict each other', () => {
    fc.assert(
      fc.property(tree, (t) => {
        const root = parseXml(`<r xmlns:p="${NS}">${write(t)}</r>`);
        expect(parsedShape(root.children[0]!)).toEqual(shape(t));
      }),
      { numRuns: 300 },
    );
  });

  it('reads every name correctly where the predicted next name is wrong or only a prefix of it', () => {
    // Names that are prefixes of each other, written as <n>, <n/>, <n a="…"> or <n a="…"/>, so the
    // names remembered after each name are often wrong, or right but followed by something else.
    const child = fc.record({
      name: fc.constantFrom('b', 'bc', 'bcd', 'p:b', 'p:bc', 'c'),
      attr: fc.constantFrom('', ' x="1"', "\n  y='2'"),
      empty: fc.boolean(),
      text: fc.constantFrom('', '7', ' a b '),
    });
    const write = (c: { name: string; attr: string; empty: boolean; text: string }) =>
      c.empty ? `<${c.name}${c.attr}/>` : `<${c.name}${c.attr}>${c.text}</${c.name}>`;
    fc.assert(
      fc.property(fc.array(child, { minLength: 1, maxLength: 12 }), fc.constantFrom('', '\n  '), (cs, ws) => {
        const root = parseXml(`<r xmlns:p="${NS}">${ws}${cs.map(write).join(ws)}${ws}</r>`);
        expect(
          root.children.map((e) => [e.ns === NS ? 'p:' : '', e.local, e.attr('x') ?? e.attr('y'), e.text()]),
        ).toEqual(
          cs.map((c) => [
            c.name.startsWith('p:') ? 'p:' : '',
            c.name.replace('p:', ''),
            c.attr === '' ? undefined : c.attr.includes('x') ? '1' : '2',
            c.empty ? '' : c.text,
          ]),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('refuses broken tags after a predicted name with the same messages as elsewhere', () => {
    const cases: [string, string][] = [
      ['<r><a>1</a><b x="1"', 'unterminated start tag'],
      ['<r><a>1</a><b', 'unterminated start tag'],
      ['<r><a>1</a><b x="1/></r>', 'unterminated attribute x in <b>'],
      ['<r><a>1</a><b/x></r>', 'malformed start tag <b>'],
      ['<r><a>1</a><b x="1" x="2"/></r>', 'duplicate attribute x in <b>'],
      ['<r><a>1</a><b x="1"/><c></d></r>', 'expected </c>'],
      ['<r><a>1</a><b x="1"/><c/></r><c/>', 'more than one root element'],
    ];
    for (const [xml, message] of cases) {
      parseXml('<r><a>1</a><b x="1"/><c/></r>'); // so that b follows a, and c follows b
      expect(() => parseXml(xml)).toThrow(new XmlError(message));
    }
  });

  it('still refuses an end tag that differs from a remembered start tag', () => {
    parseXml('<r><m:Menge>1</m:Menge></r>'.replace(/m:/g, ''));
    expect(() => parseXml('<r><Menge>1</Mengf></r>')).toThrow(/expected <\/Menge>/);
    expect(() => parseXml('<r><Menge>1</Menge2></r>')).toThrow(/expected <\/Menge>/);
  });

  it('reads leaves read at once (text, then their own end tag) exactly like any other element', () => {
    // Leaf contents that the one-step leaf reading takes (plain text) and ones it must hand back to
    // the general loop (references, comments, CDATA, child elements, a spaced or mismatched end tag).
    const leaf = fc.record({
      name: fc.constantFrom('a', 'ab', 'p:a', 'p:Lieferzeitpunkt'),
      content: fc.constantFrom<[string, string | null]>(
        ['', ''],
        ['42', '42'],
        [' x y ', ' x y '],
        ['a&amp;b', 'a&b'],
        ['v<!-- c -->w', 'vw'],
        ['<![CDATA[<x>]]>', '<x>'],
        ['<?pi x?>z', 'z'],
        ['<c>1</c>', null],
      ),
      spacedEnd: fc.boolean(),
      mismatched: fc.constantFrom(false, false, false, true),
    });
    fc.assert(
      fc.property(fc.array(leaf, { minLength: 1, maxLength: 10 }), fc.constantFrom('', '\n  '), (ls, ws) => {
        const xml = `<r xmlns:p="${NS}">${ws}${ls
          .map(
            (l) =>
              `<${l.name}>${l.content[0]}</${l.name}${l.mismatched ? 'x' : ''}${l.spacedEnd ? ' ' : ''}>`,
          )
          .join(ws)}${ws}</r>`;
        const broken = ls.find((l) => l.mismatched);
        if (broken !== undefined) {
          expect(() => parseXml(xml)).toThrow(new XmlError(`expected </${broken.name}>`));
          return;
        }
        const root = parseXml(xml);
        expect(
          root.children.map((e) => [e.local, e.children.length === 0 ? e.text() : e.children.length]),
        ).toEqual(ls.map((l) => [l.name.replace('p:', ''), l.content[1] ?? 1]));
      }),
      { numRuns: 500 },
    );
  });

  it('exposes plain text as a range of the source and decoded text only through text()', () => {
    const root = parseXml('<r><a> 42 </a><b>x&amp;y</b><c><![CDATA[z]]></c></r>');
    const [a, b, c] = root.children;
    expect(a!.sourceText.slice(a!.plainTextStart, a!.plainTextEnd)).toBe(' 42 ');
    expect(b!.plainTextStart).toBe(-1);
    expect(b!.text()).toBe('x&y');
    expect(c!.plainTextStart).toBe(-1);
    expect(c!.text()).toBe('z');
  });
});

describe('decodeEntities', () => {
  it('passes text without entities through and rejects unterminated references', () => {
    expect(decodeEntities('plain')).toBe('plain');
    expect(() => decodeEntities('a &amp b')).toThrow(XmlError);
  });
});
