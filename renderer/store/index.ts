/**
 * One zustand store built from slices (zustand's slices pattern). It holds UI state only —
 * where we are, the plan being typed, errors, and live progress from events. Data kept in
 * SQLite is fetched through the contract (hooks/useCall.ts) and refetched when `versions`
 * says it changed; it is never copied into this store.
 */
import { create } from 'zustand';
import { createErrorSlice, type ErrorSlice } from './errorSlice.ts';
import { createLiveSlice, type LiveSlice } from './liveSlice.ts';
import { createNavSlice, type NavSlice } from './navSlice.ts';
import { createDraftSlice, type DraftSlice } from './draftSlice.ts';

export type AppState = NavSlice & ErrorSlice & LiveSlice & DraftSlice;

export const useApp = create<AppState>()((...a) => ({
  ...createNavSlice(...a),
  ...createErrorSlice(...a),
  ...createLiveSlice(...a),
  ...createDraftSlice(...a),
}));
