/**
 * Watch the body of a POST response (the answer to one request). When it
 * breaks off at the network level (the socket was destroyed mid-response),
 * that request would otherwise wait for its whole timeout: the SDK fails it
 * only for a JSON body, and for an event stream it can only resume one that
 * carried an event id (a priming event, SEP-1699). So a broken body is a lost
 * connection unless it is a resumable event stream, which the transport
 * resumes. Cancelling the body (our own close) is not a break.
 */
export function watchPostResponse(res: Response, onBroken: (why: string, cause: unknown) => void): Response {
  const body = res.body;
  if (!body) return res;
  const sse = (res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
  const reader = body.getReader();
  const decoder = sse ? new TextDecoder() : undefined;
  let cancelled = false;
  let resumable = false;
  // The end of the previous chunk, so an `id:` field split across chunks is still seen.
  let carry = '';
  const watched = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (!cancelled && !resumable) {
          onBroken(`the response to a request broke off: ${(err as Error)?.message ?? String(err)}`, err);
        }
        controller.error(err);
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      if (decoder && !resumable) {
        const text = carry + decoder.decode(chunk.value, { stream: true });
        // An `id:` field with a value: the stream can be resumed with Last-Event-ID.
        if (/(?:^|[\r\n])id:[ ]?[^\r\n]+[\r\n]/.test(text)) resumable = true;
        carry = text.slice(-256);
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
}
