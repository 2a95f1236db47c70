// Relax Rollout Viewer: asking the server for JSON, the same way everywhere: same-origin
// credentials, `Accept: application/json`, a body as JSON for a POST. Every URL comes from the
// page (a data-* attribute the server rendered), never spelled here.

// A promise of {ok, status, body}; body is {} when the answer is not JSON (a proxy's page).
// `options`: {body (POSTed as JSON), signal, cache}.
export function requestJson(url, options = {}) {
  const init = { credentials: "same-origin", headers: { Accept: "application/json" } };
  if (options.body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  if (options.signal) init.signal = options.signal;
  if (options.cache) init.cache = options.cache;
  return fetch(url, init).then((response) =>
    response
      .json()
      .catch(() => ({}))
      .then((body) => ({ ok: response.ok, status: response.status, body })),
  );
}

// The answer's body; an error answer rejects with the server's message (the JSON error shape's
// `message`), or with its status when it has none.
export function getJson(url, options) {
  return requestJson(url, options).then((answer) => {
    if (!answer.ok) throw new Error(errorText(answer));
    return answer.body;
  });
}

export function errorText(answer) {
  return answer.body.message || `the server answered ${answer.status}`;
}
