// A capability that exists only in tests, with kinds of record of its own (one with lookups, hanging off
// flags) and a Management API route:
// the layout a store takes when it is listed after the real capabilities, through the same derivation
// as src/capabilities.ts (storeLayout over the capabilities), and the route table (routeTable,
// src/all-routes.ts). Nothing else in Flagwire knows it: what it proves is that a kind declared in one
// place is recorded, copied, exported and migrated (test/store/store-layout.test.ts,
// test/multinode/record-kinds-pg.test.ts), and that a route declared in one place is numbered and
// labelled for the metrics (test/capabilities/registry.test.ts).
import { kCapabilityList } from '../../src/capabilities.js';
import { defineCapability } from '../../src/capability/capability.js';
import { keyedRecords } from '../../src/store/record-kinds.js';
import { storeLayout } from '../../src/store/store-layout.js';

export interface Widget {
  id: string;
  orgId: string;
  size: number;
  /** The flag it hangs off, if any: deleted with it. */
  flagId?: string;
}

/**
 * Widgets, in a database of their own, keyed by id; sent to relays; found by organisation and by flag;
 * deleted with the flag they hang off (a capability's lifecycle, KeyedKind.hangsOff).
 */
export const kWidgetRecords = keyedRecords<Widget>()({
  name: 'widget',
  database: 'widgets',
  relayed: true,
  key: (w) => w.id,
  deletedAs: 'widgetDeleted',
  indexes: {
    org: { keysOf: (w) => [w.orgId] },
    flag: { keysOf: (w) => (w.flagId === undefined ? [] : [w.flagId]) },
  },
  hangsOff: { kind: 'flag', via: 'flag', onDelete: 'cascade' },
});
/** Drafts of widgets: copied to every node, never exported by migrate-to-postgres, never sent to relays. */
export const kWidgetDraftRecords = keyedRecords<Widget>()({
  name: 'widgetDraft',
  database: 'widgetDrafts',
  relayed: false,
  key: (w) => w.id,
  exported: false,
});

export const kWidgets = defineCapability({
  name: 'widgets',
  databases: ['widgets', 'widgetDrafts'],
  records: [kWidgetRecords, kWidgetDraftRecords],
  // Declared as every capability's route is: no route number anywhere.
  routes: {
    apiListWidgets: {
      method: 'get',
      pattern: '/api/v1/widgets',
      via: 'management',
      auth: 'token',
      handler: { kind: 'read', run: () => [] },
    },
  },
});

export const kWidgetLayout = storeLayout([...kCapabilityList, kWidgets]);
