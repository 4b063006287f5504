// The child-process side of ContentPool: builds skills' content (parse, token counts) and runs safety
// scans, the CPU-heavy part of a crawl, away from the event loop that drives git, REST and the database.
import { scanSkillContent, skillContent } from '@atskills/protocol/content';
import type { ContentRequest, ContentResponse } from './content-pool.js';

const send = process.send?.bind(process);
if (!send) throw new Error('content-worker runs as a child process of ContentPool (with an IPC channel)');
// The crawler is gone (or closed the pool): nothing more will come.
process.on('disconnect', () => process.exit(0));

process.on('message', (request: ContentRequest) => {
  let response: ContentResponse;
  try {
    response =
      request.kind === 'content'
        ? {
            id: request.id,
            ok: true,
            result: request.inputs.map((input) => skillContent(input, { scan: false })),
          }
        : { id: request.id, ok: true, result: request.contents.map((content) => scanSkillContent(content)) };
  } catch (error) {
    response = { id: request.id, ok: false, message: (error as Error).message ?? String(error) };
  }
  send(response);
});
