import { Counter, Gauge, type Registry } from 'prom-client';
import { type CallHistory, createCallHistory, type HistoryRows } from './call-history.js';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

/**
 * The wholesaler series of `GET /metrics` (docs/observability.md "Wholesaler metrics"), and what the
 * operator status page shows of the same calls. Labels are bounded whatever the number of accounts:
 * `wholesaler` is a catalogue id (`phoenix`, `phoenix_test`) or `custom` for every customer-registered
 * wholesaler, `route` one of sandbox / test_server / live, `operation` an MSV3 operation, `outcome` `ok`
 * or an error kind of the catalogue. Never an account, a key, a URL or a PZN.
 */

/** The labels of one group of targets: a catalogue wholesaler on one route, or all custom ones. */
export interface WholesalerLabels {
  wholesaler: string;
  route: string;
}

type CircuitState = 'closed' | 'open' | 'half_open';

/** One target's state right now, read at scrape time (`WholesalerMetrics.watch`). */
export interface TargetState extends WholesalerLabels {
  active: number;
  queued: number;
  circuit: CircuitState;
}

/** A finished call as the metrics count it. */
interface CallObservation extends WholesalerLabels {
  operation: string;
  /** `ok` or the error kind the caller was (or would be) answered with. */
  outcome: string;
  latencyMs: number;
  /** False for calls refused before sending (circuit open, the gateway's own limit, shutdown). */
  sent: boolean;
  /** A timeout's phase (connect, headers, body, total). */
  timeoutPhase?: string;
  /** A refusal by the concurrency limit: queue_full, wait_too_long, wait_timeout. */
  refusalCause?: string;
}

interface ProbeObservation extends WholesalerLabels {
  up: boolean;
  /** A few words: `answers`, `HTTP 503`, `unreachable: ECONNREFUSED`. */
  reason: string;
  latencyMs: number;
}

/** The last probe of a group (the latest of its endpoints). */
interface LastProbe {
  at: number;
  up: boolean;
  reason: string;
  latencyMs: number;
}

/** What one process knows of its wholesalers: mergeable with other workers' (`mergeWholesalerStatus`). */
export interface WholesalerStatus {
  /** Epoch ms when taken. */
  at: number;
  groups: Array<
    WholesalerLabels & {
      circuits: Record<CircuitState, number>;
      active: number;
      queued: number;
      lastProbe?: LastProbe;
    }
  >;
  history: HistoryRows;
}

export interface WholesalerMetrics {
  call(observation: CallObservation): void;
  probe(observation: ProbeObservation): void;
  circuitOpened(labels: WholesalerLabels): void;
  /** Where the gauges (and the status page) read the targets' current state; set once by the wiring. */
  watch(source: () => Iterable<TargetState>): void;
  /** This process's view, for the status page. */
  status(): WholesalerStatus;
}

/** Seconds; from a fast loopback answer to the 60 s total deadline. */
const DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 20, 30, 60];
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half_open'];

export function createWholesalerMetrics(
  registry: Registry,
  options: { now?: () => number } = {},
): WholesalerMetrics {
  const now = options.now ?? Date.now;
  let source: () => Iterable<TargetState> = () => [];
  const history: CallHistory = createCallHistory({ now, bucketsMs: DURATION_BUCKETS.map((s) => s * 1000) });
  const lastProbes = new Map<string, WholesalerLabels & LastProbe>();
  const register = [registry];

  // Updated on every call: their series are found by key (series-metrics.ts).
  const calls = new SeriesCounter({
    name: 'msv3_gateway_wholesaler_calls_total',
    help: 'Wholesaler calls by wholesaler, route, MSV3 operation and outcome (`ok` or the error kind answered).',
    labelNames: ['wholesaler', 'route', 'operation', 'outcome'],
    registers: register,
  });
  const duration = new SeriesHistogram({
    name: 'msv3_gateway_wholesaler_call_duration_seconds',
    help: 'Duration of wholesaler calls that were sent (waiting for a slot included), by wholesaler, route and operation.',
    labelNames: ['wholesaler', 'route', 'operation'],
    buckets: DURATION_BUCKETS,
    registers: register,
  });
  const timeouts = new Counter({
    name: 'msv3_gateway_wholesaler_timeouts_total',
    help: 'Wholesaler calls that timed out, by phase (connect, headers, body, total).',
    labelNames: ['wholesaler', 'route', 'operation', 'phase'],
    registers: register,
  });
  const refusals = new Counter({
    name: 'msv3_gateway_wholesaler_refusals_total',
    help: "Calls the gateway's own concurrency limit refused (503 gateway_busy), by cause.",
    labelNames: ['wholesaler', 'route', 'cause'],
    registers: register,
  });
  const openings = new Counter({
    name: 'msv3_gateway_wholesaler_circuit_openings_total',
    help: 'Times a circuit breaker opened (or re-opened after a failed trial).',
    labelNames: ['wholesaler', 'route'],
    registers: register,
  });
  const probes = new Counter({
    name: 'msv3_gateway_wholesaler_probes_total',
    help: 'Credential-free probes of the endpoints in use, by result (up, down).',
    labelNames: ['wholesaler', 'route', 'result'],
    registers: register,
  });
  new Gauge({
    name: 'msv3_gateway_wholesaler_circuits',
    help: 'Circuit breakers by state (closed, open, half_open); with WORKERS > 1, summed over the workers.',
    labelNames: ['wholesaler', 'route', 'state'],
    registers: register,
    collect() {
      this.reset();
      for (const group of groups().values())
        for (const state of CIRCUIT_STATES)
          this.set({ wholesaler: group.wholesaler, route: group.route, state }, group.circuits[state]);
    },
  });
  // The concurrency limit's slots, read per wholesaler and route when /metrics is scraped.
  const slotGauge = (name: string, help: string, count: (group: StatusGroup) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['wholesaler', 'route'],
      registers: register,
      collect() {
        this.reset();
        for (const group of groups().values()) this.set(labelsOf(group), count(group));
      },
    });
  slotGauge(
    'msv3_gateway_wholesaler_calls_in_flight',
    'Wholesaler calls holding a slot of the concurrency limit right now.',
    (group) => group.active,
  );
  slotGauge(
    'msv3_gateway_wholesaler_calls_queued',
    'Wholesaler calls waiting for a slot of the concurrency limit right now (refusals being held included).',
    (group) => group.queued,
  );
  new Gauge({
    name: 'msv3_gateway_wholesaler_probe_up',
    help: 'Whether the last probe of a wholesaler found it answering (1) or not (0); absent before the first probe.',
    labelNames: ['wholesaler', 'route'],
    registers: register,
    collect() {
      this.reset();
      for (const probe of lastProbes.values()) this.set(labelsOf(probe), probe.up ? 1 : 0);
    },
  });

  /** The targets' state, grouped by labels. */
  function groups(): Map<string, StatusGroup> {
    const byLabels = new Map<string, WholesalerStatus['groups'][number]>();
    for (const target of source()) {
      const key = groupKey(target);
      let group = byLabels.get(key);
      if (group === undefined) {
        group = { ...labelsOf(target), circuits: { closed: 0, open: 0, half_open: 0 }, active: 0, queued: 0 };
        byLabels.set(key, group);
      }
      group.circuits[target.circuit]++;
      group.active += target.active;
      group.queued += target.queued;
    }
    return byLabels;
  }

  return {
    call(observation) {
      const labels = labelsOf(observation);
      const key = `${groupKey(labels)}\u0000${observation.operation}`;
      calls.incSeries(`${key}\u0000${observation.outcome}`, () => ({
        ...labels,
        operation: observation.operation,
        outcome: observation.outcome,
      }));
      if (observation.sent) {
        duration.observeSeries(
          key,
          () => ({ ...labels, operation: observation.operation }),
          observation.latencyMs / 1000,
        );
        history.record(groupKey(labels), observation.latencyMs, observation.outcome === 'ok');
      }
      if (observation.timeoutPhase !== undefined)
        timeouts.inc({ ...labels, operation: observation.operation, phase: observation.timeoutPhase });
      if (observation.refusalCause !== undefined)
        refusals.inc({ ...labels, cause: observation.refusalCause });
    },
    probe(observation) {
      const labels = labelsOf(observation);
      probes.inc({ ...labels, result: observation.up ? 'up' : 'down' });
      const { up, reason, latencyMs } = observation;
      lastProbes.set(groupKey(labels), { ...labels, at: now(), up, reason, latencyMs });
    },
    circuitOpened(labels) {
      openings.inc(labelsOf(labels));
    },
    watch(newSource) {
      source = newSource;
    },
    status() {
      const byLabels = groups();
      for (const [key, probe] of lastProbes) {
        let group = byLabels.get(key);
        if (group === undefined) {
          group = {
            ...labelsOf(probe),
            circuits: { closed: 0, open: 0, half_open: 0 },
            active: 0,
            queued: 0,
          };
          byLabels.set(key, group);
        }
        const { at, up, reason, latencyMs } = probe;
        group.lastProbe = { at, up, reason, latencyMs };
      }
      return { at: now(), groups: [...byLabels.values()], history: history.rows() };
    },
  };
}

type StatusGroup = WholesalerStatus['groups'][number];

function labelsOf(labels: WholesalerLabels): WholesalerLabels {
  return { wholesaler: labels.wholesaler, route: labels.route };
}

/** The history's key for a group (the status page reads rows by it: `<route>/<wholesaler>`). */
function groupKey(labels: WholesalerLabels): string {
  return `${labels.route}/${labels.wholesaler}`;
}

/** Several workers' status as one: counts summed, the latest probe kept, histories added up. */
export function mergeWholesalerStatus(parts: readonly WholesalerStatus[]): WholesalerStatus {
  const groups = new Map<string, WholesalerStatus['groups'][number]>();
  for (const part of parts) {
    for (const group of part.groups) {
      const key = groupKey(group);
      const merged = groups.get(key);
      if (merged === undefined) {
        groups.set(key, { ...group, circuits: { ...group.circuits } });
        continue;
      }
      for (const state of CIRCUIT_STATES) merged.circuits[state] += group.circuits[state];
      merged.active += group.active;
      merged.queued += group.queued;
      if (group.lastProbe !== undefined && (merged.lastProbe?.at ?? -1) < group.lastProbe.at)
        merged.lastProbe = group.lastProbe;
    }
  }
  return {
    at: Math.max(0, ...parts.map((part) => part.at)),
    groups: [...groups.values()],
    history: mergeHistoryRows(parts.map((part) => part.history)),
  };
}

function mergeHistoryRows(parts: readonly HistoryRows[]): HistoryRows {
  const first = parts[0];
  if (first === undefined) return { startMinute: 0, minutes: 0, boundsMs: [], rows: {} };
  const startMinute = Math.max(...parts.map((part) => part.startMinute));
  const { minutes, boundsMs } = first;
  const rows: HistoryRows['rows'] = {};
  for (const part of parts) {
    const shift = startMinute - part.startMinute;
    for (const [key, row] of Object.entries(part.rows)) {
      const merged = rows[key] ?? {
        calls: new Array<number>(minutes).fill(0),
        errors: new Array<number>(minutes).fill(0),
        buckets: Array.from({ length: minutes }, () => new Array<number>(boundsMs.length + 1).fill(0)),
      };
      rows[key] = merged;
      for (let i = shift; i < minutes; i++) {
        merged.calls[i - shift]! += row.calls[i] ?? 0;
        merged.errors[i - shift]! += row.errors[i] ?? 0;
        const into = merged.buckets[i - shift]!;
        row.buckets[i]?.forEach((count, b) => {
          into[b]! += count;
        });
      }
    }
  }
  return { startMinute, minutes, boundsMs, rows };
}
