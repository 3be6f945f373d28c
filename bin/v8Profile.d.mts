// Types of bin/v8Profile.mjs, for scripts/warmCodeCache.ts.
export type V8Profile = 'data' | 'quick';
export function v8ProfileFor(command: string | undefined): V8Profile;
export function setV8Profile(profile: V8Profile): void;
