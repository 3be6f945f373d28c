/** `run-backfill notify test`: one test message per target, each outcome said. */
import { ConnectionError, InputError } from '../../shared/errors.ts';
import { loadConfig } from '../engine/plan/load.ts';
import { Notifier } from '../engine/notify/notifier.ts';
import { testMessage } from '../engine/notify/runMessages.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import type { Reporter } from './progress.ts';

export async function notifyTest(opts: { config?: string; target?: string }, out: Reporter): Promise<ExitCode> {
  const file = opts.config ?? 'backfill.config.yaml';
  const config = loadConfig(file);
  const names = Object.keys(config.notify?.targets ?? {});
  if (!config.notify || names.length === 0)
    throw new InputError(`${file} has no notify targets`, {
      file,
      field: 'notify.targets',
      hint: 'add e.g. notify: { targets: { oncall: { kind: slack, url_env: SLACK_WEBHOOK_URL } } }',
    });
  if (opts.target !== undefined && !names.includes(opts.target))
    throw new InputError(`no notify target "${opts.target}" in ${file}: its targets are ${names.join(', ')}`, {
      file,
      field: '--target',
      value: opts.target,
    });
  // strict: a URL whose variable is not set is an error here, where a run would only skip it
  const notifier = new Notifier({ config: config.notify, env: process.env, strict: true });
  const reports = await Promise.all(
    notifier.targets
      .filter((t) => opts.target === undefined || t.name === opts.target)
      .map(async (t) => (await notifier.send(testMessage(t.name), t.name))[0]),
  );
  let failed: string | null = null;
  for (const r of reports) {
    if (!r) continue;
    const d = r.delivery;
    out.record(
      'notify-test',
      { target: r.target, ok: d.ok, attempts: d.attempts, ...(d.ok ? { status: d.status } : { error: d.error }) },
      d.ok
        ? `notify target "${r.target}": delivered (HTTP ${d.status}, ${d.attempts} attempt(s))`
        : `notify target "${r.target}": NOT delivered after ${d.attempts} attempt(s): ${d.error}`,
    );
    if (!d.ok) failed ??= `${r.target}: ${d.error}`;
  }
  if (failed) throw new ConnectionError(`a notify target did not take the test message (${failed})`, 'notify');
  return EXIT.ok;
}
