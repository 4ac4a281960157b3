export { type AppDeps, buildApp, ROUTES, type RouteRegistration } from './app.js';
export { type Config, ConfigError, loadConfig } from './config.js';
export { ApiError, ERROR_CATALOGUE, type ErrorBody, type ErrorKind } from './http/errors.js';
export type { AuthContext, GatewayApp } from './http/types.js';
export { type RunningServer, startServer } from './server.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './webhooks/verify.js';
