import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEntities, parseXml, XmlError } from './parse.js';
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
