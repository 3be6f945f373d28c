/**
 * A notification as the receiver expects it: a Slack incoming webhook's Block Kit message (a
 * header, the sentence, the facts as fields, a context line; `text` is the fallback shown in
 * notifications), or a generic JSON webhook's flat document.
 */
import type { NotifyMessage } from './message.ts';

/** Slack's mrkdwn gives &, < and > meaning (links, mentions): text from runs is escaped. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const TONE_ICON = { info: ':information_source:', good: ':white_check_mark:', warn: ':warning:', danger: ':rotating_light:' } as const;

/** Block Kit limits: a header's text 150 characters, a section 3,000, a field 2,000, 10 fields. */
export function slackPayload(m: NotifyMessage): Record<string, unknown> {
  const fields = m.fields
    .slice(0, 10)
    .map(([name, value]) => ({ type: 'mrkdwn', text: clip(`*${slackEscape(name)}*\n${slackEscape(value)}`, 2000) }));
  return {
    text: clip(`${m.title}: ${m.text}`, 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: clip(m.title, 150), emoji: true } },
      { type: 'section', text: { type: 'mrkdwn', text: clip(`${TONE_ICON[m.tone]} ${slackEscape(m.text)}`, 3000) } },
      ...(fields.length > 0 ? [{ type: 'section', fields }] : []),
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: slackEscape(`Backfill Runbook · ${m.event}${m.runId ? ` · run ${m.runId}` : ''} · ${m.at}`) }],
      },
    ],
  };
}

export function webhookPayload(m: NotifyMessage): Record<string, unknown> {
  return {
    source: 'backfill-runbook',
    event: m.event,
    runId: m.runId,
    title: m.title,
    text: m.text,
    tone: m.tone,
    sandbox: m.sandbox,
    at: m.at,
    fields: Object.fromEntries(m.fields),
    data: m.data,
  };
}
