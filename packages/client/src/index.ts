export {
  type ClientOptions,
  createClient,
  credentialDictionary,
  type GatewayClient,
  type Msv3Credentials,
  type Msv3CredentialsByWholesaler,
  type OperationErrors,
  type OperationInput,
  type OperationName,
  type OperationResponse,
  type RequestOptions,
} from './client.js';
export { GatewayConnectionError, GatewayError, isGatewayError } from './errors.js';
export type { ErrorBody, ErrorKind, Operations, WebhookEvents } from './generated/api.js';
export type { RetryOptions } from './retry.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './verify-webhook.js';
