// The one refusal of a body that was not read (src/http/body.ts), as the Management API and the web console answer it.
import t from 'tap';
import { kErrors } from '../../src/errors.js';
import { bodyRefusal } from '../../src/http/body.js';

t.test('one wording per case, with the spec statuses', async (t) => {
  const tooLarge = bodyRefusal('tooLarge');
  t.equal(tooLarge.code, 'PAYLOAD_TOO_LARGE');
  t.equal(kErrors[tooLarge.code].status, 413);
  t.equal(tooLarge.detail, 'The request body is larger than 1048576 bytes (1 MiB); send a smaller body.');
  const busy = bodyRefusal('busy');
  t.equal(busy.code, 'SERVER_BUSY');
  t.equal(kErrors[busy.code].status, 503);
  t.match(busy.detail, /^The server is buffering as many request bodies as it allows; this body was not read and nothing was changed\./);
});
