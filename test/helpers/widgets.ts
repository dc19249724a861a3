// The test-only capability (test/helpers/widget-capability.ts) in the layout a store takes when it is
// listed after the real capabilities, through the same derivation as src/capabilities.ts (storeLayout
// over the capabilities): what it proves is that a kind declared in one place is recorded, copied,
// exported and migrated (test/store/store-layout.test.ts, test/multinode/record-kinds-pg.test.ts), and
// that its route, command, command-line command, audit action and OpenAPI schema reach the tables derived
// from the list (test/capability/registry.test.ts). Apart from the capability's module, which a server
// started with FLAGWIRE_TEST_CAPABILITY loads, and which therefore cannot import src/capabilities.ts.
import { kRecordOwners } from '../../src/capabilities.js';
import { storeLayout } from '../../src/store/store-layout.js';
import { kWidgets } from './widget-capability.js';

export { kWidgetDraftRecords, kWidgetRecords, kWidgets, type Widget, WidgetBody } from './widget-capability.js';

export const kWidgetLayout = storeLayout([...kRecordOwners, kWidgets]);

/** FLAGWIRE_TEST_CAPABILITY's value for a process that runs with the widgets (src/capabilities.ts). */
export const kWidgetsModule = new URL('./widget-capability.js', import.meta.url).href;
