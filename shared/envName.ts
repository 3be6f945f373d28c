/**
 * Where a secret comes from in the files users write: the name of an environment variable (the
 * CLI's environment, or the app's secret store, which fills the engine's environment), never
 * the value itself.
 */
import { z } from 'zod';

export const envNameSchema = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]{0,127}$/,
    'must be the name of an environment variable, e.g. PROM_TOKEN (the value stays out of the file)',
  );

/** header name → the environment variable holding its value (an API key, a token) */
export const headersEnvSchema = z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name'), envNameSchema);
