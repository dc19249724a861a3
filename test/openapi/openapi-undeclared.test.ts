// A capability whose routes name schemas it does not declare: building the OpenAPI document fails naming
// the route and the schema (and the build runs that build: scripts/check-openapi.mjs), in-process.
import t from 'tap';
import { routeTable } from '../../src/all-routes.js';
import { kCapabilityList } from '../../src/capabilities.js';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import { kWidgets } from '../helpers/widget-capability.js';

const kInfo = { version: '0.0.0', license: 'UNLICENSED' };

t.test('a capability without its OpenAPI schemas: the document is refused, naming the route and the schema', async (t) => {
  const withWidgets = [...kCapabilityList, kWidgets];
  const { routes } = await routeTable(withWidgets);
  t.doesNotThrow(() => buildOpenApiDocument(kInfo, withWidgets, routes), 'with its schemas it builds');

  const withoutSchemas = [...kCapabilityList, { ...kWidgets, schemas: undefined }];
  const broken = await routeTable(withoutSchemas);
  t.throws(
    () => buildOpenApiDocument(kInfo, withoutSchemas, broken.routes),
    {
      message:
        /^route apiListWidgets \(GET \/api\/v1\/widgets\): its responses\.200\.content\.application\/json\.schema names an OpenAPI schema no one declares \("\{\\"type\\":\\"object\\".*\): add it to its capability's schemas$/,
    },
    'the first route naming one, where in its documentation, and the start of the schema',
  );
});

t.test('the served document of the declared capabilities builds', async (t) => {
  t.doesNotThrow(() => buildOpenApiDocument(kInfo));
});
