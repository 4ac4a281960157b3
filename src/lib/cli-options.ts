/** What `node:util` parseArgs gives a command for its options. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A command line the command cannot use: printed with its usage line, exit code 2. */
export class UsageProblem extends Error {}

/** The string value of option `name`, if it was given as one. */
export function textOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
