import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../lib/clock.js';
import type { Msv3Version } from '../msv3/envelope.js';
import { type Calendar, createCalendar } from './calendar.js';
import { memoryWorld, type WorldStore } from './world-store.js';

/** How a mock wholesaler is started; every field has a default. */
export interface MockWholesalerOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** The MSV3 versions this server speaks (default both); other versions' operations get a SOAP fault. */
  versions?: readonly Msv3Version[];
  /**
   * Fixed login: only this user name and password are accepted. Without it the server runs in sandbox
   * mode: any well-formed Kundenkennung with any non-empty password (except the scenario passwords).
   */
  credentials?: { username: string; password: string };
  clock?: Clock;
  /** IANA zone of tours, cut-offs and night hours (default `Europe/Berlin`). */
  timeZone?: string;
  /** Local hours in which orders are taken in night mode; `{from: 22, to: 6}` wraps midnight. Default: none. */
  nightHours?: NightHours;
  /** How long after placement a NIGHT_MODE-scenario order is processed (default 10 s). */
  nightOrderDelayMs?: number;
  /** Delay of the SLOW_ANSWER scenario (default 2 s, at most 60 s). */
  slowAnswerMs?: number;
  /** Delay of the LATE_ANSWER scenario (default 35 s, at most 300 s). */
  lateAnswerMs?: number;
  /** Larger request bodies get 413 (default 4 MiB). */
  maxBodyBytes?: number;
  /** Id generator for delivery-note documents and return slips (default `crypto.randomUUID`). */
  newId?: () => string;
  /** One line per request (method, path, operation, status, duration; never credentials). */
  log?: (line: string) => void;
  /** Printed on the PDFs. */
  wholesalerName?: string;
  /**
   * Where tenants are kept (default: in memory, gone when the server stops); the gateway's sandbox keeps
   * them in the gateway's database (`persistentWorld` over `store/sandbox-state.ts`).
   */
  world?: WorldStore;
}

export interface NightHours {
  /** 0..23, local. */
  from: number;
  /** 0..23, local; equal to `from` is refused. */
  to: number;
}

const MAX_SLOW_ANSWER_MS = 60_000;
const MAX_LATE_ANSWER_MS = 300_000;

/** The settings the request handlers see. */
export interface MockEnvironment {
  clock: Clock;
  calendar: Calendar;
  nightHours?: NightHours;
  nightOrderDelayMs: number;
  slowAnswerMs: number;
  lateAnswerMs: number;
  newId: () => string;
  wholesalerName: string;
}

export interface ResolvedOptions {
  world: WorldStore;
  port: number;
  host: string;
  versions: readonly Msv3Version[];
  credentials?: { username: string; password: string };
  maxBodyBytes: number;
  log?: (line: string) => void;
  env: MockEnvironment;
}

function bounded(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in ${min}..${max}, got ${value}`);
  }
  return value;
}

export function resolveOptions(options: MockWholesalerOptions = {}): ResolvedOptions {
  const versions = options.versions ?? [1, 2];
  if (versions.length === 0 || versions.some((v) => v !== 1 && v !== 2)) {
    throw new RangeError('versions must list 1 and/or 2');
  }
  const night = options.nightHours;
  if (night !== undefined) {
    bounded('nightHours.from', night.from, 0, 23);
    bounded('nightHours.to', night.to, 0, 23);
    if (night.from === night.to) throw new RangeError('nightHours.from and nightHours.to must differ');
  }
  if (options.credentials !== undefined && options.credentials.password === '') {
    throw new RangeError('a fixed password must not be empty');
  }
  return {
    world: options.world ?? memoryWorld(),
    port: bounded('port', options.port ?? 0, 0, 65_535),
    host: options.host ?? '127.0.0.1',
    versions: [...new Set(versions)].sort(),
    credentials: options.credentials,
    maxBodyBytes: bounded('maxBodyBytes', options.maxBodyBytes ?? 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    log: options.log,
    env: {
      clock: options.clock ?? systemClock,
      calendar: createCalendar(options.timeZone ?? 'Europe/Berlin'),
      nightHours: night,
      nightOrderDelayMs: bounded('nightOrderDelayMs', options.nightOrderDelayMs ?? 10_000, 0, 86_400_000),
      slowAnswerMs: bounded('slowAnswerMs', options.slowAnswerMs ?? 2_000, 0, MAX_SLOW_ANSWER_MS),
      lateAnswerMs: bounded('lateAnswerMs', options.lateAnswerMs ?? 35_000, 0, MAX_LATE_ANSWER_MS),
      newId: options.newId ?? randomUUID,
      wholesalerName: options.wholesalerName ?? 'MSV3-Sandbox Großhandlung',
    },
  };
}

/** `22-6` → `{from: 22, to: 6}`, for the CLI and the configuration. */
export function parseNightHours(text: string): NightHours {
  const match = /^\s*(\d{1,2})\s*-\s*(\d{1,2})\s*$/.exec(text);
  if (match === null) throw new RangeError(`night hours must look like 22-6, got "${text}"`);
  const hours = { from: Number(match[1]), to: Number(match[2]) };
  bounded('night hours (from)', hours.from, 0, 23);
  bounded('night hours (to)', hours.to, 0, 23);
  if (hours.from === hours.to) throw new RangeError('night hours must not start and end at the same hour');
  return hours;
}

/** The configuration's `mock` section (the MOCK_* variables), as read by `src/config.ts`. */
export interface MockSettings {
  nightHours?: string;
  nightOrderDelayMs: number;
  slowAnswerMs: number;
  lateAnswerMs: number;
}

/** Options for the in-process sandbox (and defaults for `msv3-gateway mock`) from the configuration. */
export function optionsFromSettings(settings: MockSettings): MockWholesalerOptions {
  return {
    ...(settings.nightHours === undefined ? {} : { nightHours: parseNightHours(settings.nightHours) }),
    nightOrderDelayMs: settings.nightOrderDelayMs,
    slowAnswerMs: settings.slowAnswerMs,
    lateAnswerMs: settings.lateAnswerMs,
  };
}
