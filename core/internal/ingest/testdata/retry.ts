import { sleep } from './time.js';
export { helper } from './helper.js';

/** How long to wait before each retry, in milliseconds. */
export const BACKOFF_MS = [100, 400, 1600];

// Options of retry().
export interface RetryOptions {
  attempts?: number;
  onRetry?: (err: unknown, attempt: number) => void;
}

/**
 * Calls fn until it succeeds or attempts run out.
 * Braces in strings do not confuse the scanner: "{", '}', `${"{"}`.
 */
export async function retry<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? BACKOFF_MS.length;
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i + 1 >= attempts) throw err;
      opts.onRetry?.(err, i + 1);
      await sleep(BACKOFF_MS[Math.min(i, BACKOFF_MS.length - 1)]);
    }
  }
}

export class RetryError extends Error {
  constructor(readonly attempts: number) {
    super(`gave up after ${attempts} attempts`);
  }
}

type Clock = {
  now(): number;
};

console.log('retry module loaded');
