/**
 * A QuickJS build variant whose strings go into WebAssembly memory through `TextEncoder` rather
 * than Emscripten's per-character JavaScript loop, and come back without a per-byte scan for
 * their end: every event handed to the sandbox (on every delivery) and every result crosses so.
 * Runtime-agnostic (TextEncoder is a Web standard); the adapters wrap the variant they load.
 */
import type { QuickJSEmscriptenModule, QuickJSSyncVariant } from "quickjs-emscripten-core";

type ModuleLoader = (options?: unknown) => Promise<QuickJSEmscriptenModule>;

/** `variant` with its module's `lengthBytesUTF8` and `stringToUTF8` done by `TextEncoder`. */
export function withTextEncoderStrings(variant: QuickJSSyncVariant): QuickJSSyncVariant {
  return {
    ...variant,
    async importModuleLoader() {
      const load = unwrapLoader(await variant.importModuleLoader());
      const patched: ModuleLoader = async (options) => useTextEncoder(await load(options));
      return patched as unknown as Awaited<ReturnType<QuickJSSyncVariant["importModuleLoader"]>>;
    },
  };
}

/** The loader inside an ES module namespace or a CommonJS interop object, as quickjs-emscripten accepts. */
function unwrapLoader(imported: unknown): ModuleLoader {
  let value = imported;
  while (typeof value === "object" && value !== null && "default" in value) value = value.default;
  if (typeof value !== "function") throw new Error("the QuickJS variant has no module loader");
  return value as ModuleLoader;
}

/** Strings up to this many UTF-16 units are encoded into one reused buffer (3 bytes a unit at most). */
const SCRATCH_UNITS = 1 << 18;

/**
 * quickjs-emscripten copies a string as `lengthBytesUTF8(s)`, `malloc`, `stringToUTF8(s, ptr,
 * size)`: the length call encodes once (into a reused buffer, no allocation per string) and the
 * copy reuses those bytes when it is the same string. JSON text (all the sandbox is given) has no
 * lone surrogates, the one case where TextEncoder (U+FFFD) and Emscripten (WTF-8) differ; both
 * take three bytes for one, so lengths still agree.
 */
function useTextEncoder(module: QuickJSEmscriptenModule): QuickJSEmscriptenModule {
  const encoder = new TextEncoder();
  let scratch = new Uint8Array(4096);
  let lastString: string | undefined;
  let lastBytes: Uint8Array = scratch.subarray(0, 0);
  const encode = (text: string): Uint8Array => {
    if (text === lastString) return lastBytes;
    if (text.length > SCRATCH_UNITS) return encoder.encode(text);
    if (text.length * 3 > scratch.length) scratch = new Uint8Array(Math.max(text.length * 3, scratch.length * 2));
    return scratch.subarray(0, encoder.encodeInto(text, scratch).written);
  };
  module.lengthBytesUTF8 = (text: string) => {
    lastBytes = encode(text);
    lastString = text;
    return lastBytes.length;
  };
  // Results come back the other way: find the terminating NUL natively (Emscripten scans for it
  // byte by byte in JavaScript), then decode with TextDecoder as Emscripten does.
  const decoder = new TextDecoder();
  module.UTF8ToString = (pointer: number, maxBytes?: number) => {
    if (!pointer) return "";
    const heap = module.HEAPU8;
    const text = heap.subarray(pointer, maxBytes === undefined ? heap.length : pointer + maxBytes);
    const nul = text.indexOf(0);
    return decoder.decode(nul === -1 ? text : text.subarray(0, nul));
  };
  module.stringToUTF8 = (text: string, pointer: number, maxBytes?: number) => {
    const bytes = encode(text);
    lastString = undefined;
    if (maxBytes !== undefined && maxBytes <= 0) return;
    const length = maxBytes === undefined ? bytes.length : Math.min(bytes.length, maxBytes - 1);
    const heap = module.HEAPU8;
    heap.set(length === bytes.length ? bytes : bytes.subarray(0, length), pointer);
    heap[pointer + length] = 0;
  };
  return module;
}
