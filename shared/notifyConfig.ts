/**
 * The workspace's `notify:` section (backfill.config.yaml): where to tell people about a run —
 * Slack incoming webhooks (Block Kit messages) and generic JSON webhooks — and which events
 * each target hears. Webhook URLs are secrets (anyone holding one can post), so a file names
 * the environment variable that holds one, never the URL.
 */
import { z } from 'zod';
import { envNameSchema, headersEnvSchema } from './envName.ts';

export const NOTIFY_EVENTS = ['dry-run-ready', 'throttled', 'halted', 'failed', 'succeeded'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

const events = z.array(z.enum(NOTIFY_EVENTS)).min(1, 'list at least one event, or remove the target').optional();

export const notifyTargetSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('slack'), url_env: envNameSchema, events }),
  z.strictObject({ kind: z.literal('webhook'), url_env: envNameSchema, headers_env: headersEnvSchema.optional(), events }),
]);
export type NotifyTarget = z.output<typeof notifyTargetSchema>;

export const notifySchema = z.strictObject({
  targets: z.record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be a short name: letters, digits, ".", "_" or "-"'),
    notifyTargetSchema,
  ),
  /** "throttled" is sent once an episode has lasted this many minutes (default 10) */
  throttled_after_min: z
    .number()
    .min(0)
    .max(24 * 60)
    .default(10),
});
export type NotifyConfig = z.output<typeof notifySchema>;
