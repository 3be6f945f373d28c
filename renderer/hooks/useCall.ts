/**
 * Fetches through the contract and fetches again when the run's version changes (an event
 * said SQLite changed) or `reload` is called. The data lives in this component, not in the
 * store: SQLite stays the one source of truth.
 */
import { useCallback, useEffect, useState } from 'react';
import type { CallInput, CallName, CallOutput } from '../../shared/contract.ts';
import { call } from '../api.ts';
import { useApp } from '../store/index.ts';

export interface Fetched<T> {
  data: T | undefined;
  loading: boolean;
  reload: () => void;
}

export function useCall<N extends CallName>(
  name: N,
  input: CallInput<N> | null,
  doing: string,
  versionKey?: string,
): Fetched<CallOutput<N>> {
  const [data, setData] = useState<CallOutput<N> | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [nonce, setNonce] = useState(0);
  const version = useApp((s) => (versionKey ? (s.versions[versionKey] ?? 0) : 0));
  const key = input === null ? null : JSON.stringify(input);

  useEffect(() => {
    if (key === null) return;
    let cancelled = false;
    setLoading(true);
    void call(name, JSON.parse(key) as CallInput<N>).then((result) => {
      if (cancelled) return;
      setLoading(false);
      if (result.ok) setData(result.value);
      else useApp.getState().pushError(doing, result.error);
    });
    return () => {
      cancelled = true;
    };
  }, [name, key, version, nonce, doing]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data, loading, reload };
}

/** Re-renders every `ms` (checkpoint age, ETA countdowns). */
export function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
