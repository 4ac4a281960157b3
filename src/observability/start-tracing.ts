import type { Config } from '../config.js';
import { NO_TRACING, type Tracing, type TracingDeps } from './tracing.js';

/**
 * `NO_TRACING` without OTEL_EXPORTER_OTLP_ENDPOINT; otherwise loads the SDK (a dynamic import, so a
 * gateway without tracing pays nothing for it) and exports OTLP/HTTP JSON to the collector.
 */
export async function startTracing(settings: Config['tracing'], deps: TracingDeps): Promise<Tracing> {
  if (settings.endpoint === undefined) return NO_TRACING;
  const { createOtelTracing } = await import('./tracing-otel.js');
  return createOtelTracing({ ...settings, endpoint: settings.endpoint }, deps);
}
