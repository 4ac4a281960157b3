import type { Logger } from 'pino';

type StopSignal = 'SIGTERM' | 'SIGINT';
type Listener = (signal: NodeJS.Signals) => void;

/** What `exitOnSignals` listens on: the process itself, or signals held since start-up began. */
export interface SignalSource {
  on(event: StopSignal, listener: Listener): unknown;
}

export interface HeldSignalsOptions {
  logger: Logger;
  exit: (code: number) => void;
  /** How long a signal waits for start-up to finish before the process exits with 1. */
  limitMs: number;
  source?: SignalSource;
}

/**
 * Catches SIGTERM and SIGINT from the moment start-up begins. Without it a signal that arrives while the
 * gateway connects, migrates and binds its port, or just after it prints that it listens, finds no
 * handler and Node's default ends the process at once, mid-migration or with the port already open. A
 * held signal is handed to the first listener of its kind (`exitOnSignals`), which then stops the started
 * gateway gracefully. A second signal before that exits at once with 1, and so does a start-up that has
 * not finished within `limitMs` of the first signal, as a stop that overruns its limit does.
 */
export function holdSignals({ logger, exit, limitMs, source = process }: HeldSignalsOptions): SignalSource {
  const listeners: Record<StopSignal, Listener[]> = { SIGTERM: [], SIGINT: [] };
  let held: StopSignal | undefined;
  let overrun: NodeJS.Timeout | undefined;
  const receive = (event: StopSignal) => {
    if (listeners[event].length > 0) {
      for (const listener of listeners[event]) listener(event);
      return;
    }
    if (held !== undefined) {
      logger.warn({ signal: event }, 'second signal during start-up; exiting now');
      clearTimeout(overrun);
      exit(1);
      return;
    }
    held = event;
    logger.info({ signal: event }, 'signal during start-up; stopping once started');
    overrun = setTimeout(() => {
      logger.error({ timeout_ms: limitMs }, 'start-up did not finish in time after a signal; exiting now');
      exit(1);
    }, limitMs);
    // A start-up that fails ends the process as it would without a signal.
    overrun.unref();
  };
  source.on('SIGTERM', () => receive('SIGTERM'));
  source.on('SIGINT', () => receive('SIGINT'));
  return {
    on(event, listener) {
      listeners[event].push(listener);
      if (held === event) {
        held = undefined;
        clearTimeout(overrun);
        listener(event);
      }
      return this;
    },
  };
}
