import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/observability/logger.js';
import { type RunningServer, startServer } from '../src/server.js';
import { LISTEN_OPTIONS, runListenCommand } from '../src/webhooks/events/listen-command.js';

/**
 * The README's "First ten minutes" section as something a test can run (test/readme-tour.test.ts).
 *
 * `readTour(readme)` takes the section's ```sh blocks apart into commands: shell lines (`\` joins
 * lines, `# …` comments are dropped, `<<EOF` heredocs belong to their line). `runTourWithFetch` runs
 * them as their exact HTTP equivalents with fetch, understanding only what the README uses and failing
 * on anything else: `NAME=value`, `NAME=$(jq -r 'FILTER' FILE)` (FILTER a path such as
 * `.deliveries[-1].tracking_number`), `mkdir -p DIR` (noted: files may go there), `[NAME=value …] npx tsx
 * src/cli.ts listen --url URL … --once` (run in-process, the assignments as its environment), and `curl`
 * pipelines with `-s`, `-S`, `-i`, `-H`, `-d` (`@-` reads the heredoc), `-o FILE`, `--fail` /
 * `--fail-with-body` (a status of 400 or more fails the run, as under `set -e`; `--fail` writes no
 * file), then optionally `| tee FILE` and `| jq …` / `| grep …` (display only). Files are written only
 * into folders made by `mkdir -p` before. `$NAME` and `"…$NAME…"` are expanded, `'…'` is literal; so are `$$` (each run is its
 * own shell with its own number) and `$(date +%s)`. `tourScript` gives the same commands as one bash
 * script.
 */

const TOUR_HEADING = '## First ten minutes';
/** What the README's commands call; tests put their own server there. */
const README_BASE_URL = 'http://127.0.0.1:8080';

export interface TourCommand {
  /** The command as printed (continuation lines joined, heredoc excluded). */
  text: string;
  /** The heredoc's lines, when the command has one. */
  heredoc?: { body: string; expand: boolean };
}

function tourSection(readme: string, heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`the page has no "${heading}" section`);
  const end = readme.indexOf('\n## ', start + heading.length + 2);
  return readme.slice(start + 1, end === -1 ? undefined : end + 1);
}

/** The ```sh blocks of the section, in order. */
function tourBlocks(readme: string, heading: string): string[] {
  const blocks: string[] = [];
  const fence = /^```sh\n([\s\S]*?)^```$/gm;
  for (const match of tourSection(readme, heading).matchAll(fence)) blocks.push(match[1]!);
  if (blocks.length === 0) throw new Error(`"${heading}" has no \`\`\`sh block`);
  return blocks;
}

/** The commands of a page's tour: the README's "First ten minutes", or another page's section. */
export function readTour(readme: string, heading = TOUR_HEADING): TourCommand[] {
  const commands: TourCommand[] = [];
  for (const block of tourBlocks(readme, heading)) {
    const lines = block.split('\n');
    for (let i = 0; i < lines.length; i++) {
      let text = stripComment(lines[i]!);
      while (text.endsWith('\\')) text = `${text.slice(0, -1)} ${stripComment(lines[++i] ?? '').trim()}`;
      text = text.trim();
      if (text === '') continue;
      const heredoc = /<<(['"]?)([A-Za-z_]+)\1/.exec(text);
      if (heredoc === null) {
        commands.push({ text });
        continue;
      }
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i]!);
      if (i >= lines.length) throw new Error(`heredoc ${heredoc[2]} is not closed: ${text}`);
      commands.push({ text, heredoc: { body: `${body.join('\n')}\n`, expand: heredoc[1] === '' } });
    }
  }
  return commands;
}

/** Drops a `#` comment that starts outside quotes after whitespace (or at the line's start). */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line;
}

type Token = { word: string } | { op: '|' | '<<' };

/** The one command substitution allowed inside words: the Unix time in seconds. */
const DATE_SECONDS = '$(date +%s)';

/** Each run is a shell of its own: `$$` differs between runs, as it does between two terminals. */
let shells = 0;

/** Shell words: quotes removed, `$NAME` / `${NAME}` expanded outside single quotes. */
export function tokenize(text: string, vars: Record<string, string>): Token[] {
  const tokens: Token[] = [];
  let word: string | null = null;
  const expand = (from: number): [string, number] => {
    if (text[from + 1] === '$') {
      const pid = vars.$;
      if (pid === undefined) throw new Error(`$$ is not set (command: ${text})`);
      return [pid, from + 2];
    }
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(text.slice(from));
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(from));
    const match = braced ?? plain;
    if (match === null) return ['$', from + 1];
    const value = vars[match[1]!];
    if (value === undefined) throw new Error(`$${match[1]} is not set (command: ${text})`);
    return [value, from + match[0].length];
  };
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      if (word !== null) tokens.push({ word });
      word = null;
      i++;
    } else if (c === '|' && word === null) {
      tokens.push({ op: '|' });
      i++;
    } else if (text.startsWith('<<', i) && word === null) {
      tokens.push({ op: '<<' });
      i = /^<<['"]?[A-Za-z_]+['"]?/.exec(text.slice(i))![0].length + i;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unclosed ' in: ${text}`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      word ??= '';
      for (i++; i < text.length && text[i] !== '"'; ) {
        if (text[i] === '\\' && /["\\$`]/.test(text[i + 1] ?? '')) {
          word += text[i + 1];
          i += 2;
        } else if (text[i] === '$') {
          const [value, next] = expand(i);
          word += value;
          i = next;
        } else word += text[i++];
      }
      if (text[i] !== '"') throw new Error(`unclosed " in: ${text}`);
      i++;
    } else if (text.startsWith(DATE_SECONDS, i)) {
      word = (word ?? '') + String(Math.floor(Date.now() / 1000));
      i += DATE_SECONDS.length;
    } else if (c === '$') {
      if (text.startsWith('$(', i))
        throw new Error(`command substitution only as $(date +%s) or NAME=$(jq …): ${text}`);
      const [value, next] = expand(i);
      word = (word ?? '') + value;
      i = next;
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  if (word !== null) tokens.push({ word });
  return tokens;
}

interface TourRequest {
  method: string;
  /** The URL as printed (with variables expanded), before the base URL is replaced. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface TourExchange {
  request: TourRequest;
  status: number;
  headers: Headers;
  body: Buffer;
  /** The parsed JSON body, or undefined when it is not JSON. */
  json: unknown;
}

/** One `npx tsx src/cli.ts listen …` of the tour, run in-process (it must have `--once`). */
interface TourListen {
  args: string[];
  code: number;
  stdout: string[];
  stderr: string[];
}

export interface TourRun {
  exchanges: TourExchange[];
  listens: TourListen[];
  vars: Record<string, string>;
  files: Map<string, Buffer>;
  /** The folders `mkdir -p` made, in order. */
  folders: string[];
}

/**
 * Runs the commands with fetch against `baseUrl` (instead of README_BASE_URL); `KEY=…` is set to `key`
 * (the user pastes theirs there).
 */
export async function runTourWithFetch(
  commands: readonly TourCommand[],
  baseUrl: string,
  key: string,
): Promise<TourRun> {
  const run: TourRun = {
    exchanges: [],
    listens: [],
    vars: { $: `${process.pid}${++shells}` },
    files: new Map(),
    folders: [],
  };
  const checkFolder = (file: string, text: string) => {
    if (!run.folders.some((folder) => file.startsWith(`${folder.replace(/\/$/, '')}/`)))
      throw new Error(`${file} is not in a folder the tour made (mkdir -p) before: ${text}`);
  };
  for (const command of commands) {
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(command.text);
    if (assignment !== null && !ENV_PREFIX.test(command.text)) {
      const [, name, value] = assignment as unknown as [string, string, string];
      run.vars[name] = name === 'KEY' ? key : assign(value, run, command.text);
      continue;
    }
    const stdin = command.heredoc && expandHeredoc(command.heredoc, run.vars);
    const pipeline = splitPipeline(tokenize(command.text, run.vars), command.text);
    const [first, ...rest] = pipeline;
    const env: Record<string, string> = {};
    while (first !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(first[0] ?? '')) {
      const word = first.shift()!;
      env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
    }
    const curl = first;
    if (first?.[0] === 'mkdir' && first[1] === '-p' && first.length === 3 && rest.length === 0) {
      run.folders.push(first[2]!);
      continue;
    }
    if (curl?.join(' ').startsWith(CLI_LISTEN)) {
      run.listens.push(
        await runListen(curl.slice(CLI_LISTEN.split(' ').length), rest, baseUrl, env, command.text),
      );
      continue;
    }
    if (Object.keys(env).length > 0)
      throw new Error(`only listen takes variables before the command: ${command.text}`);
    if (curl?.[0] !== 'curl') throw new Error(`only curl pipelines are understood: ${command.text}`);
    const { request, output, fail, include } = parseCurl(curl.slice(1), stdin, command.text);
    if (!request.url.startsWith(README_BASE_URL))
      throw new Error(`the tour must call ${README_BASE_URL}: ${command.text}`);
    for (const stage of rest) {
      if (!((stage[0] === 'tee' && stage.length === 2) || stage[0] === 'jq' || stage[0] === 'grep'))
        throw new Error(`unknown pipeline stage "${stage.join(' ')}": ${command.text}`);
    }
    if (include && (output !== undefined || rest.some((stage) => stage[0] !== 'grep')))
      throw new Error(`-i puts the headers into the output; only | grep may read it: ${command.text}`);
    const targets = [output, ...rest.filter((stage) => stage[0] === 'tee').map((stage) => stage[1])];
    for (const file of targets) if (file !== undefined) checkFolder(file, command.text);
    const response = await fetch(`${baseUrl}${request.url.slice(README_BASE_URL.length)}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    const body = Buffer.from(await response.arrayBuffer());
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
    run.exchanges.push({ request, status: response.status, headers: response.headers, body, json });
    const failed = fail !== undefined && response.status >= 400;
    if (output !== undefined && !(failed && fail === 'silent')) run.files.set(output, body);
    for (const stage of rest) if (stage[0] === 'tee') run.files.set(stage[1]!, body);
    if (failed) {
      // Stops the run as `set -e` would; the answers so far say which step went wrong first.
      const statuses = run.exchanges.map((e) => `  ${e.status} ${e.request.method} ${e.request.url}`);
      throw new Error(
        `curl --fail${fail === 'body' ? '-with-body' : ''}: ${response.status} from ${request.method} ${request.url}: ${body}\nanswers so far:\n${statuses.join('\n')}`,
      );
    }
  }
  return run;
}

/** The CLI as the README runs it from a checkout. */
const CLI_LISTEN = 'npx tsx src/cli.ts listen';

/** `NAME=value command …`: a variable for that one command (its environment), not an assignment. */
const ENV_PREFIX = /^[A-Za-z_][A-Za-z0-9_]*=(?!\$\()("[^"]*"|'[^']*'|[^\s'"]+)\s+\S/;

/**
 * `listen` with `--once` (so it ends by itself) and `--url` (the gateway, as every other step names it),
 * in-process against `baseUrl`, with the command's own variables as its whole environment, its stdout
 * only piped to `jq` (display). Exit code 0 is required, as under `set -e` with pipefail.
 */
async function runListen(
  args: string[],
  rest: string[][],
  baseUrl: string,
  env: Record<string, string>,
  text: string,
): Promise<TourListen> {
  const { values } = parseArgs({ args, options: LISTEN_OPTIONS, strict: true, allowPositionals: false });
  if (values.once !== true) throw new Error(`listen in the tour must end by itself (--once): ${text}`);
  if (values.url !== README_BASE_URL)
    throw new Error(
      `listen in the tour names the gateway as every step does (--url ${README_BASE_URL}): ${text}`,
    );
  if (rest.some((stage) => stage[0] !== 'jq')) throw new Error(`listen may only be piped to jq: ${text}`);
  const listen: TourListen = { args, code: -1, stdout: [], stderr: [] };
  listen.code = await runListenCommand(
    { ...values, url: baseUrl },
    { env, stdout: (line) => listen.stdout.push(line), stderr: (line) => listen.stderr.push(line) },
  );
  if (listen.code !== 0) throw new Error(`${text}: exit code ${listen.code}\n${listen.stderr.join('\n')}`);
  return listen;
}

function splitPipeline(tokens: Token[], text: string): string[][] {
  const stages: string[][] = [[]];
  for (const token of tokens) {
    if ('op' in token) {
      if (token.op === '|') stages.push([]);
      continue; // `<<EOF`: the heredoc is the command's stdin
    }
    stages.at(-1)!.push(token.word);
  }
  if (stages.some((stage) => stage.length === 0)) throw new Error(`empty pipeline stage: ${text}`);
  return stages;
}

function parseCurl(
  args: string[],
  stdin: string | undefined,
  text: string,
): { request: TourRequest; output?: string; fail?: 'body' | 'silent'; include: boolean } {
  const headers: Record<string, string> = {};
  let fail: 'body' | 'silent' | undefined;
  let include = false;
  let method: string | undefined;
  let body: string | undefined;
  let url: string | undefined;
  let output: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new Error(`${arg} needs a value: ${text}`);
      return next;
    };
    if (arg === '-s' || arg === '-sS' || arg === '--silent' || arg === '-S') continue;
    if (arg === '-i' || arg === '-si' || arg === '-sSi' || arg === '--include') include = true;
    else if (arg === '--fail-with-body' || arg === '--fail' || arg === '-f') {
      const kind = arg === '--fail-with-body' ? 'body' : 'silent';
      if (fail !== undefined && fail !== kind)
        throw new Error(`--fail and --fail-with-body exclude each other: ${text}`);
      fail = kind;
    } else if (arg === '-H' || arg === '--header') {
      const header = value();
      const colon = header.indexOf(':');
      if (colon < 1) throw new Error(`bad header "${header}": ${text}`);
      headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (arg === '-d' || arg === '--data') {
      const data = value();
      if (data === '@-') {
        if (stdin === undefined) throw new Error(`-d @- without a heredoc: ${text}`);
        // curl -d strips newlines (CR/LF) from data read from a file or stdin.
        body = stdin.replace(/[\r\n]/g, '');
      } else if (data.startsWith('@')) throw new Error(`-d @file is not supported: ${text}`);
      else body = data;
    } else if (arg === '-X' || arg === '--request') method = value();
    else if (arg === '-o' || arg === '--output') output = value();
    else if (!arg.startsWith('-') && url === undefined) url = arg;
    else throw new Error(`unsupported curl argument "${arg}" (teach test/readme-tour.ts): ${text}`);
  }
  if (url === undefined) throw new Error(`curl without a URL: ${text}`);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['Content-Type'] = 'application/x-www-form-urlencoded'; // what curl -d sends by default
  return {
    request: { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body },
    ...(output === undefined ? {} : { output }),
    ...(fail === undefined ? {} : { fail }),
    include,
  };
}

function expandHeredoc(heredoc: { body: string; expand: boolean }, vars: Record<string, string>): string {
  if (!heredoc.expand) return heredoc.body;
  return heredoc.body.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => {
    const value = vars[name];
    if (value === undefined) throw new Error(`$${name} is not set (heredoc)`);
    return value;
  });
}

/** `value` of NAME=value: a plain word, or `$(jq -r 'FILTER' FILE)`. */
function assign(value: string, run: TourRun, text: string): string {
  const substitution = /^\$\((.*)\)$/.exec(value);
  if (substitution === null) {
    const words = tokenize(value, run.vars);
    if (words.length !== 1 || !('word' in words[0]!)) throw new Error(`unsupported assignment: ${text}`);
    return words[0].word;
  }
  const words = tokenize(substitution[1]!, run.vars).map((t) => ('word' in t ? t.word : '|'));
  if (words.length !== 4 || words[0] !== 'jq' || words[1] !== '-r')
    throw new Error(`only NAME=$(jq -r 'FILTER' FILE) is understood: ${text}`);
  const file = run.files.get(words[3]!);
  if (file === undefined) throw new Error(`${words[3]} was not written before: ${text}`);
  const result = jqPath(JSON.parse(file.toString('utf8')), words[2]!, text);
  return result === null || result === undefined
    ? 'null'
    : typeof result === 'string'
      ? result
      : JSON.stringify(result);
}

/** jq path filters: `.a.b`, `.a[0].b`, `.a[-1].b` (counted from the end), `.`. */
function jqPath(value: unknown, filter: string, text: string): unknown {
  if (!/^(\.[A-Za-z_][A-Za-z0-9_]*|\[-?\d+\])+$|^\.$/.test(filter.replace(/^\.(?=\[)/, '')))
    throw new Error(`jq filter "${filter}" is not a plain path: ${text}`);
  let current = value;
  for (const [, name, index] of filter.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]/g)) {
    if (current === null || typeof current !== 'object') return null;
    current =
      name !== undefined
        ? (current as Record<string, unknown>)[name]
        : Array.isArray(current)
          ? current.at(Number(index))
          : null;
  }
  return current;
}

/**
 * The section's commands as one bash script: `set -euo pipefail`, the README's base URL replaced by
 * `baseUrl` (in `listen --url` too), the `KEY=…` line by the real key. The script runs where `src/` and
 * `node_modules/` are the checkout's (the README's commands run in a checkout).
 */
export function tourScript(readme: string, baseUrl: string, key: string): string {
  const blocks = tourBlocks(readme, TOUR_HEADING).map((block) =>
    block
      .split('\n')
      .map((line) => (/^KEY=/.test(line) ? `KEY='${key}'` : line))
      .join('\n')
      .replaceAll(README_BASE_URL, baseUrl),
  );
  return ['set -euo pipefail', ...blocks].join('\n');
}

export interface Started {
  server: RunningServer;
  key: string;
  folder: string;
  printed: string[];
}

/** A gateway started as `npm start` starts it, on a fresh SQLite file: its first key is the tour's `KEY`. */
export async function startGatewayAsNpmStartDoes(): Promise<Started> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-readme-tour-'));
  const printed: string[] = [];
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(folder, 'data', 'gateway.db')}`,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
  });
  const server = await startServer({
    config,
    logger: createLogger({ level: 'silent' }),
    print: (line) => printed.push(line),
  });
  const key = printed.map((line) => /^\s+(pk_test_\S+)$/.exec(line)?.[1]).find(Boolean);
  if (key === undefined) throw new Error(`no first-start key printed:\n${printed.join('\n')}`);
  return { server, key, folder, printed };
}
