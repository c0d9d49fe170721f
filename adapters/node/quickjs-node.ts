/**
 * The transform sandbox's QuickJS module on Node: the release build of quickjs-emscripten's
 * WebAssembly, loaded once per process on the first transform (src/transform/transform-contract.ts),
 * with strings copied in by TextEncoder (src/transform/text-encoder-variant.ts).
 */
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";
import { withTextEncoderStrings } from "../../src/transform/text-encoder-variant.ts";
import type { LoadQuickJS } from "../../src/transform/transform-contract.ts";

let loading: Promise<QuickJSWASMModule> | undefined;

/** Loads (once) and returns the QuickJS module. */
export const loadQuickJSNode: LoadQuickJS = () => {
  loading ??= (async () => {
    const { newQuickJSWASMModuleFromVariant } = await import("quickjs-emscripten-core");
    // The package's CommonJS typings describe the module object; its ESM build (what Node and tsx
    // load here) has the variant as its default export.
    const { default: releaseSync } = await import("@jitl/quickjs-wasmfile-release-sync");
    return newQuickJSWASMModuleFromVariant(withTextEncoderStrings(releaseSync as unknown as QuickJSSyncVariant));
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
};
