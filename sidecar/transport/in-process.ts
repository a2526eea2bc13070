// The service called in this process: a connect Transport for an edge that runs beside the sidecar (`npm start` on
// Node), with no socket, no HTTP and no protobuf encoding between them.
import { clone, create, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createHandlerContext,
  type ContextValues,
  type HandlerContext,
  type ServiceImpl,
  type Transport,
} from "@connectrpc/connect";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";

type Impl = ServiceImpl<typeof InferenceService>;
type Handler = (request: unknown, context: HandlerContext) => unknown;
type Controller = ReturnType<typeof createHandlerContext>;

/** The call's context as a handler on a port would get it: the caller's signal, deadline and headers, the shutdown. */
function contextFor(
  method: DescMethod,
  shutdown: AbortSignal,
  call: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined; header?: HeadersInit | undefined },
  contextValues: ContextValues | undefined,
): Controller {
  return createHandlerContext({
    service: InferenceService,
    method,
    protocolName: "in-process",
    requestMethod: "POST",
    url: `/${InferenceService.typeName}/${method.name}`,
    shutdownSignal: shutdown,
    ...(call.signal === undefined ? {} : { requestSignal: call.signal }),
    ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
    ...(call.header === undefined ? {} : { requestHeader: call.header }),
    ...(contextValues === undefined ? {} : { contextValues }),
  });
}

/** Rejects once the call's signal aborts (the caller left, its deadline passed, or the sidecar shut down). */
function abortedOf(context: Controller): Promise<never> {
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(ConnectError.from(context.signal.reason, Code.Canceled));
    if (context.signal.aborted) fail();
    else context.signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => undefined);
  return aborted;
}

/**
 * A server stream's messages as its caller reads them: each one whole (`create`), an error as a ConnectError, and the
 * handler's signal aborted when the caller stops reading early or aborts (what a closed connection does on a port).
 */
function relay<O extends DescMessage>(output: O, source: AsyncIterable<unknown>, context: Controller) {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      const aborted = abortedOf(context);
      const leave = () => {
        context.abort(new ConnectError("the caller left", Code.Canceled));
        void it.return?.()?.catch(() => undefined);
      };
      return {
        async next() {
          try {
            // A call aborted between two reads ends as Canceled, whatever the handler would still send.
            const step = await Promise.race([aborted, it.next()]);
            return step.done === true ? step : { done: false as const, value: create(output, step.value as never) };
          } catch (error) {
            leave();
            throw ConnectError.from(error);
          }
        },
        async return() {
          leave();
          return { done: true as const, value: undefined };
        },
      };
    },
  };
}

/** A call's answer as a transport gives it: the message (or the stream's messages), the handler's headers. */
function answer(method: DescMethod, context: Controller, stream: boolean, message: unknown) {
  const { responseHeader: header, responseTrailer: trailer } = context;
  return { stream, service: InferenceService, method, header, message, trailer };
}

/**
 * A Transport that calls `impl` directly. The request is cloned, so the handler never shares an object with its caller;
 * replies are passed as they are made. Calls end on the caller's signal, their deadline and `shutdown`, as on a port.
 */
export function inProcessTransport(impl: Impl, shutdown: AbortSignal): Transport {
  const handlers = impl as unknown as Record<string, Handler>;
  const handlerOf = (method: DescMethod): Handler => {
    const handler = handlers[method.localName];
    if (handler === undefined) throw new ConnectError(`${method.name} is not implemented`, Code.Unimplemented);
    return handler.bind(impl);
  };
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      const context = contextFor(method, shutdown, { signal, timeoutMs, header }, contextValues);
      const request = clone(method.input, create(method.input, input));
      try {
        const reply = await Promise.race([abortedOf(context), Promise.resolve(handlerOf(method)(request, context))]);
        return answer(method, context, false, create(method.output, reply as never)) as never;
      } catch (error) {
        throw ConnectError.from(error);
      }
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      const context = contextFor(method, shutdown, { signal, timeoutMs, header }, contextValues);
      if (method.methodKind !== "server_streaming")
        throw new ConnectError(`${method.name} is not a server stream`, Code.Unimplemented);
      let first: unknown;
      for await (const message of input) {
        first = message;
        break;
      }
      const request = clone(method.input, create(method.input, first as never));
      const source = handlerOf(method)(request, context) as AsyncIterable<unknown>;
      return answer(method, context, true, relay(method.output, source, context)) as never;
    },
  };
}
