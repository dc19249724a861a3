// A change of a flag from its page, sent with the version the page read (If-Match: the flag's ETag,
// src/flags/flag-version.ts): the state form, the variants and Unleash editors, the settings and the deletion.
import { ApiError, api, say } from './dom.js';
import type { FlagPageView } from './views.js';

/**
 * A change of the flag sent with the version the page read (If-Match): if someone changed the flag since,
 * nothing is saved (412), and the page is drawn again with the flag as it is now, saying so: null then.
 */
export async function changeFlag<T>(
  data: FlagPageView,
  method: string,
  path: string,
  body: unknown,
  reload: () => Promise<void>,
): Promise<T | null> {
  try {
    return await api<T>(method, path, body, data.etag);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 412) throw err;
    await reload();
    say(
      `${data.flag.name} was changed by someone else since this page showed it, so nothing was saved. The page now shows it as it is: check your change against it and make it again.`,
      'error',
    );
    return null;
  }
}
