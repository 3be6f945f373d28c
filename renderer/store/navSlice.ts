/** Where the user is. Mirrored in location.hash so a reload (or an engine restart) lands on the same screen. */
import type { AppInfo } from '../../shared/contractTypes.ts';
import type { StepId } from '../../shared/runbookSteps.ts';
import { STEP_IDS } from '../../shared/runbookSteps.ts';
import type { Slice } from './types.ts';

export type View =
  | { name: 'plan' }
  | { name: 'runbook'; runId: string; step: StepId | null }
  | { name: 'history' }
  | { name: 'run'; runId: string }
  | { name: 'workspace' }
  /** the Sandbox's training scenarios */
  | { name: 'training' };

export interface NavSlice {
  info: AppInfo | null;
  view: View;
  setInfo: (info: AppInfo) => void;
  go: (view: View) => void;
}

export function viewToHash(view: View): string {
  switch (view.name) {
    case 'runbook':
      return `#/runbook/${encodeURIComponent(view.runId)}${view.step ? `/${view.step}` : ''}`;
    case 'run':
      return `#/run/${encodeURIComponent(view.runId)}`;
    case 'plan':
    case 'history':
    case 'workspace':
    case 'training':
      return `#/${view.name}`;
  }
}

export function hashToView(hash: string): View {
  const [name, id, step] = hash.replace(/^#\/?/, '').split('/');
  const runId = id ? safeDecode(id) : '';
  if (name === 'runbook' && runId)
    return { name: 'runbook', runId, step: (STEP_IDS as readonly string[]).includes(step ?? '') ? (step as StepId) : null };
  if (name === 'run' && runId) return { name: 'run', runId };
  if (name === 'history' || name === 'workspace' || name === 'training') return { name };
  return { name: 'plan' };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return '';
  }
}

export const createNavSlice: Slice<NavSlice> = (set) => ({
  info: null,
  view: hashToView(typeof location === 'undefined' ? '' : location.hash),
  setInfo: (info) => set({ info }),
  go: (view) => {
    set({ view });
    if (typeof location !== 'undefined' && location.hash !== viewToHash(view)) location.hash = viewToHash(view);
  },
});
