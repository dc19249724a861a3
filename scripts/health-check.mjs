// Exits 0 when the server on this machine answers GET /health with 200, else 1: the image's health check
// (scripts/image.sh), for a runtime that runs a command rather than asking over HTTP. Reads the port as
// the server does (FLAGWIRE_PORT, 8080 by default).
const port = process.env.FLAGWIRE_PORT || '8080';
try {
  const answer = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(3000) });
  process.exitCode = answer.ok ? 0 : 1;
} catch {
  process.exitCode = 1;
}
