export {
  createRateLimiter, rateLimitError, rateLimitHeaders, RATE_WINDOW_MS, type RateLimiter, type RateLimitDecision,
} from './rate-limit-service.js';
export { createMemoryRateLimitStore, createPostgresRateLimitStore, type RateLimitStore } from './rate-limit-store.js';
