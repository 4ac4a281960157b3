export { ERROR_CATALOGUE } from './http/errors.js';
