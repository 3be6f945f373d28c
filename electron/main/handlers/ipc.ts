/**
 * Handler registration without Electron (bruno's IpcMainLike): Electron's ipcMain satisfies
 * these interfaces, and so does the test harness's loopback server, so both register the very
 * same handlers. Every handler: check the sender → parse the input with the contract's schema
 * → call the engine → return a Result. Nothing is thrown across the bridge.
 */
import { CALLS, type CallArgs, type CallName, type CallOutput, type CallResult } from '../../../shared/contract.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { describeInputIssues, toCallError } from './errors.ts';
import { measureInput } from './inputSize.ts';

export interface IpcEventLike {
  /** the frame that sent the message; null once it navigated away or was destroyed */
  readonly senderFrame: { readonly url: string } | null;
  readonly sender: { readonly id: number };
}

export interface IpcMainLike {
  handle: (channel: string, listener: (event: IpcEventLike, ...args: unknown[]) => unknown) => void;
  removeHandler: (channel: string) => void;
}

export interface Guard {
  /** GitHub Desktop's trusted-sender check: is this message from our own window's own page? */
  trust: (event: IpcEventLike) => boolean;
  /** hides secrets (passwords this process knows) in messages before they leave main */
  redact: (text: string) => string;
  /** where unexpected errors are logged (main's console, the harness's stderr) */
  log?: (channel: string, error: unknown) => void;
}

/** Larger inputs are refused before parsing: a megabyte string is an attack, not a plan (shared/limits.ts). */
export const MAX_INPUT_CHARS = LIMITS.ipcInputChars;

export function handle<N extends CallName>(
  ipc: IpcMainLike,
  guard: Guard,
  name: N,
  fn: (args: CallArgs<N>) => Promise<CallOutput<N>> | CallOutput<N>,
): void {
  ipc.handle(name, async (event: IpcEventLike, ...args: unknown[]): Promise<CallResult<CallOutput<N>>> => {
    if (!guard.trust(event)) {
      guard.log?.(name, new Error(`refused ${name} from an untrusted sender (${event.senderFrame?.url ?? 'no frame'})`));
      return {
        ok: false,
        error: { code: 'untrusted-sender', message: `${name} refused: the message did not come from the app's own window` },
      };
    }
    if (args.length !== 1)
      return { ok: false, error: { code: 'input', message: `${name} takes exactly one argument (an object), got ${args.length}` } };
    const size = measureInput(args[0], MAX_INPUT_CHARS);
    if (!size.ok) {
      const n = (x: number) => x.toLocaleString('en-US');
      return {
        ok: false,
        error:
          size.reason === 'not-data'
            ? { code: 'input', message: `${name} refused its input: field "${size.field}" ${size.what}`, field: size.field }
            : {
                code: 'input',
                message: `${name} refused its input: it is over ${n(MAX_INPUT_CHARS)} characters, the limit for one call (field "${size.field}" alone is ${n(size.fieldChars)})`,
                field: size.field,
                hint: 'the limits on input and why: docs/limits.md',
              },
      };
    }
    const parsed = CALLS[name].input.safeParse(args[0]);
    if (!parsed.success) return { ok: false, error: describeInputIssues(name, parsed.error.issues) };
    try {
      return { ok: true, value: await fn(parsed.data as CallArgs<N>) };
    } catch (err) {
      const error = toCallError(err, guard.redact);
      if (error.code === 'internal') guard.log?.(name, err);
      return { ok: false, error };
    }
  });
}
