import type { StateCreator } from 'zustand';
import type { AppState } from './index.ts';

/** A slice of the one store: it may read and write the whole state. */
export type Slice<T> = StateCreator<AppState, [], [], T>;
