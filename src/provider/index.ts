// @flagwire/openfeature-provider: what the package exports (scripts/pack-provider.mjs bundles from here).
export { FlagwireProvider, type FlagwireProviderOptions } from './provider.js';
export { FlagwireEvents, type FlagwireEventsOptions } from './events.js';
