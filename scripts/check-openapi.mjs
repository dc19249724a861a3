// Builds the OpenAPI document from the compiled route declarations, in `npm run build` after the main
// tsc: a route naming a schema no capability declares (src/openapi/document.ts) fails the build with the
// route and the schema named, rather than the first request for /api/v1/openapi.json on a server.
// test/openapi/openapi.test.ts builds it in-process with a capability that lacks its schemas.
const { buildOpenApiDocument } = await import('../dist/src/openapi/document.js');
try {
  buildOpenApiDocument({ version: '0.0.0', license: 'UNLICENSED' });
} catch (err) {
  console.error(`check-openapi: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
