export { buildApp, ROUTES } from './app.js';
export { type Config, ConfigError, loadConfig } from './config.js';
export type { Caller, Tenant } from './core/caller.js';
export { ApiError, ERROR_CATALOGUE, type ErrorBody, type ErrorKind } from './core/errors.js';
export type { AppDeps, RouteRegistration } from './http/app-deps.js';
export type { GatewayApp } from './http/types.js';
export { type RunningServer, startServer } from './server.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './webhooks/verify.js';
