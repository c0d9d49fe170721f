/**
 * The `transform` option of a destination (docs/transformations.md): a JavaScript module given
 * inline (`code`), read from a file next to the config (`file`, inlined by the Node loader) or a
 * built-in chat format (`builtin`), with its time and memory budget per call.
 */
import * as v from "valibot";
import { checkTransformModule } from "./module-source.ts";

/** The built-in formats (builtin-transforms.ts). */
export const BUILTIN_TRANSFORMS = ["slack", "teams", "discord"] as const;
export type BuiltinTransformName = (typeof BUILTIN_TRANSFORMS)[number];

/** Longest accepted module source, characters. */
const MAX_CODE_LENGTH = 256 * 1024;

export const TransformSchema = v.pipe(
  v.strictObject({
    /** The module's source: its default export is called as `transform(event, context)`. */
    code: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(MAX_CODE_LENGTH, "a module of at most 256 KiB"),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const problem = checkTransformModule(dataset.value);
          if (problem) addIssue({ message: `a JavaScript module with a default export (${problem})` });
        }),
      ),
    ),
    /** A module file, relative to the config file (read by the Node CLI into `code`). */
    file: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** A built-in format: `slack`, `teams` or `discord`. */
    builtin: v.optional(v.picklist(BUILTIN_TRANSFORMS, "one of slack, teams, discord")),
    /** Time one call may run, ms. Default 50, at most 1000. */
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 50),
    /** Memory one transform may use, MiB. Default 16. */
    memoryLimitMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(256)), 16),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const { code, file, builtin } = dataset.value;
    if ((code !== undefined || file !== undefined) === (builtin !== undefined)) {
      addIssue({ message: "exactly one of code, file or builtin" });
    } else if (file !== undefined && code === undefined) {
      addIssue({
        message: "a file the Node CLI reads (gateway serve --config <file>); elsewhere, put the module in code",
        path: [{ type: "object", origin: "value", input: dataset.value, key: "file", value: file }],
      });
    }
  }),
);

export type TransformConfig = v.InferOutput<typeof TransformSchema>;

/** Spread into a destination schema: its optional `transform`. */
export const TransformEntries = { transform: v.optional(TransformSchema) };

/**
 * The gateway-wide `transforms` settings (docs/transformations.md "Where transforms run"): the
 * Node worker-thread pool, the slack the host adds to a call's `timeoutMs` before it ends the
 * call from outside, and whether transforms' console lines are copied into the process log.
 */
export const TransformsSettingsSchema = v.strictObject({
  /** Worker threads running transforms on Node. Default: the CPU count minus one, 1 to 4 (1 on 2 cores). */
  workers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(32))),
  /** Milliseconds past `timeoutMs` after which the host ends a call (terminates its worker). Default 100. */
  deadlineSlackMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(10_000)), 100),
  /** V8 heap limit of each worker thread, MiB (QuickJS's own memory is bounded by `memoryLimitMb`). Default 64. */
  workerHeapMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(16), v.maxValue(4096)), 64),
  /**
   * Copy a transform's console lines into the process log when a live-stream transform fails.
   * Default false: they stay in the attempt record (at most 20 lines of 1000 characters) only.
   */
  logToProcess: v.optional(v.boolean(), false),
});

export type TransformsSettings = v.InferOutput<typeof TransformsSettingsSchema>;
