/** Row type of `idempotency_keys` (migration 004). Times are epoch ms. */
export interface IdempotencyKeysTable {
  /** The API key the Idempotency-Key belongs to: keys are scoped to it (and so to its account and mode). */
  api_key_id: string;
  /** SHA-256 hex of the Idempotency-Key; the key itself is never stored. */
  key_hash: string;
  account_id: string;
  /** SHA-256 hex of method, route, path parameters, canonical query and body, and the MSV3 user name. */
  fingerprint: string;
  /** `x-request-id` of the request that first used the key (sent back as `Original-Request` on replays). */
  request_id: string;
  /** How many executions claimed the key (more than 1: an earlier one crashed or left its outcome open). */
  attempts: number;
  /** Random token of the execution holding the lock; every write of the holder checks it. */
  lock_token: string | null;
  /** The holder's lock ends here (0 when nobody holds it); a heartbeat moves it while the request runs. */
  locked_until: number;
  /** Set once the outcome is stored: a later request with the key gets it replayed. */
  response_status: number | null;
  /** JSON object of the replayed response headers (content type, location). */
  response_headers: string | null;
  response_body: string | null;
  created_at: number;
  completed_at: number | null;
  /** `created_at` + 24 h: purged afterwards, and the key may then start a new request. */
  expires_at: number;
}
