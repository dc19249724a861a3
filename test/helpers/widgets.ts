// A capability that exists only in tests, with kinds of record of its own: the layout a store takes
// when it is listed after the real capabilities, through the same derivation as src/capabilities.ts
// (storeLayout over the capabilities). Nothing else in Flagwire knows it: what it proves is that a
// kind declared in one place is recorded, copied, exported and migrated (test/store/store-layout.test.ts,
// test/multinode/record-kinds-pg.test.ts).
import { kCapabilityList } from '../../src/capabilities.js';
import { defineCapability } from '../../src/capability/capability.js';
import { keyedRecords } from '../../src/store/record-kinds.js';
import { storeLayout } from '../../src/store/store-layout.js';

export interface Widget {
  id: string;
  orgId: string;
  size: number;
}

/** Widgets, in a database of their own, keyed by id; sent to relays. */
export const kWidgetRecords = keyedRecords<Widget>()({ name: 'widget', database: 'widgets', relayed: true, key: (w) => w.id });
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
});

export const kWidgetLayout = storeLayout([...kCapabilityList, kWidgets]);
