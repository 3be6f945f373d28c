/** Where a user's input went wrong: the file, the field (dotted path), the value, and the fix. */
export interface InputErrorDetails {
  file?: string;
  field?: string;
  value?: unknown;
  hint?: string;
}

/**
 * An error the user can fix by changing their input (flags, job, plan or config file).
 * The CLI maps it to exit code 2; the app shows it in its error panel.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  constructor(
    message: string,
    readonly details: InputErrorDetails = {},
  ) {
    super(message);
  }
}

/** Refused by a gate (tier, red flag, sign-off, sanity check): exit code 4. */
export class GateError extends Error {
  override readonly name = 'GateError';
  constructor(
    message: string,
    readonly reasons: string[] = [],
  ) {
    super(message);
  }
}

/**
 * A server (PostgreSQL, an S3 endpoint) could not be reached or refused the session. The user
 * fixes it outside the program (start the server, fix the URL or password): CLI exit code 2,
 * the app's error kind `connection`. Never carries a password.
 */
export class ConnectionError extends Error {
  override readonly name: string = 'ConnectionError';
  constructor(
    message: string,
    /** host:port/database, or the endpoint */
    readonly target: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Shows a value in an error message: strings quoted, long values cut. */
export function showValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (value === undefined) text = 'nothing';
  else {
    try {
      text = JSON.stringify(value) ?? typeof value;
    } catch {
      text = typeof value; // a cycle or a BigInt: say what it is rather than "[object Object]"
    }
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${showValue(value)}`);
}

/** An error's message, whatever was thrown. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
