import { useState } from 'react';
import type { CallInput, CallName, CallOutput } from '../../shared/contract.ts';
import { act } from '../api.ts';

/** Runs one contract call for a step: busy while it runs, its result kept, errors to the error panel. */
export function useAction<N extends CallName>(name: N, doing: string, after?: () => void) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<CallOutput<N> | undefined>(undefined);
  const run = async (input: CallInput<N>): Promise<CallOutput<N> | undefined> => {
    setBusy(true);
    try {
      const value = await act(name, input, doing);
      if (value !== undefined) setResult(value);
      after?.();
      return value;
    } finally {
      setBusy(false);
    }
  };
  return { busy, result, run };
}
