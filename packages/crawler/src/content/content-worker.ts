// The thread side of ContentPool: builds skills' content (parse, token counts) and runs safety scans, the
// CPU-heavy part of a crawl, away from the event loop that drives git, REST and the database.
import { parentPort } from 'node:worker_threads';
import { scanSkillContent, skillContent } from '@atskills/protocol/content';
import type { ContentRequest, ContentResponse } from './content-pool.js';

const port = parentPort;
if (!port) throw new Error('content-worker runs as a worker thread of ContentPool');

port.on('message', (request: ContentRequest) => {
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
  port.postMessage(response);
});
