// @flagwire/openfeature-provider: what the package exports (scripts/pack-provider.mjs bundles from here).
export { FlagwireProvider, type FlagwireProviderOptions, type FlagwireUsageOptions } from './provider.js';
export { FlagwireEvents, type FlagwireEventsOptions } from './events.js';
