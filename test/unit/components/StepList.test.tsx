// @vitest-environment happy-dom
/** The step list shows the engine's gating: a locked step cannot be opened; the selected one is marked. */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, it, vi } from 'vitest';
import { runbookSteps, type StepFacts } from '../../../shared/runbookSteps.ts';
import { StepList } from '../../../renderer/components/StepList.tsx';

afterEach(cleanup);

const facts: StepFacts = {
  sanity: { evidenceId: 1, blocked: false, failed: [] },
  snapshot: null,
  dryRun: null,
  signoff: { required: true, valid: null, problems: [] },
  run: { status: 'planned', live: false, published: 0, failed: 0, total: 3, haltReason: null },
  comparison: null,
  closed: null,
  unavailable: {},
};

it('locked steps are disabled buttons; open ones can be chosen', () => {
  const onSelect = vi.fn();
  render(<StepList steps={runbookSteps(facts)} selected="snapshot" onSelect={onSelect} />);
  const buttons = screen.getAllByRole<HTMLButtonElement>('button');
  expect(buttons.map((b) => [b.textContent, b.disabled])).toEqual([
    ['✓1. Source sanity checkdone', false],
    ['→2. Snapshot backupready', false],
    ['·3. Impact scopelocked', true],
    ['·4. Lead sign-offlocked', true],
    ['·5. Executelocked', true],
    ['·6. Row-count comparisonlocked', true],
    ['·7. Closelocked', true],
  ]);
  expect(buttons[1]?.getAttribute('aria-current')).toBe('step');
  fireEvent.click(buttons[4]!);
  fireEvent.click(buttons[0]!);
  expect(onSelect.mock.calls).toEqual([['sanity']]);
});
