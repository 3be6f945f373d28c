import type { ReactNode } from 'react';

/** A coloured word: run statuses, step statuses, tiers, severities share one look. */
export function Badge({ tone, children, title }: { tone: string; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

export function TierBadge({ tier }: { tier: string | null }) {
  if (!tier) return <Badge tone="muted">tier –</Badge>;
  return <Badge tone={tier === 'manual' ? 'danger' : tier === 'semi-auto' ? 'warn' : 'ok'}>{tier}</Badge>;
}

const RUN_TONES: Record<string, string> = {
  planned: 'muted',
  running: 'info',
  paused: 'warn',
  halted: 'warn',
  canary: 'warn',
  abandoned: 'danger',
  failed: 'danger',
  succeeded: 'ok',
};

export function RunStatus({ status }: { status: string }) {
  return <Badge tone={RUN_TONES[status] ?? 'muted'}>{status}</Badge>;
}
