/**
 * Every failure a user can cause or act on is a ParamineError with a stable code.
 * The HTTP layer maps `status` to the response; the CLI prints `code: message`.
 */
export type ErrorCode =
  | 'BAD_INPUT'
  | 'BAD_CONFIG'
  | 'NOT_FOUND'
  | 'FILE_NOT_FOUND'
  | 'BAD_FILE'
  | 'MODEL_MISSING_FILE'
  | 'MODEL_MISMATCH'
  | 'DIM_MISMATCH'
  | 'INDEX_NOT_TRAINED'
  | 'INDEX_CLOSED'
  | 'INDEX_READ_ONLY'
  | 'FAISS_ERROR'
  | 'FETCH_FAILED'
  | 'CHECKSUM_MISMATCH'
  | 'EMBEDDINGS_MISMATCH'
  | 'UNAUTHORIZED'
  | 'CONFLICT'
  | 'OVER_BUDGET'
  | 'LOCKED'
  | 'DISK_FULL'
  | 'TIMEOUT'
  | 'UNAVAILABLE'
  | 'OVERLOADED'
  | 'ABORTED'
  | 'INTERNAL';

const STATUS: Record<ErrorCode, number> = {
  BAD_INPUT: 400,
  BAD_CONFIG: 400,
  NOT_FOUND: 404,
  FILE_NOT_FOUND: 400,
  BAD_FILE: 400,
  MODEL_MISSING_FILE: 500,
  MODEL_MISMATCH: 409,
  DIM_MISMATCH: 409,
  INDEX_NOT_TRAINED: 409,
  INDEX_CLOSED: 503,
  INDEX_READ_ONLY: 409,
  FAISS_ERROR: 500,
  FETCH_FAILED: 502,
  CHECKSUM_MISMATCH: 502,
  EMBEDDINGS_MISMATCH: 400,
  UNAUTHORIZED: 401,
  CONFLICT: 409,
  // No index for the collection fits the RAM budget (--max-ram): the message names the least that would.
  OVER_BUDGET: 400,
  // Another live process runs this directory (jobs, annotations): see src/store/lock.ts.
  LOCKED: 409,
  // No space left (ENOSPC, EDQUOT) or an LMDB map full: free space, then resume (HTTP: Insufficient Storage).
  DISK_FULL: 507,
  TIMEOUT: 504,
  UNAVAILABLE: 503,
  // Too much work queued: come back after `retryAfterSeconds` (HTTP: 503 with Retry-After).
  OVERLOADED: 503,
  // The client went away before its work ran; nginx's "client closed request", never seen by a client.
  ABORTED: 499,
  INTERNAL: 500,
};

export class ParamineError extends Error {
  readonly code: ErrorCode;
  /** The offending field or file location, when there is one (`texts[3]`, `corpus.jsonl:17`). */
  readonly field: string | undefined;
  /** When to try again (OVERLOADED). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { field?: string; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ParamineError';
    this.code = code;
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return STATUS[this.code];
  }

  toJSON(): { code: ErrorCode; message: string; field?: string } {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }
}

/**
 * An error that is an answer, not a fault (OVERLOADED, hundreds of times a second under a storm of
 * retries): built without a stack trace, whose capture took ~25 us of the event loop a refusal.
 */
export function answerError(
  code: ErrorCode,
  message: string,
  options?: ConstructorParameters<typeof ParamineError>[2],
): ParamineError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ParamineError(code, message, options);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Whether a string is one of the stable codes (e.g. read back from a job's failure reason). */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(STATUS, code);
}

export function isParamineError(e: unknown): e is ParamineError {
  return e instanceof ParamineError;
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 28, 122]);

/** Whether `e` (a Node fs error, an lmdb-js or FAISS error) says the disk or the store is full. */
export function isDiskFull(e: unknown): boolean {
  if (e instanceof ParamineError) return e.code === 'DISK_FULL';
  const x = e as { code?: unknown; errno?: unknown; message?: unknown } | null;
  if (x === null || typeof x !== 'object') return false;
  if (FULL_CODES.has(x.code as string) || FULL_CODES.has(-(x.errno as number))) return true;
  return (
    typeof x.message === 'string' &&
    /No space left on device|Disk quota exceeded|MDB_MAP_FULL/.test(x.message)
  );
}

/** `e` as DISK_FULL when it says the disk is full (`what`: what was being written), else `e` itself. */
export function diskFullOr(e: unknown, what: string): unknown {
  if (!isDiskFull(e) || e instanceof ParamineError) return e;
  return new ParamineError(
    'DISK_FULL',
    `${what}: no space left (${(e as Error).message}); free some space, then resume`,
    { cause: e },
  );
}
