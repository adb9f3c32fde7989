/**
 * The domain stage (after index/store, before search): per-sentence domain scores σ of an index
 * (Moore–Lewis cross-entropy difference or an embedding classifier), stored as memory-mapped columns
 * beside it, and how searches and jobs use them (subsample, weighted, combined).
 */
export { type AddDomainOptions, type AddDomainResult, addDomain, DOMAIN_ADD_DEFAULTS } from './add.js';
export {
  type DomainPlan,
  type DomainRequest,
  type DomainRequestInput,
  domainRequestSchema,
  keepSide,
  pairScore,
  planDomain,
  type SideScore,
  sideScores,
} from './apply.js';
export { carryDomains, domainFollowers, domainsToCarry, rebuiltFrom } from './carry.js';
export { Column } from './column.js';
export { sigmaAtFraction } from './distribution.js';
export { type FitExample, fitCombined } from './fit.js';
export {
  type CombinedModel,
  type DomainEntry,
  domainNameSchema,
  indexIdentity,
  putDomain,
  readDomains,
} from './manifest.js';
export { type AddedRow, Domains, OpenDomain } from './open.js';
export { removeDomain } from './remove.js';
export type { DomainScorer } from './scorer.js';
export type { TextEncoder } from './train.js';
