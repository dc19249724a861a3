// A capability that exists only in tests, with kinds of record of its own (one with lookups, hanging off
// flags) and a Management API route:
// the layout a store takes when it is listed after the real capabilities, through the same derivation
// as src/capabilities.ts (storeLayout over the capabilities), and the route table (routeTable,
// src/all-routes.ts). Nothing else in Flagwire knows it: what it proves is that a kind declared in one
// place is recorded, copied, exported and migrated (test/store/store-layout.test.ts,
// test/multinode/record-kinds-pg.test.ts), and that a route declared in one place is numbered and
// labelled for the metrics, and its command, command-line command, audit action and OpenAPI schema reach
// the tables derived from the list (test/capabilities/registry.test.ts).
import { kCapabilityList } from '../../src/capabilities.js';
import { command } from '../../src/cli-command/cli-command.js';
import type { StoreWriter } from '../../src/store/interfaces.js';
import { Type } from '../../src/typebox.js';
import { commandTable } from '../../src/writer/command.js';
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

/** A widget made: its one writer command. */
function widgetCreate(w: StoreWriter, input: Widget): Widget {
  w.putKeyed(kWidgetRecords, input);
  return input;
}

const kWidgetCommands = commandTable({ widgetCreate });

/** A widget as its route and the OpenAPI document say it. */
export const WidgetBody = Type.Object({
  id: Type.String(),
  orgId: Type.String(),
  size: Type.Number(),
  flagId: Type.Optional(Type.String()),
});

export const kWidgets = defineCapability({
  name: 'widgets',
  databases: ['widgets', 'widgetDrafts'],
  records: [kWidgetRecords, kWidgetDraftRecords],
  commands: kWidgetCommands,
  cli: [
    command({
      name: 'widget list',
      usage: 'widget list',
      summary: 'every widget -> {widgets}',
      positionals: [],
      options: {},
      run: (_args, ctx) => ctx.read((r) => ({ widgets: r.listKeyed(kWidgetRecords) })),
      human: (result: { widgets: Widget[] }) => result.widgets.map((w) => `${w.id} ${w.size}`).join('\n'),
    }),
  ],
  schemas: { Widget: WidgetBody },
  auditActions: ['widget.create'],
  webhookEvent: 'flag',
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
