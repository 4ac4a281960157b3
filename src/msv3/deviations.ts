import type { XmlElement } from './xml/parse.js';
import { XSI_NS } from './xml/read.js';

/**
 * Deviations from the MSV3 schema that leave a wholesaler's answer one meaning, and which the gateway
 * therefore accepts when MSV3_TOLERATE_DEVIATIONS is on (docs/msv3.md "Tolerated deviations"). Each
 * name is what metrics, logs and the connection test report; the text tells the wholesaler what to fix.
 * Anything else that breaks the schema is refused.
 */
export const TOLERATED_DEVIATIONS = {
  qualified_return:
    'The answer\'s `return` element is in the MSV3 namespace; the XSD leaves it unqualified (as `xmlns=""` or no default namespace).',
  undeclared_xsi_prefix:
    'A nillable element carries `xsi:nil` without a declaration of the `xsi` prefix (`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`), so the answer is not namespace-well-formed.',
} as const;

export type DeviationName = keyof typeof TOLERATED_DEVIATIONS;

/**
 * Repairs the tolerated deviations in an answer's payload (the wrapper element and below) so that the
 * strict readers accept them, and names what it repaired. Runs only after a strict read has failed,
 * so answers without deviations never pay for it.
 *
 * - `qualified_return`: the wrapper's first child is `return` in the wrapper's (MSV3) namespace. Every
 *   MSV3 answer wrapper holds one unqualified `return` and the schemas declare no qualified element of
 *   that name, so it can mean nothing else: it is read as unqualified.
 * - `undeclared_xsi_prefix`: an element carries `xsi:nil` while no `xsi` prefix is declared. The prefix
 *   is assumed to mean the XSI namespace for that element only; the readers of nillable elements then
 *   read the nil, and every other reader still refuses the attribute (`checkAttributes` counts only
 *   declared prefixes), so it is accepted exactly where the XSD allows a nil.
 */
export function repairTolerated(wrapper: XmlElement): DeviationName[] {
  const repaired: DeviationName[] = [];
  const first = wrapper.children[0];
  if (first !== undefined && first.local === 'return' && first.ns !== '' && first.ns === wrapper.ns) {
    first.ns = '';
    repaired.push('qualified_return');
  }
  if (assumeXsiForNils(wrapper)) repaired.push('undeclared_xsi_prefix');
  return repaired;
}

/** Binds an undeclared `xsi` on every element below `root` that uses it for `xsi:nil`; true if any. */
function assumeXsiForNils(root: XmlElement): boolean {
  let any = false;
  const pending = [root];
  for (let el = pending.pop(); el !== undefined; el = pending.pop()) {
    const a = el.attrs;
    if (a !== null && el.scope.resolve('xsi') === undefined) {
      for (let k = 0; k < a.length; k += 2) {
        if (a[k] === 'xsi:nil') {
          el.assumePrefix('xsi', XSI_NS);
          any = true;
          break;
        }
      }
    }
    for (const child of el.children) pending.push(child);
  }
  return any;
}
