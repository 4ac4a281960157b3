import { type Logger, pino } from 'pino';

/** One line a `capturingLogger` kept: pino's JSON, parsed (`msg`, `level` as a name, the bindings). */
export interface LoggedLine {
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  msg: string;
  [field: string]: unknown;
}

/** A real pino logger that keeps every line it writes, for tests that check what was logged. */
export function capturingLogger(): {
  logger: Logger;
  lines: LoggedLine[];
  messages(level?: LoggedLine['level']): string[];
} {
  const lines: LoggedLine[] = [];
  const logger = pino(
    { level: 'trace', formatters: { level: (label) => ({ level: label }) } },
    { write: (line: string) => void lines.push(JSON.parse(line) as LoggedLine) },
  );
  return {
    logger,
    lines,
    messages: (level) =>
      lines.filter((line) => level === undefined || line.level === level).map((line) => line.msg),
  };
}

/** A logger that writes nothing. */
export const silentLogger: Logger = pino({ level: 'silent' });
