/**
 * The transform sandbox's QuickJS module on Workers, where WebAssembly cannot be compiled from
 * bytes at run time: the release build's `.wasm` is imported as a module (wrangler bundles it as
 * a compiled WebAssembly module) and handed to the Emscripten loader through a variant, as
 * quickjs-emscripten's examples/cloudflare-workers does. Instantiated once per isolate.
 */
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
// By file path: wrangler picks `.wasm` imports up as compiled modules by their specifier, and the
// package exports it only as `./wasm` (which vitest-pool-workers resolves but wrangler does not).
import wasmModule from "../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm";
import { withTextEncoderStrings } from "../../src/transform/text-encoder-variant.ts";
import type { LoadQuickJS } from "../../src/transform/transform-contract.ts";

// The package's CommonJS typings make the default import look like the module object; the
// bundle imports its ESM build, whose default export is the variant.
const variant = withTextEncoderStrings(newVariant(RELEASE_SYNC as unknown as QuickJSSyncVariant, { wasmModule }));
let loading: Promise<QuickJSWASMModule> | undefined;

/** Instantiates (once per isolate) and returns the QuickJS module. */
export const loadQuickJSWorker: LoadQuickJS = () => {
  loading ??= newQuickJSWASMModuleFromVariant(variant);
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
};
