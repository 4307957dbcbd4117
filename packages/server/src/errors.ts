import { ErrorCode, type FieldError } from '@corral/contracts';

/** The one error type of the service: it carries its HTTP status and stable code (contract section 3). */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details?: FieldError[]) {
    super(400, ErrorCode.invalidValue, message, details);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'Missing or invalid credentials') {
    super(401, ErrorCode.unauthorized, message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = 'Not allowed') {
    super(403, ErrorCode.forbidden, message);
  }
}
export class PlanLimitError extends AppError {
  constructor(message: string) {
    super(403, ErrorCode.planLimitExceeded, message);
  }
}
export class NotFoundError extends AppError {
  constructor(what: string) {
    super(404, ErrorCode.notFound, `${what} not found`);
  }
}
export class ConflictError extends AppError {
  constructor(message: string, code: ErrorCode = ErrorCode.conflict) {
    super(409, code, message);
  }
}
export class RateLimitedError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, ErrorCode.rateLimited, message, undefined, { 'retry-after': String(retryAfterSeconds) });
  }
}
/** The store (or another dependency) cannot serve right now; the client should retry. */
export class UnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds = 5, options?: { cause?: unknown }) {
    super(503, ErrorCode.unavailable, message, undefined, { 'retry-after': String(retryAfterSeconds) });
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}
