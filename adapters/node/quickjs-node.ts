/**
 * The transform sandbox's QuickJS module on Node: the release build of quickjs-emscripten's
 * WebAssembly, loaded once per process on the first transform (src/transform/transform-contract.ts).
 */
import type { QuickJSWASMModule } from "quickjs-emscripten-core";
import type { LoadQuickJS } from "../../src/transform/transform-contract.ts";

let loading: Promise<QuickJSWASMModule> | undefined;

/** Loads (once) and returns the QuickJS module. */
export const loadQuickJSNode: LoadQuickJS = () => {
  loading ??= (async () => {
    const { newQuickJSWASMModuleFromVariant } = await import("quickjs-emscripten-core");
    return newQuickJSWASMModuleFromVariant(import("@jitl/quickjs-wasmfile-release-sync"));
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
};
