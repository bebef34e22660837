/**
 * One GraphQL request over HTTP once the HTTP policy has let it through, whatever engine carries it
 * (engine.ts): decoded, run against the service with the deadline, answered once: 400 for a body or
 * variables that do not decode, 504 past the timeout, the service's answer otherwise.
 */
import { Logger } from '../../shared/util/log.js';
import type { GraphqlReply, GraphqlRequest, GraphqlService } from './execute.js';
import { RequestDecodeError } from './http-request.js';

const log = new Logger('GraphQLHttp');

export const GRAPHQL_JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Writes the answer (JSON when there is a body); the engine ignores any call after the first. */
export type GraphqlReplyWriter = (status: number, body: string | undefined) => void;

/** `3 actor requests (chain.blocks 1, chain.accounts 1, chain.receipts 1)`. */
function describeRequests(requests: ReadonlyMap<string, number>): string {
  let total = 0;
  for (const count of requests.values()) total += count;
  const kinds = [...requests].map(([kind, count]) => `${kind} ${count}`).join(', ');
  return `${total} actor request${total === 1 ? '' : 's'}${kinds === '' ? '' : ` (${kinds})`}`;
}

export function answerGraphql(service: GraphqlService, timeoutMs: number, read: () => GraphqlRequest, reply: GraphqlReplyWriter): void {
  let request: GraphqlRequest;
  try {
    request = read();
  } catch (err) {
    if (!(err instanceof RequestDecodeError)) throw err;
    reply(400, JSON.stringify({ result: err.message }));
    return;
  }
  const deadline = Date.now() + timeoutMs;
  const timer = setTimeout(() => reply(504, undefined), timeoutMs);
  service
    .run(request, deadline)
    .then(
      (answer: GraphqlReply) => {
        reply(answer.status, answer.body);
        log.debug(`GraphQL query answered ${answer.status} after ${describeRequests(answer.actorRequests)}`);
      },
      (err: unknown) => {
        log.error('GraphQL request failed', err);
        reply(500, JSON.stringify({ errors: [{ message: err instanceof Error ? err.message : String(err) }] }));
      },
    )
    .finally(() => clearTimeout(timer));
}
