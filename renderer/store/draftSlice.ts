/** The plan being typed: kept while the user looks elsewhere, cleared once the run is created. */
import { EMPTY_DRAFT, type PlanDraft } from '../lib/planDraft.ts';
import type { Slice } from './types.ts';

export interface DraftSlice {
  draft: PlanDraft;
  editDraft: (patch: Partial<PlanDraft>) => void;
  resetDraft: () => void;
}

export const createDraftSlice: Slice<DraftSlice> = (set) => ({
  draft: EMPTY_DRAFT,
  editDraft: (patch) => set((s) => ({ draft: { ...s.draft, ...patch } })),
  resetDraft: () => set({ draft: EMPTY_DRAFT }),
});
