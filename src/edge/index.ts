// @flagwire/edge: what the package exports (scripts/pack-edge.mjs bundles from here). Its subpath
// `/worker` (worker.ts) is a whole Worker.
export { FlagwireEdge, type FlagwireEdgeOptions, type SnapshotStore, type WaitUntil } from './edge.js';
