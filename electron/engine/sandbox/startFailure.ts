import { ServiceError } from '../runbook/secrets.ts';

/**
 * Why a server of our own (the sandbox's PostgreSQL or S3, the tests' PostgreSQL) cannot
 * start, in one line that says what to do: kind 'unavailable' (CLI exit 2), never a stack.
 */
export function startFailure(message: string): ServiceError {
  return new ServiceError(message, 'unavailable');
}
