/**
 * An HTTP answer's body as JSON, or null when it is not JSON (an HTML error
 * page from a proxy, an empty body): the caller parses it with a schema and
 * words a refusal from the status when the body says nothing it can use.
 */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
}
