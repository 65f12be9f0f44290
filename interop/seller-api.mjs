// The seller routes as a seller's script calls them: JSON in and out, the key as a bearer
// token, and any answer that is not a 2xx thrown with its body.
export const sellerApi = (base, key) => async (method, path, body) => {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
};
