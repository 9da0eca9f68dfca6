/** `GET /openapi.json`: the document of the routes this transport serves, built at start. */
import { writeError, writeJson } from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { exchangeEndpoint } from './exchange-endpoint.js';
import type { HttpRouteContext } from './json-endpoint.js';
import { OPENAPI_PATH } from './openapi-task-routes.js';
import type { OpenApiDocument } from './openapi-types.js';

/** The endpoint; `document()` is asked at each request (the transport keeps the one of this start). */
export function openapiEndpoint(
  context: HttpRouteContext,
  publicDocument: boolean,
  document: () => OpenApiDocument,
): HttpEndpoint {
  return exchangeEndpoint(
    {
      method: 'GET',
      path: OPENAPI_PATH,
      operation: 'get_openapi',
      authenticate: !publicDocument,
      refuse: (res, error) => writeError(res, error),
      serve: (_call, { res }) => writeJson(res, 200, document()),
    },
    context,
  );
}
