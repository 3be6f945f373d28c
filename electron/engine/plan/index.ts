// The plan domain for engine code: loading the user's files, hashing them, and the pure
// planning rules from shared/ (partitions, automation tier, red flags).
export { findJobs, loadConfig, loadJob, loadPlan, parseYamlFile } from './load.ts';
export { jobHash, planHash, sha256Hex } from './hash.ts';
export {
  describeRange,
  instantOf,
  looksLikeBoundary,
  MAX_PARTITIONS,
  partitionRange,
  rangeDays,
  type Partition,
} from '../../../shared/partitions.ts';
export { automationTier, AUTO_MAX_DAYS, MANUAL_OVER_DAYS, type Tier, type TierInput } from '../../../shared/tier.ts';
export { blocking, redFlags, UNTHROTTLED_PARTITIONS, type RedFlag, type RedFlagCode, type RedFlagInput } from '../../../shared/redFlags.ts';
export { canonicalJson } from '../../../shared/canonicalJson.ts';
