/** Every error from the engine lands here and is shown in one place (components/ErrorPanel.tsx). */
import type { CallError } from '../../shared/contract.ts';
import type { Slice } from './types.ts';

export interface ShownError extends CallError {
  id: number;
  /** what the user was doing: "Run the dry run" */
  doing: string;
}

export interface ErrorSlice {
  errors: ShownError[];
  pushError: (doing: string, error: CallError) => void;
  dismissError: (id: number) => void;
  clearErrors: () => void;
}

let next = 1;

export const createErrorSlice: Slice<ErrorSlice> = (set) => ({
  errors: [],
  // The newest first; the same message twice in a row is shown once.
  pushError: (doing, error) =>
    set((s) =>
      s.errors[0]?.message === error.message && s.errors[0]?.doing === doing
        ? s
        : { errors: [{ ...error, doing, id: next++ }, ...s.errors].slice(0, 5) },
    ),
  dismissError: (id) => set((s) => ({ errors: s.errors.filter((e) => e.id !== id) })),
  clearErrors: () => set({ errors: [] }),
});
