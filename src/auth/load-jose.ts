/**
 * jose, loaded on the first JWT the gateway verifies or signs: a gateway whose clients use API
 * keys only never holds it (about 1 MB of heap).
 */
let loading: Promise<typeof import("jose")> | undefined;

/** Loads (once) and returns the jose module. */
export function loadJose(): Promise<typeof import("jose")> {
  loading ??= import("jose");
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
