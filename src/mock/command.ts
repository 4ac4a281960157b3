import { type OptionValues, textOption, UsageProblem } from '../lib/cli-options.js';
import type { Msv3Version } from '../msv3/envelope.js';
import {
  type MockSettings,
  type MockWholesalerOptions,
  optionsFromSettings,
  parseNightHours,
} from './options.js';
import { describeScenarios } from './scenarios.js';
import { startMockWholesaler } from './server.js';

/**
 * `msv3-gateway mock`: the mock wholesaler on its own, for pharmacy developers testing their MSV3
 * clients. Prints the base URLs and the scenario list, logs one line per request to stderr (never
 * credentials) and runs until SIGINT/SIGTERM.
 */

export const MOCK_USAGE =
  'mock [--port 8081] [--host 127.0.0.1] [--version 1|2] [--username U --password P] [--night-hours 22-6]';

export const MOCK_SUMMARY =
  'Run the mock MSV3 wholesaler (the sandbox) standalone; prints its base URL and the scenario list.';

export const MOCK_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  version: { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  'night-hours': { type: 'string' },
} as const;

export interface MockCommandIo {
  stdout(line: string): void;
  stderr(line: string): void;
}

function optionsFrom(values: OptionValues, settings: MockSettings): MockWholesalerOptions {
  const options: MockWholesalerOptions = { ...optionsFromSettings(settings), port: 8081 };
  const port = textOption(values, 'port');
  if (port !== undefined) {
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) throw new UsageProblem('--port must be 0..65535');
    options.port = Number(port);
  }
  const host = textOption(values, 'host');
  if (host !== undefined) options.host = host;
  const version = textOption(values, 'version');
  if (version !== undefined) {
    if (version !== '1' && version !== '2')
      throw new UsageProblem('--version must be 1 or 2 (omit it for both)');
    options.versions = [Number(version) as Msv3Version];
  }
  const username = textOption(values, 'username');
  const password = textOption(values, 'password');
  if ((username === undefined) !== (password === undefined)) {
    throw new UsageProblem('--username and --password go together');
  }
  if (username !== undefined && password !== undefined) {
    if (password === '') throw new UsageProblem('--password must not be empty');
    options.credentials = { username, password };
  }
  const night = textOption(values, 'night-hours');
  if (night !== undefined) {
    try {
      options.nightHours = parseNightHours(night);
    } catch (error) {
      throw new UsageProblem(`--night-hours: ${(error as Error).message}`);
    }
  }
  return options;
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export async function runMockCommand(
  values: OptionValues,
  io: MockCommandIo,
  settings: MockSettings,
  waitForStop: () => Promise<void> = untilSignal,
): Promise<number> {
  let options: MockWholesalerOptions;
  try {
    options = optionsFrom(values, settings);
  } catch (error) {
    if (!(error instanceof UsageProblem)) throw error;
    io.stderr(`msv3-gateway mock: ${error.message}`);
    io.stderr(`Usage: msv3-gateway ${MOCK_USAGE}`);
    return 2;
  }
  const mock = await startMockWholesaler({ ...options, log: io.stderr });
  const logins = options.credentials
    ? 'only the configured user name and password'
    : 'any Kundenkennung with any non-empty password';
  io.stdout(
    `MSV3 mock wholesaler listening on ${mock.url} (MSV3 v${mock.versions.join(' and v')}; logins: ${logins})`,
  );
  io.stdout('Base URLs (POST SOAP 1.2 to any service path below them; the body selects the operation):');
  for (const version of [...mock.versions].reverse())
    io.stdout(`  v${version}: ${mock.baseUrl({ version })}`);
  io.stdout(`  Separate state per tenant: ${mock.url}/<tenant>/msv3/v2.0`);
  for (const line of describeScenarios()) io.stdout(line);
  io.stdout('Stop with Ctrl-C.');
  await waitForStop();
  await mock.close();
  io.stderr('msv3-gateway mock: stopped');
  return 0;
}
